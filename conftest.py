"""Doctests: `python -m pytest` also runs the examples in vocabrisk's docstrings (`--doctest-modules`).

Modules of the optional `verify` extra import torch at the top; where it is not installed, their
docstrings are not collected (CI's torch environment runs them).
"""

import importlib.util

collect_ignore_glob = []
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob += ["vocabrisk/verify/*.py", "vocabrisk/integrations.py"]
