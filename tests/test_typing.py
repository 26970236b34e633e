"""The package is typed: editors and type checkers see every name of its lazily loaded API with its type.

`vocabrisk/__init__.py` imports its names on first use (PEP 562) and says the same names under
`TYPE_CHECKING`; `py.typed` marks the package as typed; mypy checks the public API with the configuration
in pyproject.toml (`[tool.mypy]`), which includes `tests/typing/public_api.py`, the README's calls with
`assert_type` on what they return.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import vocabrisk

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mypy", reason="the type check runs mypy")


def mypy(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mypy", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_names_type_checkers_see_are_the_names_loaded_on_first_use():
    tree = ast.parse((ROOT / "vocabrisk" / "__init__.py").read_text(encoding="utf-8"))
    (block,) = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    seen = {alias.asname: node.module for node in block.body for alias in node.names}
    assert all(alias.name == alias.asname for node in block.body for alias in node.names)  # explicit re-exports
    assert seen == vocabrisk._EXPORTS


def test_the_package_is_marked_typed():
    assert (ROOT / "vocabrisk" / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"py.typed"' in pyproject.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]


def test_the_public_api_type_checks_with_the_readme_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Types\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    install, command = block.split("#")[0].strip().split(" && ")
    assert install == "pip install -e '.[test]'"  # this environment: the test extra holds mypy
    done = mypy(*command.split()[1:])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout


def test_a_wrong_call_is_caught_which_it_would_not_be_were_the_names_any(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import vocabrisk\nvocabrisk.Profile.load(3)\nvocabrisk.scan(['x'], model=4)\n")
    done = mypy(str(wrong))
    assert done.returncode == 1, done.stdout + done.stderr
    assert 'Argument 1 to "load" of "Profile" has incompatible type "int"' in done.stdout
    assert 'Argument "model" to "scan" has incompatible type "int"' in done.stdout
