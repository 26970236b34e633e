"""v4's fresh held-out set: the 11 sources of pool F (`pool_f.py`), none of which anything here has read.

    python benchmarks/validity/pool_f.py             # the corpora, from their packages
    python benchmarks/validity/suite_v4_pool_f.py    # -> benchmarks/.cache/forecast/v4-pool-f/

The protocol is docs/validity/v4/PROTOCOL-pool-f.md, committed before this suite was built. The
recipe is v4's (`suite_v4.build`: the same old texts, plan A with its curve checkpoints, the same
cut of each source); only the sources are new. Every source at one epoch, and two of them at ten
(the repetition the forecast under-forecast on v4's whitman), in an order that keeps the kinds
mixed, so that a sweep cut short still holds every kind.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_f
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as v4

OUT = v2.CACHE / "v4-pool-f"
ORDER = (
    "ko-kobill-law",
    "code-go-net-http",
    "en-debian-docs",
    "ru-fortunes",
    "code-rust-regex",
    "th-words",
    "es-fortunes",
    "elisp-markdown-mode",
    "zh-fortunes-poetry",
    "code-perl-modules",
    "json-iso-3166-2",
)
REPEATED = ("en-debian-docs", "code-go-net-http")  # at ten epochs too
RECIPES = {
    **{f"{source}:1ep": ("slice", (source,), 1.0) for source in ORDER},
    **{f"{source}:10ep": ("slice", (source,), 10.0) for source in REPEATED},
}


def jobs() -> list[dict]:
    return [{"run": name, "regime": "A", "seed": 0} for name in RECIPES]


def main() -> int:
    missing = [name for name in ORDER if not (pool_f.OUT / name / f"{name}.txt").is_file()]
    if missing or not v3.CORPORA.is_dir():
        print(f"pool F suite: needs {v3.CORPORA} and pool F ({', '.join(missing)} missing: run pool_f.py first)")
        return 2
    v3.FOLDERS.update({name: pool_f.OUT / name for name in ORDER})
    v4.build(lambda message: print(message, flush=True), recipes=RECIPES, replays={}, out=OUT, job_list=jobs(),
             heldout=ORDER)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
