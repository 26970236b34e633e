"""The walkthrough notebook runs top to bottom, so it never rots (needs the `verify` and `notebook` extras)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "walkthrough.ipynb"
for module in ("torch", "transformers", "matplotlib", "nbformat", "nbclient", "ipykernel"):
    pytest.importorskip(module, reason=f"the walkthrough needs {module}: pip install -e '.[verify,notebook]'")


def test_walkthrough_notebook_runs_and_trains_a_step_with_the_advised_head_eps():
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    resources = {"metadata": {"path": str(NOTEBOOK.parent)}}
    NotebookClient(notebook, kernel_name="python3", timeout=120, resources=resources).execute()
    printed = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "stream"
    )
    eps = printed.split("head-only Adam eps: ")[1].split()[0]
    head_group = next(line for line in printed.splitlines() if line.startswith("head ") and "parameters" in line)
    assert head_group.endswith(f"eps {eps}"), "the head's parameter group carries the advised epsilon"
    assert "one step taken" in printed
    drifts = [line for line in printed.splitlines() if "starved rows drifted" in line]
    assert [line.split()[1] for line in drifts] == ["2", "4", "6", "8", "10"]
    svgs = [o for cell in notebook.cells for o in cell.get("outputs", []) if "image/svg+xml" in o.get("data", {})]
    assert len(svgs) == 3
