"""How forgetting grows with the plan's passes over a corpus (docs/validity/v5/PROTOCOL-epochs.md): design runs.

    python benchmarks/validity/epochs.py   # -> docs/validity/v5/epochs/results.txt

Two of pool H's sources at 1, 2, 3, 5 and 10 epochs (1 and 10 are pool H's runs, 2, 3 and 5 the v5-epochs
suite's): per source and old text, the measured total and body (total - head-only) at each E over their value
at 1 epoch, beside what each repetition shape says for the body: ln(1+E)/ln 2 (the same as ln(1+max(1,E))/ln 2
from one epoch up), ln(1+R)/ln(1+R₁) with R each run's 3-gram repetition (v5's), √E and E. Seen sources:
design, never a result.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import forms
import score
import suite_v2 as v2
import suite_v5_epochs as suite
from design import Transcript

HOME = data.REPO / "docs" / "validity" / "v5" / "epochs"


def runs(log) -> dict[str, score.Runs]:
    """Pool H's runs and the v5-epochs suite's."""
    folder = suite.OUT
    records = list(score.read_log(HOME / "smollm2-runs.jsonl"))
    epochs = score.Runs(log, folder, json.loads((folder / "suite.json").read_text()), records, lambda r: True,
                        source=HOME / "smollm2-runs.jsonl", model=str(v2.smollm2_gguf()), split="design",
                        probes=score.v3_probes())  # fmt: skip
    return {"H": score.Runs.v4_pool(log, "H"), "epochs": epochs}


def _main() -> int:
    from vocabrisk.risk.calibration import Calibration
    from vocabrisk.risk.summary import Summary

    say = Transcript()
    sets = runs(print)
    say("# Output of benchmarks/validity/epochs.py: design runs (docs/validity/v5/PROTOCOL-epochs.md)")
    say("# measured total and body at E over their 1-epoch values (pool H's mean of two seeds), and each shape's ratio")
    for source in suite.SOURCES:
        points = [
            ("H", f"{source}:1ep"),
            *(("epochs", f"{source}:{k:g}ep") for k in suite.EPOCHS),
            ("H", f"{source}:10ep"),
        ]
        for old in ("wiki", "code"):
            say()
            say(f"{source}, old text {old}:")
            say(f"{'run':>28} {'E':>5} {'seeds':>5} {'total':>7} {'body':>7} {'×total':>7} {'×body':>7} "
                f"{'ln(1+E)':>8} {'ln(1+R)':>8} {'√E':>6} {'E':>6}")  # fmt: skip
            first = None
            for label, name in points:
                r = sets[label]
                e = r.info[name]["epochs"]
                total = r.value(name, "A", old, "total")
                body = total - r.value(name, "A", old, "head_only")
                rep = Summary.of(r.profiles[name, old], r.plans["A"], Calibration()).forecast.terms.repeats
                row = (e, total, body, rep)
                first = first or row
                say(f"{name:>28} {e:>5.2f} {len(r.records(name, 'A')):>5} {total:>+7.3f} {body:>+7.3f} "
                    f"{total / first[1]:>7.2f} {body / first[2]:>7.2f} "
                    f"{math.log1p(max(1.0, e)) / math.log1p(max(1.0, first[0])):>8.2f} "
                    f"{math.log1p(rep) / math.log1p(first[3]):>8.2f} {math.sqrt(e / first[0]):>6.2f} "
                    f"{e / first[0]:>6.2f}")  # fmt: skip
    say.write(HOME / "results.txt")
    return 0


def main() -> int:
    """As it ran, on v5's forecast (`forms.as_v5`: the v6 library with v5's body term put back)."""
    with forms.as_v5():
        return _main()


if __name__ == "__main__":
    sys.exit(main())
