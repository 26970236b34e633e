"""Analysis, tables and plots of the validity benchmark's cached runs.

Predictions are recomputed from the saved candidate profiles with the current
`vocabrisk.risk.exposure`, so a change to the score is judged on the same measured runs without
retraining.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np

from vocabrisk import Profile, TrainingPlan
from vocabrisk.risk.exposure import assess, never_seen_share, unigram_kl
from vocabrisk.verify.metrics import auroc, spearman, top_share

MEASURES = {"head": "forgetting_head_only", "total": "forgetting"}


def _safe(name: str) -> str:
    return re.sub(r"[^a-z0-9+-]", "_", name)


def predictors(profile: Profile, plan: TrainingPlan) -> dict[str, float]:
    """Corpus-level scores: vocabrisk's and the naive baselines."""
    return {
        "vocabrisk": assess(profile, plan).score,
        "never_seen_share": never_seen_share(profile),
        "unigram_kl": unigram_kl(profile),
    }


def _rank(values: list[float]) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(values) / len(values)


def analyse(runs: Path, names: list[str], spec, base_spec, base_folder: Path) -> dict:
    plan = TrainingPlan(tokens_per_step=spec.tokens_per_step, steps=spec.steps, beta2=0.999)
    rows = []
    for name in names:
        records = [json.loads(p.read_text()) for p in sorted(runs.glob(f"{_safe(name)}-seed*.json"))]
        if not records:
            continue
        profile = Profile.load(runs / "profiles" / _safe(name))
        result = assess(profile, plan)
        cov = profile.coverable
        per_seed = []
        for record in records:
            arrays = np.load(runs / f"{_safe(name)}-seed{record['seed']}.npz")
            drift = arrays["plain_drift"][cov]
            top = top_share(drift, 0.1)
            plain, fixed = record["plain"], record["head_eps"]
            per_seed.append(
                {
                    "seed": record["seed"],
                    "total": plain["forgetting"],
                    "head": plain["forgetting_head_only"],
                    "body": plain["forgetting_head_restored"],
                    "learning": plain["learning"],
                    "eps": record["head_eps"]["head_eps"],
                    "eps_total": fixed["forgetting"],
                    "eps_learning": fixed["learning"],
                    "removed": 1 - fixed["forgetting"] / plain["forgetting"],
                    "learning_kept": fixed["learning"] / plain["learning"],
                    "edit_starved": plain["edits"]["starved_rows"]["recovered"],
                    "edit_top": plain["edits"]["top_drifted_rows"]["recovered"],
                    "row_auroc": auroc(result.exposure[cov], top),
                    "row_auroc_weighted": auroc(result.contribution[cov], top),
                    "row_auroc_never_seen": auroc((profile.counts.counts == 0)[cov], top),
                    "row_spearman": spearman(result.exposure[cov], drift),
                    "starved_step_kept": record["recommended_eps"]["starved_step_kept"],
                }
            )
        mean = {key: float(np.mean([s[key] for s in per_seed])) for key in per_seed[0] if key != "seed"}
        rows.append(
            {
                "candidate": name,
                "tokens": records[0]["tokens"],
                "predicted": predictors(profile, plan),
                "measured": mean,
                "seeds": per_seed,
            }
        )
    return {
        "base": {**asdict(base_spec), **json.loads((base_folder / "BUILD.json").read_text())},
        "run": asdict(spec),
        "candidates": rows,
        "correlations": correlations(rows),
        "summary": summary(rows),
    }


def combined(rows: list[dict]) -> list[float]:
    """A count-based combination for total forgetting: mean rank of vocabrisk's score and unigram KL."""
    risk = _rank([r["predicted"]["vocabrisk"] for r in rows])
    kl = _rank([r["predicted"]["unigram_kl"] for r in rows])
    return list((risk + kl) / 2)


def correlations(rows: list[dict]) -> dict:
    """Spearman of each predictor with seed-mean forgetting, and its range over single seeds."""
    scores = {name: [r["predicted"][name] for r in rows] for name in rows[0]["predicted"]}
    scores["vocabrisk+kl (rank mean)"] = combined(rows)
    seeds = range(min(len(r["seeds"]) for r in rows))
    out = {}
    for name, values in scores.items():
        out[name] = {}
        for target in MEASURES:
            per_seed = [spearman(values, [r["seeds"][s][target] for r in rows]) for s in seeds]
            out[name][target] = {
                "spearman": spearman(values, [r["measured"][target] for r in rows]),
                "seed_min": min(per_seed),
                "seed_max": max(per_seed),
            }
    return out


def summary(rows: list[dict]) -> dict:
    m = [r["measured"] for r in rows]
    return {
        "row_auroc_mean": float(np.mean([x["row_auroc"] for x in m])),
        "row_auroc_min": float(np.min([x["row_auroc"] for x in m])),
        "row_auroc_never_seen_mean": float(np.mean([x["row_auroc_never_seen"] for x in m])),
        "eps_removed_median": float(np.median([x["removed"] for x in m])),
        "eps_learning_kept_median": float(np.median([x["learning_kept"] for x in m])),
        "head_share_median": float(np.median([x["head"] / x["total"] for x in m])),
        "edit_starved_median": float(np.median([x["edit_starved"] for x in m])),
        "edit_top_median": float(np.median([x["edit_top"] for x in m])),
    }


def markdown(results: dict) -> str:
    rows = results["candidates"]
    lines = [
        "| candidate | tokens | vocabrisk | never-seen | unigram KL | total forgetting | head only | body only "
        "| learning | row AUROC | eps | forgetting removed | learning kept | edit starved rows | edit top-decile |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(rows, key=lambda r: r["predicted"]["vocabrisk"]):
        p, m = r["predicted"], r["measured"]
        lines.append(
            f"| {r['candidate']} | {r['tokens']:,} | {p['vocabrisk']:.3f} | {p['never_seen_share']:.3f} "
            f"| {p['unigram_kl']:.2f} | {m['total']:.3f} | {m['head']:.3f} | {m['body']:.3f} | {m['learning']:.3f} "
            f"| {m['row_auroc']:.2f} | {m['eps']:.0e} | {m['removed']:.0%} | {m['learning_kept']:.0%} "
            f"| {m['edit_starved']:.0%} | {m['edit_top']:.0%} |"
        )
    lines += ["", "| predictor | Spearman vs head-only forgetting (seed range) | vs total forgetting (seed range) |",
              "|---|---|---|"]  # fmt: skip
    for name, c in results["correlations"].items():
        h, t = c["head"], c["total"]
        lines.append(
            f"| {name} | {h['spearman']:.2f} ({h['seed_min']:.2f}–{h['seed_max']:.2f}) "
            f"| {t['spearman']:.2f} ({t['seed_min']:.2f}–{t['seed_max']:.2f}) |"
        )
    s = results["summary"]
    lines += [
        "",
        f"- per-row AUROC for the top-decile drifted rows: mean {s['row_auroc_mean']:.3f}, "
        f"lowest candidate {s['row_auroc_min']:.3f} (never-seen as the per-row predictor: "
        f"{s['row_auroc_never_seen_mean']:.3f})",
        f"- head-eps fix on the median candidate: {s['eps_removed_median']:.0%} of total forgetting removed, "
        f"{s['eps_learning_kept_median']:.0%} of learning kept",
        f"- head-only forgetting as a share of total (median): {s['head_share_median']:.0%}",
        f"- editing after training, share of forgetting recovered (median): starved rows restored "
        f"{s['edit_starved_median']:.0%}, top-decile drifted rows restored {s['edit_top_median']:.0%}",
    ]
    return "\n".join(lines) + "\n"


def plots(results: dict, runs: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["candidates"]
    names = ["vocabrisk", "never_seen_share", "unigram_kl"]
    fig, axes = plt.subplots(2, 3, figsize=(13, 8))
    for i, target in enumerate(MEASURES):
        y = [r["measured"][target] for r in rows]
        for j, name in enumerate(names):
            ax = axes[i][j]
            x = [r["predicted"][name] for r in rows]
            ax.scatter(x, y)
            for xi, yi, r in zip(x, y, rows, strict=True):
                ax.annotate(r["candidate"], (xi, yi), fontsize=7)
            rho = results["correlations"][name][target]["spearman"]
            ax.set_title(f"{name} vs {target} forgetting: ρ={rho:.2f}", fontsize=9)
            ax.set_xlabel(name)
            ax.set_ylabel(f"{target} forgetting (nats)")
    fig.tight_layout()
    fig.savefig(out / "candidates.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4))
    order = sorted(rows, key=lambda r: r["predicted"]["vocabrisk"])
    x = np.arange(len(order))
    ax.bar(x - 0.2, [r["measured"]["total"] for r in order], 0.4, label="plain AdamW")
    ax.bar(x + 0.2, [r["measured"]["eps_total"] for r in order], 0.4, label="head-only eps (measured rule)")
    ax.set_xticks(x, [r["candidate"] for r in order], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("forgetting (nats, old text)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "head_eps.png", dpi=110)
    plt.close(fig)
