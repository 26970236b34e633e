"""The words every report uses for the numbers: what risk, plan and forecast mean, and how far to trust them.

The calculation modules compute; this module says. Every report format (terminal, HTML, Markdown, JSON, the
gate's CI formats) takes its sentences from here, so that they say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vocabrisk.corpus.skips import plural

if TYPE_CHECKING:
    from vocabrisk.profile.profile import Profile

HOW_WELL = (
    "v10, held out on SmolLM2-135M (pool M: 18 corpora of 12 sources from PyPI and Debian, none designed on; 40-step "
    "fine-tunes), ranked total forgetting at Spearman +0.67 on English prose where the base loss on the old text is "
    "known (calibrate, --old-loss; measured by default with torch; without it near +0.28 there) and +0.45 on Python "
    "code (seeds agree at +0.92 and +0.91), the head's part at +0.62 and +0.94, and came within x2 after calibration "
    "for 28% and 78% of corpora; its step-20 order is +0.63 and +0.27, its curves are within x1.5 for 19-25% of "
    "points and its replay what-if within x2 for 2 of 6 runs (issue 30's targets: met for code's head and "
    "calibration and prose's 80-step order; missed otherwise; v9 on pool L: +0.86 and +0.66; docs/VALIDITY.md)"
)
RISK_MEANING = (
    "starved usage: prior-weighted share of output-head rows expected to drift under one-sided Adam updates "
    "(secondary: it names the rows, the forecast ranks corpora)"
)
RISK_BANDS = "low < 0.05 ≤ medium < 0.20 ≤ high"


def format_epochs(epochs: float | None) -> str:
    """Implied epochs for people: whole numbers with separators from 10, one decimal from 1, two significant
    digits below (a run over a small part of a large corpus is not "0.0" epochs).

    >>> [format_epochs(e) for e in (29_594.2, 3.04, 0.25, 0.00041, 0.0)]
    ['29,594', '3.0', '0.25', '0.00041', '0']
    """
    if epochs is None:
        return "n/a"
    if epochs >= 10:
        return f"{epochs:,.0f}"
    return f"{epochs:.1f}" if epochs >= 1 else f"{epochs:.2g}"


def plan_text(risk: dict) -> str:
    """The plan in one line, from a risk dict (`Summary.to_dict()["risk"]`): its `plan` and, where the
    dict has it, the `implied_epochs` over the corpus."""
    plan, over_corpus = risk["plan"], "implied_epochs" in risk
    if plan.get("epochs") is None:
        length = plural(plan["steps"], "step")
    else:
        length = f"{plan['epochs']:g} epochs" + (f" = {plural(plan['steps'], 'step')}" if over_corpus else "")
    first = f"{length} × {plan['tokens_per_step']:,} tokens"
    if over_corpus:
        first += f" ({format_epochs(risk['implied_epochs'])} epochs over this corpus)"
    if "learning_rate" not in plan:  # a plan written before the optimizer settings were part of it
        return f"{first}, β2={plan['beta2']}"
    warmup = plan["warmup_steps"] or (f"{plan['warmup_ratio']:.0%}" if plan["warmup_ratio"] else 0)
    parts = [
        first,
        f"lr {plan['learning_rate']:g} {plan['lr_schedule']}" + (f" after {warmup} warmup" if warmup else ""),
        f"β=({plan['beta1']}, {plan['beta2']}), eps {plan['eps']:g}"
        + (f", wd {plan['weight_decay']:g}" if plan["weight_decay"] else ""),
        f"trains {plan['trains']}" + (f", head eps {plan['head_eps']:g}" if plan["head_eps"] else ""),
    ]
    return ", ".join(parts)


def trust_text(profile: Profile, encoder: bool) -> str:
    """How far to trust the risk, given the model and the prior behind it."""
    p = profile
    if encoder:
        return (
            f"does not apply: {p.model.get('head_note')}; the number is computed as for a causal model "
            "and only the coverage and groups are meaningful"
        )
    if p.prior_source == "tokenizer":
        why = p.model.get("head_note") or "--prior tokenizer"
        return (
            f"a rough estimate ({why}): the prior comes from the tokenizer's vocabulary order alone, which "
            "ranked corpora like a reference corpus with Spearman 0.86 on the demo model; "
            "pass --reference TEXT (text like the model's training data) for a firmer number"
        )
    if p.prior_source.startswith("head"):
        return "a data-free prior from the head's weights; --reference TEXT gives a firmer one"
    return "prior from text in the base model's own distribution"


def skipped_text(skips: dict, example: bool = True) -> str:
    """One line on what a scan left out, for every report: "nothing", or how much and the first case."""
    if not skips["files"] and not skips["records"]:
        return "nothing"
    text = f"{skips['summary']}, {skips['share']:.1%} of the input"
    if example and skips["examples"]:
        first = skips["examples"][0]
        text += f"; first: {first['source']}, {first['locator']}: {first['reason']}"
    return text
