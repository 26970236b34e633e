"""A descriptive probe after v11's freeze (pools F to M, all seen; pool N held out): what ranks code's body?

    python benchmarks/validity/design_code_body.py   # -> docs/validity/v12/code-body.txt (the pools' suites built)
    python benchmarks/validity/design_code_body.py --held-out   # pool N, once scored -> code-body-pool-n.txt

Over nine pools the forecast ranks the Python old text's total below v3 as landed, and its misses are in the body
(the total less the head's part): PostScript, Agda, reStructuredText with code, Vala's declarations and XML forget
Python's body by 0.4-1.4 nats where Python code and English documentation forget 0.04-0.2.
design_contexts.py found that no statistic of one-token contexts ranks it (B, S, unshared, disagreement: pool means
+0.15 to -0.18). The idea tested here, written before any of these was computed: code's body forgets where the
corpus engages the same *mode* as the old text (its layout and symbols) but writes it another way, a dialect
that trains the circuits Python relies on toward other habits. Prose engages the mode little; Python writes it
the same way; other languages and markup do both. The statistics, each from the corpus's and the old text's
tokens and text alone, fixed here:

- `mode`: the corpus's share of tokens in the groups "code symbols" and "whitespace" (`vocabrisk.model.groups`);
- `gap`: the total variation between the corpus's and the old text's distributions over the tokens of those
  groups and "punctuation", each renormalised over that set (how differently the mode is written);
- `mode_gap`: mode × gap;
- `layout`: |ln(mean characters per line of the corpus / of the old text)|;
- `H`, the corpus's token entropy in nats (the forecast's predictability term since v7), and the forecast's own
  body as each pool's results.json holds it (the form that pool was held out for: v4 to v10).

Each is set beside the measured body of the pools' one-epoch runs, and beside the ratio of the measured body to the
forecast's (what the forecast misses), per pool and pooled, for both old texts (wiki as a control: the idea says
nothing of prose's body). Nothing is fitted and no form is chosen here; a statistic that ranks code's body or its
miss on these pools is a candidate for a later form, to be held out on a pool not yet built.

`--held-out` runs the check PROTOCOL-pool-n.md fixed after this probe ran and before pool N was scored ("A
secondary check"): on pool N's one-epoch runs, `mode_gap` ranks the Python old text's measured body at Spearman
+0.5 or more, and above v11's forecast body.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import suite_v2 as v2
from design import Transcript, say_by_pool, scored_one_epoch, spearman

from vocabrisk.model.groups import CODE, PUNCTUATION, WHITESPACE

OUT = data.REPO / "docs" / "validity" / "v12" / "code-body.txt"
HELD_OUT = data.REPO / "docs" / "validity" / "v12" / "code-body-pool-n.txt"
POOLS = ("F", "G", "H", "I", "J", "K", "L", "M")
THRESHOLD = 0.5  # the held-out check's bar for mode_gap on code's body (pool means F to M: +0.60)
OLDS = ("wiki", "code")
FEATURES = ("mode", "gap", "mode_gap", "layout", "H", "forecast_body")
FLOOR = 0.005  # nats: the body a ratio is taken against where the measured or forecast body is smaller


def texts_of(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


def line_length(texts: list[str]) -> float:
    """Mean characters per line, over the non-empty lines."""
    lines = [line for text in texts for line in text.splitlines() if line.strip()]
    return sum(map(len, lines)) / max(len(lines), 1)


class Statistics:
    """The fixed statistics of one corpus against one old text, from their token counts and lines."""

    def __init__(self, loaded):
        self.loaded = loaded
        groups = loaded.vocab.groups
        self.mode_rows = np.isin(groups, (CODE, WHITESPACE))
        self.written_rows = np.isin(groups, (CODE, WHITESPACE, PUNCTUATION))

    def counts(self, texts: list[str]) -> np.ndarray:
        ids = v2.encode_each(self.loaded, texts)
        return np.bincount(np.concatenate([np.asarray(doc) for doc in ids]), minlength=self.loaded.vocab.size)

    def of(self, corpus: list[str], corpus_counts: np.ndarray, old: list[str], old_counts: np.ndarray) -> dict:
        shares = corpus_counts[corpus_counts > 0] / corpus_counts.sum()
        mode = corpus_counts[self.mode_rows].sum() / corpus_counts.sum()
        mine, theirs = corpus_counts[self.written_rows], old_counts[self.written_rows]
        gap = 0.5 * np.abs(mine / max(mine.sum(), 1) - theirs / max(theirs.sum(), 1)).sum()
        layout = abs(math.log(line_length(corpus) / line_length(old)))
        entropy = float(-(shares * np.log(shares)).sum())
        return {"mode": float(mode), "gap": float(gap), "mode_gap": float(mode * gap), "layout": layout, "H": entropy}


def rows(log, pools: tuple[str, ...]) -> list[dict]:
    from vocabrisk import load_model

    stats = Statistics(load_model(str(v2.smollm2_gguf())))
    out = []
    for pool, folder, old, runs, files in scored_one_epoch(pools, OLDS):
        old_texts = texts_of(folder / f"old-{old}.jsonl")
        old_counts = stats.counts(old_texts)
        for run in runs:
            corpus = texts_of(folder / "texts" / f"{files[run['run']]}.jsonl")
            body = run["total"] - run["head_only"]
            features = stats.of(corpus, stats.counts(corpus), old_texts, old_counts)
            features["forecast_body"] = run["forecast_body"]
            miss = max(body, FLOOR) / max(run["forecast_body"], FLOOR)
            out.append({"pool": pool, "old": old, "run": run["run"], "body": body, "miss": miss} | features)
        log(f"pool {pool}, {old}: {len(runs)} rows")
    return out


def held_out() -> int:
    """PROTOCOL-pool-n.md's secondary check, on pool N's one-epoch runs (after `score.py --pool-n`)."""
    say = Transcript()
    table = [r for r in rows(lambda text: print(text, flush=True), ("N",)) if r["old"] == "code"]
    body = [r["body"] for r in table]
    statistic, forecast = (
        spearman([r["mode_gap"] for r in table], body),
        spearman([r["forecast_body"] for r in table], body),
    )
    met = statistic >= THRESHOLD and statistic > forecast
    say("# Output of benchmarks/validity/design_code_body.py --held-out: pool N, held out (PROTOCOL-pool-n.md)")
    say(f"code's one-epoch body ({len(table)} runs): mode_gap {statistic:+.2f}, v11's forecast body {forecast:+.2f}")
    say(f"the check (mode_gap >= +{THRESHOLD} and above the forecast): {'met' if met else 'missed'}")
    for r in sorted(table, key=lambda r: -r["body"]):
        say(f"   {r['run']:<32} {r['body']:+.3f} {r['forecast_body']:+.3f}  {r['mode']:.3f} {r['gap']:.3f}")
    say.write(HELD_OUT)
    return 0


def main() -> int:
    if sys.argv[1:] == ["--held-out"]:
        return held_out()
    say = Transcript()
    table = rows(lambda text: print(text, flush=True), POOLS)
    say("# Output of benchmarks/validity/design_code_body.py: descriptive, design data only (pools F to M: all seen)")
    say("# one-epoch runs; Spearman per pool, then the mean over the pools; 'pooled' ranks every pool's runs together;")
    say("# 'miss' is the measured body over the forecast's (each floored at 0.005 nats)")
    for old in OLDS:
        mine = [r for r in table if r["old"] == old]
        say()
        say(f"{old} ({len(mine)} runs):")
        for measured in ("body", "miss"):
            for feature in FEATURES:
                if measured == "miss" and feature == "forecast_body":
                    continue
                say_by_pool(say, mine, POOLS, feature, measured, 13)
    say()
    say("code's one-epoch runs, by measured body (pool, run, body, forecast body, mode, gap, layout):")
    for r in sorted((r for r in table if r["old"] == "code"), key=lambda r: -r["body"]):
        say(f"   {r['pool']} {r['run']:<32} {r['body']:+.3f} {r['forecast_body']:+.3f}  "
            f"{r['mode']:.3f} {r['gap']:.3f} {r['layout']:.2f}")  # fmt: skip
    say.write(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
