"""v4's fresh held-out set: the 11 sources of pool F (`pool_f.py`), none of which anything here has read.

    python benchmarks/validity/pool_f.py             # the corpora, from their packages
    python benchmarks/validity/suite_v4_pool_f.py    # -> benchmarks/.cache/forecast/v4-pool-f/
    python benchmarks/validity/suite_v4_pool_f.py --supplement   # -> .../v4-pool-f-more/ (amendment 1)

The protocol is docs/validity/v4/PROTOCOL-pool-f.md, committed before this suite was built. The
recipe is v4's (`suite_v4.build`: the same old texts, plan A with its curve checkpoints, the same
cut of each source); only the sources are new. Every source at one epoch, and two of them at ten
(the repetition the forecast under-forecast on v4's whitman), in an order that keeps the kinds
mixed, so that a sweep cut short still holds every kind. The supplement (the protocol's amendment 1)
holds the same recipes, so the same tokens, and six replay mixes; its jobs are second seeds, replay,
learning rates and regime B.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_f
import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as v4

OUT = v2.CACHE / "v4-pool-f"
MORE = v2.CACHE / "v4-pool-f-more"
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


REPLAY = {  # scored against the what-if on the 1ep run of the same source (its 0% point)
    f"{source}:1ep+replay{share}%": (f"replay{share}", (source,), 1.0)
    for source in ("en-debian-docs", "ru-fortunes", "code-go-net-http")
    for share in (5, 25)
}
LR = ("en-debian-docs", "ko-kobill-law", "code-rust-regex", "th-words")
REGIME_B = ("es-fortunes", "zh-fortunes-poetry", "code-perl-modules", "elisp-markdown-mode", "json-iso-3166-2",
            "ru-fortunes")  # fmt: skip


def jobs() -> list[dict]:
    return [{"run": name, "regime": "A", "seed": 0} for name in RECIPES]


def more_jobs() -> list[dict]:
    """Amendment 1's runs, in its order: second seeds, replay, learning rates, regime B."""
    out = [{"run": f"{s}:1ep", "regime": "A", "seed": 1} for s in ORDER]
    out += [{"run": name, "regime": "A", "seed": 0} for name in REPLAY]
    out += [{"run": f"{s}:1ep", "regime": r, "seed": 0} for r in ("A-lr1e-3", "A-lr1e-4") for s in LR]
    return out + [{"run": f"{s}:1ep", "regime": "B", "seed": 0} for s in REGIME_B]


def main() -> int:
    missing = [name for name in ORDER if not (pool_f.OUT / name / f"{name}.txt").is_file()]
    if missing or not v3.CORPORA.is_dir():
        print(f"pool F suite: needs {v3.CORPORA} and pool F ({', '.join(missing)} missing: run pool_f.py first)")
        return 2
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--supplement", action="store_true", help="the amendment's suite (v4-pool-f-more)")
    more = parser.parse_args().supplement
    v3.FOLDERS.update({name: pool_f.OUT / name for name in ORDER})
    v4.build(lambda message: print(message, flush=True), recipes=RECIPES | REPLAY if more else RECIPES,
             replays=REPLAY if more else {}, out=MORE if more else OUT, job_list=more_jobs() if more else jobs(),
             heldout=ORDER)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
