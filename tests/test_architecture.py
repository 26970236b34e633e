"""The import graph of `vocabrisk/`: no cycles, and every edge points down the layers of the data flow.

Read from the source with `ast`, so imports inside functions and `TYPE_CHECKING` blocks count
too (they are dependencies even when they run late or never). `from pkg import name` is an
edge to `pkg.name` when that is a module, else to `pkg` (its `__init__`).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "vocabrisk"

# Low to high: the packages of the data flow, corpus -> counts -> profile -> risk -> report/gate. A module may
# import from its own layer or any layer below, never above. A name ending in ".*" covers a package and its
# submodules; an exact name wins over a wildcard.
LAYERS: list[tuple[str, list[str]]] = [
    ("base: errors, and the files vocabrisk writes", ["_version", "errors", "storage", "storage.*"]),
    ("corpus: reading inputs, and what was skipped", ["corpus", "corpus.*"]),
    ("model: its files, tokenizer, vocabulary facts, head, and the priors they give", ["model", "model.*"]),
    ("counting: a tokenizer's exact counts, and where counting runs", ["counting", "counting.*"]),
    ("prior: how much the base model relies on each token, and its old text", ["prior", "prior.*"]),
    ("profile: counts and prior assembled, saved and loaded", ["profile", "profile.*"]),
    ("risk: the plan, exposure, the forecast and its calibration, the summary", ["risk", "risk.*"]),
    ("decisions", ["advice", "compare", "gate"]),
    ("reports", ["report", "report.*"]),
    (
        "the torch-backed checks, and the integrations with other tools",
        ["verify", "verify.*", "integrations", "integrations.*"],
    ),
    ("entry points", ["cli", "cli.*", ""]),  # "" is the package itself: `vocabrisk/__init__.py`
]


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name, relative to `vocabrisk` ("" for the package)."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The modules of the package that `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {_module(alias.name, modules) for alias in node.names if _ours(alias.name)}
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, package)
            if _ours(source):
                found |= {_module(f"{source}.{alias.name}", modules) for alias in node.names}
    return found - {name}


def _ours(dotted: str) -> bool:
    return dotted == "vocabrisk" or dotted.startswith("vocabrisk.")


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The dotted module a `from ... import` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = ["vocabrisk", *(package.split(".") if package else [])]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def _module(dotted: str, modules: set[str]) -> str:
    """The module a dotted name lands in: the longest prefix that is one (`pkg.name` -> `pkg`)."""
    parts = dotted.split(".")[1:]
    while ".".join(parts) not in modules:
        assert parts, f"an import of something that is no module of vocabrisk: {dotted}"
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def layer_of(name: str) -> int:
    for index, (_, members) in enumerate(LAYERS):
        if name in members:
            return index
    for index, (_, members) in enumerate(LAYERS):
        if any(m.endswith(".*") and name.startswith(m[:-1]) for m in members):
            return index
    raise AssertionError(f"vocabrisk.{name} is in no layer: add it to LAYERS where the data flow puts it")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _show(name: str) -> str:
    return f"vocabrisk.{name}" if name else "vocabrisk"


def test_the_graph_sees_every_kind_of_import(tmp_path):
    module = tmp_path / "reader.py"  # read as if it were vocabrisk/corpus/reader.py
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "import vocabrisk.corpus.text\n"
        "from vocabrisk.corpus import ReadOptions, datatypes\n"
        "from . import positions\n"
        "from ..counting.pieces import PieceCounter\n"
        "if TYPE_CHECKING:\n"
        "    from vocabrisk.corpus.skips import SkipTally\n"
        "def later():\n"
        "    from vocabrisk.counting.executors.work import CountJob\n"
    )
    assert imports_of("corpus.reader", module, set(module_names())) == {
        "corpus.text",
        "corpus",  # ReadOptions: a name of the package's __init__
        "corpus.datatypes",  # a submodule: an edge to it alone
        "corpus.positions",
        "counting.pieces",
        "corpus.skips",
        "counting.executors.work",
    }


def test_every_module_has_a_layer_and_every_layer_entry_names_modules():
    modules = set(module_names())
    for name in modules:
        layer_of(name)
    for title, members in LAYERS:
        for member in members:
            matched = member in modules or (member.endswith(".*") and any(m.startswith(member[:-1]) for m in modules))
            assert matched, f"layer {title!r} lists {member!r}, which is no module of vocabrisk"


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(map(_show, c)) for c in found)


def test_no_upward_imports():
    upward = [
        f"{_show(name)} ({LAYERS[layer_of(name)][0]}) imports {_show(target)} ({LAYERS[layer_of(target)][0]})"
        for name, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(name)
    ]
    assert not upward, "imports against the data flow:\n" + "\n".join(upward)


def test_the_top_of_the_package_holds_only_the_stages_and_the_exported_verbs():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert modules == {"__init__", "_version", "errors", "advice", "compare", "gate"}
    assert packages == {stage for _, members in LAYERS for stage in members if "." not in stage and stage} - modules
