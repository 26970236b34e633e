"""The verify report: a rich terminal view and a matplotlib PNG of one `VerifyResult`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from rich.text import Text

from vocabrisk.verify.run import VerifyResult


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def render_verify(result: VerifyResult, console: Console) -> None:
    r = result.report
    pred, base, cfg, data = r["prediction"], r["base"], r["config"], r["data"]
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    tied = "  (tied to the input embedding: head swaps move it too)" if r["head"]["tied"] else ""
    facts.add_row("model", f"{r['model']}  ·  head {r['head']['rows']}×{r['head']['hidden']}{tied}")
    facts.add_row(
        "corpus",
        f"{', '.join(r['corpus'])}  ·  {data['train_tokens']:,} tokens to train on, "
        f"{data['heldout_tokens']:,} held out",
    )
    facts.add_row("old text", f"{data['old_text']}  ·  {data['old_windows']} windows")
    facts.add_row(
        "run",
        f"{cfg['steps']} steps × {cfg['batch_size']}×{cfg['seq_len']} tokens  ·  AdamW lr {cfg['lr']:g}, "
        f"β=({cfg['beta1']}, {cfg['beta2']}), eps {cfg['eps']:g}, wd {cfg['weight_decay']:g}  ·  "
        f"{cfg['device']}{'  bf16' if cfg['bf16'] else ''}",
    )
    base_lines = pred["baselines"]
    facts.add_row(
        "predicted",
        Text(
            f"risk {pred['risk']:.3f} {pred['band'].upper()}  ·  {pred['starved_rows']:,} starved rows  ·  "
            f"baselines: never-seen {base_lines['never_seen_share']:.3f}, unigram KL {base_lines['unigram_kl']:.2f}"
        ),
    )
    console.print(facts)

    runs = Table(title="Measured (nats of mean next-token loss)", title_justify="left")
    for name in ("run", "head eps", "forgetting", "head restored", "head only", "learning", "edit: starved rows",
                 "edit: top-drifted rows", "train s"):  # fmt: skip
        runs.add_column(name, justify="left" if name == "run" else "right")
    for name, run in r["runs"].items():
        edits = run["edits"]
        runs.add_row(
            name,
            f"{run['head_eps']:g}",
            f"{run['forgetting']:+.3f}",
            f"{run['forgetting_head_restored']:+.3f}",
            f"{run['forgetting_head_only']:+.3f}",
            f"{run['learning']:+.3f}",
            f"{edits['starved_rows']['forgetting']:+.3f} ({_pct(edits['starved_rows']['recovered'])} back)",
            f"{edits['top_drifted_rows']['forgetting']:+.3f} ({_pct(edits['top_drifted_rows']['recovered'])} back)",
            f"{run['train_seconds']:.0f}",
        )
    console.print(runs)
    console.print(
        f"[dim]base losses: old text {base['reference']:.3f}, held-out new text {base['heldout']:.3f}. "
        "forgetting: rise on old text; learning: fall on held-out new text; head restored: trained body with the "
        "base head; head only: base body with the trained head; edit: trained model with those rows put back.[/]"
    )

    a, weighted, never = r["agreement"], r["agreement_weighted"], r["agreement_never_seen"]
    agree = Table(title="Predicted per-row exposure vs measured head-row drift", title_justify="left")
    for name in ("per-row predictor", "Spearman", f"AUROC (top {a['top_share']:.0%} drifted)", f"precision@{a['k']}"):
        agree.add_column(name, justify="left" if name == "per-row predictor" else "right")
    rows = (("vocabrisk exposure", a), ("vocabrisk prior × exposure", weighted), ("never seen (baseline)", never))
    for label, row in rows:
        agree.add_row(label, f"{row['spearman']:.2f}", f"{row['auroc_top']:.2f}", f"{row['precision_at_k']:.2f}")
    console.print(agree)

    eps = r["recommended_head_eps"]
    if eps:
        console.print(f"[bold]head eps from measured gradients:[/] {eps['value']:g}  ({eps['derivation']}); "
                      f"from counts alone: {pred['head_eps_from_counts']}")  # fmt: skip
    fix = r["runs"].get("head_eps", {}).get("vs_plain")
    if fix:
        kept = (
            f"kept {_pct(fix['learning_kept'])} of learning"
            if fix["learning_kept"] is not None
            else "learning kept: n/a (held-out loss rose in the plain run; try fewer --steps or a lower --lr)"
        )
        console.print(
            f"[bold]head eps {r['runs']['head_eps']['head_eps']:g}:[/] removed {_pct(fix['forgetting_removed'])} of "
            f"forgetting, {kept}"
        )


def plot_verify(result: VerifyResult, path: Path | str) -> Path:
    """Three panels: per-row drift against predicted risk, where forgetting lives, training loss."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r, rows = result.report, result.rows
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    ax = axes[0]
    floor = max(float(rows["predicted"][rows["predicted"] > 0].min(initial=1e-12)), 1e-12) / 2
    x = np.maximum(rows["predicted"], floor)  # log axis: rows fed every step have exposure 0
    for mask, label, color in ((~rows["never_seen"], "in the corpus", "tab:blue"),
                               (rows["never_seen"], "never seen", "tab:red")):  # fmt: skip
        ax.scatter(x[mask], rows["drift"][mask], s=4, alpha=0.5, label=label, color=color)
    ax.set_xscale("log")
    ax.set_xlabel("predicted exposure (share of steps starved)")
    ax.set_ylabel("measured drift (L2 change of the head row)")
    ax.set_title(f"Spearman {r['agreement']['spearman']:.2f}, AUROC {r['agreement']['auroc_top']:.2f}")
    ax.legend()

    ax = axes[1]
    labels, values = [], []
    for name, run in r["runs"].items():
        for key, label in (("forgetting", "all trained"), ("forgetting_head_restored", "head restored"),
                           ("forgetting_head_only", "head only")):  # fmt: skip
            labels.append(f"{name}\n{label}")
            values.append(run[key])
    ax.bar(range(len(values)), values, color=["tab:gray", "tab:blue", "tab:red"] * len(r["runs"]))
    ax.set_xticks(range(len(values)), labels, fontsize=7)
    ax.set_ylabel("forgetting (nats on old text)")
    ax.set_title("where forgetting lives")

    ax = axes[2]
    for name, losses in result.losses.items():
        ax.plot(losses, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.legend()
    fig.suptitle(f"vocabrisk verify: {', '.join(r['corpus'])} on {r['model']}")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
