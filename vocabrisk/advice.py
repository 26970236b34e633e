"""What to do about the risk: train the head or not, the head-only Adam epsilon, what data to add.

The epsilon rule. A head row's gradient over one step of T positions is
`g_j = (1/T) sum_i (p_ij - y_ij) h_i`. For a token with corpus share `f_j` the target term
gives about `f_j * c` per coordinate (c: the typical size of a hidden-state coordinate, read
from the final norm's gain). A token the corpus never contains gets only `p_ij * h_i`, which
is hundreds of times smaller (the model soon gives it almost no probability in the new
domain). Adam's step is `m / (sqrt(v) + eps)`, so a row keeps the fraction `g / (g + eps)` of
its step: the largest epsilon that still keeps 95% of the step of the rows carrying most of
the corpus's tokens (the share at the token-mass median) is

    g_covered = c * (that share)
    eps       = g_covered / 19          (g / (g + eps) = 0.95)

and every starved row, with gradients far below eps, moves far less. `vocabrisk verify`
measures both scales; in docs/VALIDITY.md the measured head gradient at the token-mass
median came out at 1.05-1.3 times that share, so this count-based eps lands within a factor
of two of the measured one. (Protecting the rarest fed rows instead, the rarest 10% of token
mass, gave an eps too small to help: their gradients are close to the starved rows'.)
"""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass

import numpy as np

from vocabrisk.model.groups import ADDED, BYTES, SPECIAL, UNUSED
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.exposure import band
from vocabrisk.risk.summary import Summary

MIX_SHARES = (0.001, 0.01, 0.05, 0.10, 0.25)
FLAT = 0.1  # a what-if whose risks differ by less than this share of the largest is called flat
COVERED_SHARE = 0.5  # a corpus that is half a group or more is never told to add more of it
NOT_DATA_GROUPS = frozenset({BYTES, SPECIAL, ADDED, UNUSED})
PLACEHOLDER = re.compile(r"\[[A-Z_]+\]+|<[^<>\s]+>")  # [PRON], <mask_1>, <0x41>: no text is meant to feed them
EXAMPLES = 8  # starved tokens shown per group to add data for
DEFAULT_HIDDEN_SCALE = 1.0  # LayerNorm/RMSNorm gains start at 1 and mostly stay near it
KEEP_STEP = 0.95  # share of its Adam step a covered row keeps under the recommended epsilon
FED_MASS = 0.5  # the covered rows protected: those above the corpus's token-mass median


@dataclass(frozen=True)
class Advice:
    train_head: dict
    head_eps: dict | None
    add_data: list[dict]
    mixing: list[dict]
    mixing_note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    order = np.argsort(values)
    cumulative = np.cumsum(weights[order])
    if cumulative[-1] <= 0:
        return 0.0
    return float(values[order][np.searchsorted(cumulative, q * cumulative[-1])])


def eps_keeping_step(gradient: float) -> float:
    """The largest Adam eps under which a row with steady gradient GRADIENT keeps KEEP_STEP of its
    step (`g / (g + eps) = KEEP_STEP`), to one significant digit. `vocabrisk.verify` applies it to
    measured gradients, this module to gradients estimated from counts."""
    return float(f"{gradient * (1 - KEEP_STEP) / KEEP_STEP:.1g}")


def head_epsilon(summary: Summary) -> dict | None:
    """The head-only Adam epsilon (see the module docstring), or None when nothing is starved
    (or the model is an encoder, with no causal head)."""
    p, r = summary.profile, summary.risk
    present = (p.counts.counts > 0) & p.coverable
    if summary.encoder or not r.starved.any() or not present.any():
        return None
    norm_rms = p.head.final_norm_rms if p.head else None
    scale = norm_rms or DEFAULT_HIDDEN_SCALE
    covered_share = weighted_quantile(p.shares[present], p.shares[present], FED_MASS)
    g_covered = scale * covered_share
    return {
        "value": eps_keeping_step(g_covered),
        "covered_gradient": g_covered,
        "covered_share": covered_share,
        "hidden_scale": scale,
        "hidden_scale_from": "final norm gain" if norm_rms else "assumed 1.0 (no final norm found)",
        "keeps_step": KEEP_STEP,
        "derivation": f"largest eps keeping {KEEP_STEP:.0%} of the Adam step of the rows carrying most of the "
        f"corpus's tokens (share {covered_share:.1e} at the token-mass median), estimated from counts",
    }


def train_head_advice(summary: Summary) -> dict:
    p, r = summary.profile, summary.risk
    tied = bool(p.head and p.head.tied)
    if summary.encoder:
        return {
            "recommendation": "no head advice: an encoder has no causal output head",
            "why": f"{p.model.get('head_note')}; its masked-token output layer is not what the risk models, "
            "so read only the coverage and the groups",
            "tied": tied,
        }
    if r.band == "low":
        rec, why = "train normally", "few rows the base model relies on are starved"
    elif r.band == "medium":
        rec = "train the head with the head-only epsilon below"
        why = f"{int(r.starved.sum()):,} starved rows carry {r.score:.1%} of the base model's token usage"
    else:
        rec = "freeze the output head, or train it only with the head-only epsilon below"
        why = (
            f"{int(r.starved.sum()):,} starved rows carry {r.score:.1%} of the base model's token usage; "
            "a trainable head (as in LoRA setups that add lm_head) is where the worst forgetting surges were seen"
        )
    if tied and r.band != "low":
        why += "; the head is tied to the input embedding, so freezing it freezes the embedding too"
    return {"recommendation": rec, "why": why, "tied": tied}


def add_data_advice(summary: Summary, k: int = 5) -> list[dict]:
    """The token groups carrying most risk, with examples of starved tokens to cover.

    Groups no text can feed (byte-fallback pieces, special, added and unused tokens) are left
    out, and so are placeholder tokens among the examples. A group the corpus already holds as
    much of as the base model does (or is half made of) is marked `covered`: its risk is rare
    words of a script the corpus has, which replay data fixes, not more of that script.
    """
    score = summary.risk.score
    tokens, base = summary.profile.table.token, summary.risk.prior
    rows: list[dict] = []
    for group in summary.groups:
        if len(rows) == k or group.risk <= 0:
            break
        if group.group in NOT_DATA_GROUPS:
            continue
        members = summary.group_rows[group.group]
        starved = members[summary.risk.starved[members]]
        by_use = starved[np.argsort(-base[starved], kind="stable")]  # ties by token id
        examples = list(itertools.islice((t for t in tokens[by_use] if not PLACEHOLDER.fullmatch(t)), EXAMPLES))
        rows.append(
            {
                "group": group.group,
                "risk_share": group.risk / score if score else 0.0,
                "base_share": group.base_share,
                "corpus_share": group.corpus_share,
                "covered": group.corpus_share >= min(group.base_share, COVERED_SHARE),
                "examples": examples,
            }
        )
    return rows


def mixing_advice(summary: Summary, replay: Profile | None = None) -> tuple[list[dict], str]:
    """What-if: the risk after mixing a replay corpus in at a few shares (token distributions add),
    and a note on what is mixed in and why the curve is flat when it is.

    Without a replay profile, the reference corpus behind the prior stands in for replay data
    (or, with a data-free prior, the prior itself).
    """
    p = summary.profile
    if replay is not None:
        replay_shares = replay.shares
        source = f"replay: {', '.join(s['path'] for s in replay.sources[:2])}"
    elif p.reference_counts is not None:
        replay_shares, source = p.reference_counts / p.reference_counts.sum(), p.prior_source
    else:
        replay_shares, source = p.prior, f"prior ({p.prior_source})"
    rows, last = [], None
    for share in MIX_SHARES:
        what_if = summary.mixed(replay_shares, share, curve=False)  # its nats at the last step
        last, predicted = what_if.risk, what_if.forecast
        rows.append({"share": share, "risk": last.score, "band": band(last.score), "replay": source,
                     "forecast_nats": predicted.total if predicted.possible else None})  # fmt: skip
    return rows, _mixing_note(summary, rows, replay_shares, last, source)


def _mixing_note(summary: Summary, rows: list[dict], replay_shares: np.ndarray, last, source: str) -> str:
    """Which corpus the what-if mixes in, and why its curve is flat when it is."""
    note = f"mixing in {source}; without it the risk is {summary.risk.score:.3f}"
    final = rows[-1]["risk"]
    flat_from = next(i for i, row in enumerate(rows) if abs(row["risk"] - final) <= FLAT * max(final, 1e-12))
    if flat_from == len(rows) - 1:
        return note
    share = rows[flat_from]["share"]
    per_step = share * summary.risk.plan.tokens_per_step
    unfed = float(last.contribution[replay_shares <= 0].sum()) / last.score if last.score > 0 else 0.0
    said = (
        f"{note}. The risk is flat from {share:.1%} on ({per_step:,.0f} replay tokens per step): by then the "
        f"replay feeds, within Adam's memory, every row it holds; {unfed:.0%} of what is left sits on rows the "
        "replay text never shows, which no share of it can feed"
    )
    start, end = rows[flat_from]["forecast_nats"], rows[-1]["forecast_nats"]
    if start is not None and end is not None and start - end > FLAT * max(abs(start), 1e-12):
        said += (
            f". The forecast still falls past it ({start:+.3f} to {end:+.3f} nats): replay also protects the "
            "body, as far as it is the old text's kind"
        )
    return said


def advise(summary: Summary, replay: Profile | None = None) -> Advice:
    if replay is not None:
        summary.profile.check_compatible(replay)
    mixing, mixing_note = mixing_advice(summary, replay)
    return Advice(
        train_head=train_head_advice(summary),
        head_eps=head_epsilon(summary),
        add_data=add_data_advice(summary),
        mixing=mixing,
        mixing_note=mixing_note,
    )


def data_advice_text(row: dict) -> tuple[str, str]:
    """(label, sentence) for one `add_data` row, worded alike in every report."""
    group, risk = row["group"], f"{row['risk_share']:.0%} of the risk"
    if row["covered"]:
        return "broaden", (
            f"{group} carries {risk}, but the corpus is already {row['corpus_share']:.1%} {group} "
            f"(the base model {row['base_share']:.1%}): the starved rows are rarer {group} tokens, which "
            "replay text feeds, not more of the same"
        )
    return "add data", f"{group} carries {risk} (base share {row['base_share']:.1%}, corpus {row['corpus_share']:.1%})"


def mixing_text(mixing: list[dict]) -> str:
    """`0.1% → 0.052 (+0.120 nats), 1% → 0.031 (+0.104 nats), ...`: starved usage, then the forecast."""

    def one(m: dict) -> str:
        share = f"{m['share']:.1%}" if m["share"] < 0.01 else f"{m['share']:.0%}"
        nats = f"{m['forecast_nats']:+.3f} nats" if m.get("forecast_nats") is not None else "beyond a forecast"
        return f"{share} → {m['risk']:.3f} ({nats})"

    return ", ".join(one(m) for m in mixing)
