"""A design experiment's suite (docs/validity/v5/PROTOCOL-epochs.md): two of pool H's sources at 2, 3, 5 epochs.

    python benchmarks/validity/pools.py H && python benchmarks/validity/suite_v5_epochs.py
    python benchmarks/validity/runner.py --suite benchmarks/.cache/forecast/v5-epochs \
        --out docs/validity/v5/epochs --device cpu

Pool H's recipe (`suite_v4.build`), seed 0 of each run; the 1- and 10-epoch points are pool H's own runs. Pool H
is seen (scored once), so these are design runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pools
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as v4

SOURCES = ("en-jargon", "code-scheme-guile")
EPOCHS = (2.0, 3.0, 5.0)
OUT = v2.CACHE / "v5-epochs"


def main() -> int:
    texts, _ = pools.POOLS["H"]
    missing = [name for name in SOURCES if not (texts / name / f"{name}.txt").is_file()]
    if missing or not v3.CORPORA.is_dir():
        print(f"v5-epochs suite: needs {v3.CORPORA} and pool H ({', '.join(missing)} missing: run pools.py H first)")
        return 2
    v3.FOLDERS.update({name: texts / name for name in SOURCES})
    recipes = {f"{s}:{k:g}ep": ("slice", (s,), k) for s in SOURCES for k in EPOCHS}
    jobs = [{"run": name, "regime": "A", "seed": 0} for name in recipes]
    v4.build(lambda message: print(message, flush=True), recipes=recipes, replays={}, out=OUT, job_list=jobs,
             heldout=SOURCES)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
