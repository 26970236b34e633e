"""A descriptive probe after v11's freeze (pools F to M, all seen; pool N held out): is starvation measured on the
old text's own contexts new information beside the forecast's unigram terms?

    python benchmarks/validity/design_contexts.py   # -> docs/validity/v12/contexts.txt (the pools' suites built)

Issue 30 names "starvation measured on the old text's own positions" as a direction. At the level of one token
of context: each context token `a` of the old text, weighted by its share of the old text, is covered by the
corpus as far as the corpus trains it (1 − e^{−n/20} for its n occurrences there); the old text's *unshared*
share is what the corpus leaves uncovered, and among covered contexts the corpus may continue them otherwise
(the total variation between the two next-token distributions: *disagreement*, the interference a shared
context brings). Each is set beside the measured total and body (total − head) of the pools' one-epoch runs, and
beside the starved old share S and likeness B of the forecast's terms (the scores' `per_run` terms). Nothing is
fitted and no form is chosen here; it says whether such a statistic is worth a scan's cost.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import suite_v2 as v2
from design import Transcript, say_by_pool, scored_one_epoch, spearman

OUT = data.REPO / "docs" / "validity" / "v12" / "contexts.txt"
POOLS = ("F", "G", "H", "I", "J", "K", "L", "M")
OLDS = ("wiki", "code")
TRAINED = 20.0  # occurrences at which a context counts as 63% trained


def continuations(ids: list[list[int]]) -> dict[int, Counter]:
    """{context token: Counter of the tokens that follow it}."""
    table: dict[int, Counter] = defaultdict(Counter)
    for doc in ids:
        for a, b in itertools.pairwise(doc):
            table[a][b] += 1
    return table


def coverage(corpus: dict[int, Counter], old: dict[int, Counter]) -> tuple[float, float]:
    """(unshared, disagreement): the old text's share of contexts the corpus leaves untrained, and the mean total
    variation between the two continuations over the contexts it trains (weighted as they are trained)."""
    size = sum(sum(c.values()) for c in old.values())
    shared = disagreed = 0.0
    for a, following in old.items():
        theirs = corpus.get(a)
        if not theirs:
            continue
        n_old, n_new = sum(following.values()), sum(theirs.values())
        weight = n_old / size * (1.0 - math.exp(-n_new / TRAINED))
        keys = following.keys() | theirs.keys()
        shared += weight
        disagreed += weight * 0.5 * sum(abs(following[k] / n_old - theirs[k] / n_new) for k in keys)
    return 1.0 - shared, disagreed / shared if shared else 0.0


def rows(log) -> list[dict]:
    from vocabrisk import load_model

    loaded = load_model(str(v2.smollm2_gguf()))

    def encoded(path: Path) -> list[list[int]]:
        texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
        return [list(ids) for ids in v2.encode_each(loaded, texts)]

    out = []
    for pool, folder, old, runs, files in scored_one_epoch(POOLS, OLDS):
        table = continuations(encoded(folder / f"old-{old}.jsonl"))
        for run in runs:
            corpus = continuations(encoded(folder / "texts" / f"{files[run['run']]}.jsonl"))
            unshared, disagreement = coverage(corpus, table)
            terms = run["terms"]
            measured = {"total": run["total"], "body": run["total"] - run["head_only"]}
            features = {"unshared": unshared, "disagreement": disagreement}
            features |= {"S": terms["starved_old_share"], "B": terms["alike"]}
            out.append({"pool": pool, "old": old, "run": run["run"]} | measured | features)
        log(f"pool {pool}, {old}: {len(runs)} rows")
    return out


def main() -> int:
    say = Transcript()
    table = rows(lambda text: print(text, flush=True))
    say("# Output of benchmarks/validity/design_contexts.py: descriptive, design data only (pools F to M: all seen)")
    say("# one-epoch runs; Spearman per pool, then the mean over the pools; 'pooled' ranks every pool's runs together")
    for old in OLDS:
        mine = [r for r in table if r["old"] == old]
        say()
        say(f"{old} ({len(mine)} runs):")
        say(f"   unshared against S: pooled {spearman([r['unshared'] for r in mine], [r['S'] for r in mine]):+.2f}; "
            f"against B: {spearman([r['unshared'] for r in mine], [r['B'] for r in mine]):+.2f}")  # fmt: skip
        for measured in ("total", "body"):
            for feature in ("unshared", "disagreement", "S", "B"):
                say_by_pool(say, mine, POOLS, feature, measured, 12)
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
