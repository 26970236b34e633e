"""A design probe of replay (v3 and pools E to L, all seen; pool M held out): does mixing replay into these
plans measurably cut the old text's forgetting?

    python benchmarks/validity/design_replay.py   # -> docs/validity/v11/replay.txt (after design_v10.py dump)

Replay's what-if (forecast term 8) has been within ×2 of the measured reduction on 0 to 2 of 6 runs on every
pool since F. On pool L its reductions were +0.07 to +0.28 nats and the measured ones −0.14 to +0.03: the
forecast says replay saves much, the runs say it saved little or nothing, and sometimes the replay run forgot
more. Each replay run is one seed, so part of this may be noise. Before the term is redesigned, this probe
asks how large the measured reductions are against the runs' own seed noise.

Fixed before any number below was computed (2026-12-07, after v10's freeze in 0cdff7d):
- data: the replay runs of pools E to L (each pool: three sources at 1 epoch with 5% and 25% of v3's wiki
  replay text, one seed), their sources' 1-epoch runs (seed means) as the 0% point, and every 1-epoch ranking
  candidate with two seeds in those pools for the noise; as design_v10.py dumps them.
- question 1, per old text and share: the median of the measured reduction (the source's 1-epoch total less
  the replay run's total), the share of runs where it is above 0, and the share where it is above the noise:
  the median |seed 0 − seed 1| of the pools' two-seed 1-epoch runs (the spread of one single-seed run against
  a seed mean is of that order);
- question 2, per old text and share: the Spearman of the reduction against the source's 1-epoch total (what
  replay could take away), and the median of reduction / total where the total is above 0.05 nats;
- what follows from it, fixed now: if on wiki at 25% the median reduction is below the noise, then on these
  plans replay was not measured to help, and the what-if is to say so beside its number (the next form's
  replay term is designed only on runs longer than these, of which there are none yet); otherwise the term is
  redesigned on these runs.
Nothing here is held out.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import design_v8 as v8
import design_v10 as first
from design import Transcript, spearman

OUT = data.REPO / "docs" / "validity" / "v11" / "replay.txt"
SHARES = (5, 25)
ABOVE = 0.05  # nats: question 2's least 1-epoch total


def main() -> int:
    say = Transcript()
    cases = v8.load(first.SETS, first.CACHE)
    say("# Output of benchmarks/validity/design_replay.py: design data only (pools E to L: all seen)")
    for old in v8.OLDS:
        chosen = [c for c in cases if c["set"] in first.POOLS and c["old"] == old and c["plan"] == "A"]
        by_name = {(c["set"], c["name"]): c for c in chosen}
        paired = [c for c in by_name.values() if c["role"] == "candidate" and c["name"].endswith(":1ep")]
        noise = float(np.median([abs(c["totals"][0] - c["totals"][1]) for c in paired if len(c["totals"]) == 2]))
        say()
        say(f"{old}: noise (median |seed 0 - seed 1| of {sum(len(c['totals']) == 2 for c in paired)} one-epoch runs) "
            f"{noise:.3f} nats")  # fmt: skip
        for share in SHARES:
            rows = []
            for (label, name), c in by_name.items():
                if c["role"] == "replay" and name.endswith(f"+replay{share}%"):
                    source = by_name[label, name.split("+")[0]]
                    rows.append((source["total"], source["total"] - c["total"]))
            totals, cuts = np.array([t for t, _ in rows]), np.array([r for _, r in rows])
            big = totals > ABOVE
            say(f"   {share}% replay, {len(rows)} runs: reduction median {np.median(cuts):+.3f}, above 0 for "
                f"{np.mean(cuts > 0):.0%}, above the noise for {np.mean(cuts > noise):.0%}; against the 1-epoch "
                f"total Spearman {spearman(cuts, totals):+.2f}, reduction / total median "
                f"{np.median(cuts[big] / totals[big]):+.2f} ({big.sum()} runs above {ABOVE} nats)")  # fmt: skip
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
