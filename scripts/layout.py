"""The README's "Layout" block, made from the tree: each stage's package and docstring, in the order of the flow.

    python scripts/layout.py            # print the block
    python scripts/layout.py --write    # replace it in README.md

The order is the layer list of `tests/test_architecture.py`; each entry is the first sentence of the
package's (or module's) docstring, and a package's modules follow in one line. `tests/test_readme.py`
fails when the README's block is not what this prints.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vocabrisk"
README = ROOT / "README.md"
START = "<!-- layout: made by scripts/layout.py from the tree; edit the docstrings, not this -->"
END = "<!-- /layout -->"
WIDTH = 110


def _first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    return paragraph.rstrip(".")


def _stages() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_architecture import LAYERS

    return [member for _, members in LAYERS for member in members if member and "." not in member]


def block() -> str:
    lines = ["    vocabrisk/"]
    for stage in _stages():
        folder = PACKAGE / stage
        if folder.is_dir():
            name, path = f"{stage}/", folder / "__init__.py"
            modules = sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("__"))
            modules += sorted(f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file())
        else:
            name, path, modules = f"{stage}.py", PACKAGE / f"{stage}.py", []
        if stage == "_version":
            continue
        text = _first_sentence(path) + (f" ({', '.join(modules)})" if modules else "")
        wrapped = textwrap.wrap(text, WIDTH - 21)
        lines.append(f"      {name:<15}{wrapped[0]}")
        lines += [f"      {'':<15}{rest}" for rest in wrapped[1:]]
    lines.append(f"      {'demo_model/':<15}the built-in demo model (see docs/DEMO.md)")
    return "\n".join(lines)


def readme_with_block(readme: str) -> str:
    before, _, rest = readme.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}\n\n{block()}\n\n{END}{after}"


if __name__ == "__main__":
    if "--write" in sys.argv:
        README.write_text(readme_with_block(README.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(block())
