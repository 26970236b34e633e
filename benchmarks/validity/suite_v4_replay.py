"""v4's replay supplement: six fresh replay runs that test the replay term (forecast term 8) held out.

    python benchmarks/validity/suite_v4_replay.py     # -> benchmarks/.cache/forecast/v4-replay/

The protocol is docs/validity/v4/PROTOCOL-replay.md, committed with the term and before any of these
runs. The term was designed on the 13 replay runs measured before it (v3's and v4's, all seen), so
these six are its held-out test: three v4 sources never run with replay, chosen by a rule fixed
first (the v4 held-out sources with a 1ep run and no replay run, the three with the largest measured
wiki forgetting: replay can only be scored where there is forgetting to take away), each at 5% and
25% of wiki replay, v3's replay text, as v4's replay runs. The 0% point of each is its v4 1ep run
(the same recipe, so the same tokens: `score.py --replay` checks the token count).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import suite_v2 as v2
import suite_v3 as v3
import suite_v4 as v4

OUT = v2.CACHE / "v4-replay"
SOURCES = ("tsv-chess-openings", "en-changelog-abcmidi", "xml-wayland-protocols")
REPLAY = {f"{source}:1ep+replay{share}%": (f"replay{share}", (source,), 1.0) for source in SOURCES for share in (5, 25)}


def jobs() -> list[dict]:
    """The six runs, the larger share of each source first (the one most apart from its 0% point)."""
    return [{"run": f"{s}:1ep+replay{share}%", "regime": "A", "seed": 0} for share in (25, 5) for s in SOURCES]


def main() -> int:
    if not v3.CORPORA.is_dir():
        print(f"v4 replay suite: {v3.CORPORA} is absent; it needs the shared corpora. Nothing was built.")
        return 2
    v4.build(lambda message: print(message, flush=True), recipes=REPLAY, replays=REPLAY, out=OUT, job_list=jobs())
    return 0


if __name__ == "__main__":
    sys.exit(main())
