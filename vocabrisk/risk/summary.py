"""What a profile and its risk say: the single source for every report format.

A summary reads the profile's per-token columns beside the risk's (exposure, contribution,
starved) and derives from them, once each, what the commands and reports show: coverage,
token groups, the starved tokens that cost most, usage bands. They are typed attributes;
`to_dict()` is only their JSON form.

Float sums are taken with numpy over each group's rows in token-id order, as the risk score
is, so the numbers are the same to the last bit whichever way the rows are grouped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from vocabrisk.corpus.skips import human_bytes
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.calibration import Calibration, load_calibration
from vocabrisk.risk.exposure import RiskResult, assess, never_seen_share, unigram_kl
from vocabrisk.risk.forecast import Forecast, Replay, forecast, self_alike
from vocabrisk.risk.plan import TrainingPlan
from vocabrisk.risk.wording import RISK_BANDS, RISK_MEANING, plan_text, trust_text

if TYPE_CHECKING:
    import polars as pl

TOP_TOKENS = 15
MOSTLY_SKIPPED = 0.5  # a skipped share of the input's bytes past which the numbers describe the lesser part
USAGE_BANDS = 10
# The columns a summary adds to the profile's, and where each comes from: (profile or risk, attribute).
RISK_COLUMNS = {
    "coverable": ("profile", "coverable"),
    "share": ("profile", "shares"),
    "base_share": ("risk", "prior"),
    "exposure": ("risk", "exposure"),
    "contribution": ("risk", "contribution"),
    "starved": ("risk", "starved"),
}


@dataclass(frozen=True)
class Coverage:
    """How many of the head's coverable rows the corpus uses, never shows, and starves."""

    coverable_rows: int
    used_rows: int
    absent_rows: int
    starved_rows: int

    @property
    def used_share(self) -> float:
        return self.used_rows / self.coverable_rows if self.coverable_rows else 0.0

    @property
    def starved_share(self) -> float:
        return self.starved_rows / self.coverable_rows if self.coverable_rows else 0.0


@dataclass(frozen=True)
class GroupRisk:
    """One token group: its rows, how many the corpus uses, leaves absent or starved, and the risk it carries."""

    group: str
    rows: int
    used: int
    absent: int
    starved: int
    corpus_share: float
    base_share: float
    risk: float


@dataclass(frozen=True)
class TokenAtRisk:
    """A starved token the base model uses: what its row's drift costs."""

    token_id: int
    token: str
    group: str
    count: int
    base_share: float
    exposure: float


@dataclass(frozen=True)
class UsageBand:
    """One slice of the coverable rows ranked by the base model's use: how many the corpus feeds or starves."""

    band: str  # "top 10%", "10–20%", ...
    upto: int  # percent of the rows up to the end of this slice
    rows: int
    fed: int
    seen_starved: int
    never_seen: int
    base_share: float
    risk: float


def old_usage(profile: Profile) -> np.ndarray | None:
    """The old text's token counts over coverable rows, where the prior came from text; else None."""
    if profile.reference_counts is None:
        return None
    return np.where(profile.coverable, profile.reference_counts, 0).astype(np.float64)


def _forecast(
    profile: Profile, risk: RiskResult, shares: np.ndarray, calibration: Calibration, budget: float | None = None,
    curve: bool = True, replay: Replay | None = None,
) -> Forecast:  # fmt: skip
    """The forecast of a corpus with these token SHARES (the profile's, or a mix's with its REPLAY) under RISK's
    plan."""
    return forecast(
        shares, risk.exposure, risk.prior, profile.old_text, risk.plan, profile.total_tokens, calibration,
        old_usage=old_usage(profile), width=head.hidden if (head := profile.model.get("head")) else None,
        budget=budget, curve=curve, replay=replay,
    )  # fmt: skip


@dataclass(frozen=True)
class WhatIf:
    """A what-if of the same plan on another token distribution (`Summary.mixed`)."""

    risk: RiskResult
    forecast: Forecast


@dataclass(frozen=True)
class Summary:
    profile: Profile
    risk: RiskResult
    forecast: Forecast

    @classmethod
    def of(
        cls, profile: Profile, plan: TrainingPlan | None = None, calibration: Calibration | None = None,
        budget: float | None = None, old_loss: float | Callable[[Profile], float | None] | None = None,
    ) -> Summary:  # fmt: skip
        """The risk and the forecast of a profile under a plan; the model's saved calibration by default.
        With BUDGET (nats), the forecast says at which step of the plan it is crossed. OLD_LOSS, the base
        model's mean loss on the old text in nats per token (or what measures it from the profile), replaces
        the calibration's (forecast term 6)."""
        if plan is not None and not isinstance(plan, TrainingPlan):
            raise TypeError(
                f"Summary.of: plan must be a TrainingPlan, not {type(plan).__name__} {plan!r}; "
                "for example TrainingPlan(steps=1000, tokens_per_step=2048)"
            )
        plan = plan or TrainingPlan()
        risk = assess(profile, plan)
        calibration = calibration or load_calibration(profile.calibration_key, profile.weights_key)
        if callable(old_loss):
            old_loss = old_loss(profile)
        if old_loss is not None:
            calibration = replace(calibration, old_loss=float(old_loss))
        return cls(profile, risk, _forecast(profile, risk, profile.shares, calibration, budget))

    def mixed(self, replay: np.ndarray, share: float, curve: bool = True) -> WhatIf:
        """The risk and forecast had SHARE of the plan's tokens been replay text with token shares REPLAY
        (what `--mix` advises on). With `curve` False, the forecast is at the plan's last step alone (what
        the advice reads).

        Token distributions add (the head's view). The body's forgetting stays the corpus's, over its
        fewer passes (1 - SHARE of the plan's tokens), less what the replay protects as far as it is the
        old text's kind (`forecast.Replay`, term 8), and its predictability H the corpus's own. The plan
        (its steps and tokens) and the old text stay: replay takes SHARE of what each step trains on."""
        if not 0.0 <= share < 1.0:
            raise ValueError(f"a replay share is in [0, 1), not {share}")
        p = self.profile
        shares = (1.0 - share) * p.shares + share * np.asarray(replay, dtype=np.float64)
        risk = assess(p, self.risk.plan, shares=shares)
        kind = Replay.of(share, replay, self._old_counts, self._self_alike, p.shares, self.risk.exposure)
        return WhatIf(risk, _forecast(p, risk, shares, self.forecast.calibration, curve=curve, replay=kind))

    @cached_property
    def _old_counts(self) -> np.ndarray:
        """The old text's token counts (the prior standing in without them), as term 8 compares replay to."""
        usage = old_usage(self.profile)
        return self.risk.prior if usage is None else usage

    @cached_property
    def _self_alike(self) -> float:
        """What the old text's halves score against each other (term 8's yardstick), once per summary."""
        return self_alike(self.profile.old_text, len(self.risk.prior))

    # ---- the columns ----------------------------------------------------------------
    def column(self, name: str) -> np.ndarray | None:
        """A profile column (`vocabrisk.profile.token_table.COLUMNS`) or one the risk adds: coverable, share (of
        the corpus), base_share (the prior over coverable rows), exposure, contribution (base_share ×
        exposure) and starved. None for `reference_count` where the prior came from no reference."""
        if name not in RISK_COLUMNS:
            return self.profile.column(name)
        return self._risk_column(name)

    def _risk_column(self, name: str) -> np.ndarray:
        owner, attribute = RISK_COLUMNS[name]
        return getattr(getattr(self, owner), attribute)

    def to_polars(self) -> pl.DataFrame:
        """The profile's table with the risk's columns, one row per token id, to explore in a notebook.

        >>> import vocabrisk
        >>> summary = vocabrisk.Summary.of(vocabrisk.scan(["sample_corpora/korean-notes.txt"], "demo"))
        >>> summary.to_polars().columns[-6:]
        ['coverable', 'share', 'base_share', 'exposure', 'contribution', 'starved']
        """
        import polars as pl

        return self.profile.to_polars().with_columns(pl.Series(name, self.column(name)) for name in RISK_COLUMNS)

    # ---- what it says ----------------------------------------------------------------
    @property
    def encoder(self) -> bool:
        """An encoder (BERT) has no causal output head: the head risk does not apply to it."""
        return bool(self.profile.model.get("encoder"))

    @cached_property
    def trust(self) -> str:
        """How far to trust the risk, given the model and the prior behind it."""
        return trust_text(self.profile, self.encoder)

    @cached_property
    def coverage(self) -> Coverage:
        coverable, seen = self.profile.coverable, self.profile.table.count > 0
        return Coverage(
            coverable_rows=int(coverable.sum()),
            used_rows=int((coverable & seen).sum()),
            absent_rows=int((coverable & ~seen).sum()),
            starved_rows=int(self.risk.starved.sum()),
        )

    @cached_property
    def group_rows(self) -> dict[str, np.ndarray]:
        """The coverable rows of each token group, in token-id order, groups by name."""
        rows = np.flatnonzero(self.profile.coverable)
        groups = self.profile.groups[rows]
        names = sorted(set(groups))
        code = {name: i for i, name in enumerate(names)}
        which = np.fromiter(map(code.__getitem__, groups), dtype=np.intp, count=rows.size)
        by_group = np.split(rows[np.argsort(which, kind="stable")], np.cumsum(np.bincount(which))[:-1])
        return dict(zip(names, by_group, strict=True))

    @cached_property
    def groups(self) -> list[GroupRisk]:
        """Per token group of coverable rows, the group carrying most risk first (ties by name)."""
        count, starved = self.profile.table.count, self.risk.starved
        shares, base, contribution = (self._risk_column(name) for name in ("share", "base_share", "contribution"))
        result = [
            GroupRisk(
                group=name,
                rows=int(ids.size),
                used=int((count[ids] > 0).sum()),
                absent=int((count[ids] == 0).sum()),
                starved=int(starved[ids].sum()),
                corpus_share=float(shares[ids].sum()),
                base_share=float(base[ids].sum()),
                risk=float(contribution[ids].sum()),
            )
            for name, ids in self.group_rows.items()
        ]
        return sorted(result, key=lambda g: -g.risk)

    @cached_property
    def top_at_risk(self) -> list[TokenAtRisk]:
        """The TOP_TOKENS starved tokens the base model uses most: the rows whose drift costs most.

        Ties (a data-free prior gives many tokens the same share) go to the tokens the corpus
        holds fewest of, then to longer tokens (more specific text to add), then by id.
        """
        contribution, count, tokens = self.risk.contribution, self.profile.table.count, self.profile.table.token
        rows = np.flatnonzero(contribution > 0)
        if rows.size > TOP_TOKENS:  # only rows at or above the TOP_TOKENS-th contribution can be listed
            cut = np.partition(contribution[rows], rows.size - TOP_TOKENS)[rows.size - TOP_TOKENS]
            rows = rows[contribution[rows] >= cut]
        lengths = np.fromiter(map(len, tokens[rows]), dtype=np.int64, count=rows.size)
        top = rows[np.lexsort((rows, -lengths, count[rows], -contribution[rows]))[:TOP_TOKENS]]
        groups, base, exposure = self.profile.groups, self.risk.prior, self.risk.exposure
        return [
            TokenAtRisk(
                token_id=int(i),
                token=str(tokens[i]),
                group=str(groups[i]),
                count=int(count[i]),
                base_share=float(base[i]),
                exposure=float(exposure[i]),
            )
            for i in top
        ]

    @cached_property
    def top_at_risk_ties(self) -> int:
        """How many tokens not listed in `top_at_risk` tie with the last one listed."""
        shown = self.top_at_risk
        if len(shown) < TOP_TOKENS:
            return 0
        contribution = self.risk.contribution
        tied = np.isclose(contribution, contribution[shown[-1].token_id], rtol=1e-9, atol=0.0)
        return int(tied.sum()) - sum(1 for t in shown if tied[t.token_id])

    @cached_property
    def usage_bands(self) -> list[UsageBand]:
        """Coverable rows ranked by the base model's use, cut into USAGE_BANDS equal slices, most used first.

        They show whether the corpus starves rows the model barely uses (harmless) or its everyday ones.
        """
        r = self.risk
        rows = np.flatnonzero(self.profile.coverable)
        order = rows[np.argsort(-r.prior[rows], kind="stable")]
        seen = self.profile.table.count > 0
        result = []
        for i, part in enumerate(np.array_split(order, USAGE_BANDS)):
            if part.size == 0:
                continue
            start, end = i * 100 // USAGE_BANDS, (i + 1) * 100 // USAGE_BANDS
            result.append(
                UsageBand(
                    band=f"top {end}%" if i == 0 else f"{start}–{end}%",
                    upto=end,
                    rows=int(part.size),
                    fed=int((seen[part] & ~r.starved[part]).sum()),
                    seen_starved=int((seen[part] & r.starved[part]).sum()),
                    never_seen=int((~seen[part]).sum()),
                    base_share=float(r.prior[part].sum()),
                    risk=float(r.contribution[part].sum()),
                )
            )
        return result

    @property
    def implied_epochs(self) -> float | None:
        """How many times the plan goes over this corpus."""
        return self.risk.plan.implied_epochs(self.profile.total_tokens)

    @cached_property
    def warnings(self) -> list[str]:
        """What a reader should know before trusting the numbers: what a saved profile lacks, a plan that
        repeats the corpus, an input mostly skipped."""
        p = self.profile
        warnings = [*p.notes]
        if repeats := self.risk.plan.repeats_warning(p.total_tokens):
            warnings.append(repeats)
        if p.skipped and p.skipped_share >= MOSTLY_SKIPPED:
            warnings.append(
                f"{p.skipped_share:.0%} of the input was skipped ({p.skips.text}): every number here describes "
                f"only the {human_bytes(p.text_bytes)} that was read; fix what was skipped and scan again"
            )
        return warnings

    @cached_property
    def plan_text(self) -> str:
        """The plan in one line, with how many times it goes over this corpus."""
        return plan_text({"plan": self.risk.plan.to_dict(), "implied_epochs": self.implied_epochs})

    @cached_property
    def top_groups(self) -> list[str]:
        """The (up to) three groups carrying most risk: where the risk sits."""
        return [g.group for g in self.groups[:3] if g.risk > 0]

    @cached_property
    def baselines(self) -> dict[str, float]:
        """The naive baselines the risk is checked against: rows never seen, and unigram KL."""
        return {"never_seen_share": never_seen_share(self.profile), "unigram_kl": unigram_kl(self.profile)}

    def risk_dict(self) -> dict:
        r = self.risk
        return {
            "score": r.score,
            "band": r.band,
            "prior": r.prior_source,
            "plan": r.plan.to_dict(),
            "implied_epochs": self.implied_epochs,
            "meaning": RISK_MEANING,
            "bands": RISK_BANDS,
            "applies": not self.encoder,
            "trust": self.trust,
        }

    def to_dict(self) -> dict:
        """The summary as JSON-ready data (`scan --format json`, the gate's JSON)."""
        p, c = self.profile, self.coverage
        return {
            "tool_version": p.tool_version,
            "model": p.model["name"],
            "tokenizer": p.tokenizer,
            "head": p.head.to_dict() if p.head else None,
            "head_note": p.model.get("head_note"),
            "documents": p.documents,
            "text_bytes": p.text_bytes,
            "tokens": p.total_tokens,
            "vocab_size": p.vocab_size,
            "coverable_rows": c.coverable_rows,
            "used_rows": c.used_rows,
            "used_share": c.used_share,
            "absent_rows": c.absent_rows,
            "starved_rows": c.starved_rows,
            "forecast": self.forecast.to_dict(),
            "risk": self.risk_dict(),
            "groups": [asdict(g) for g in self.groups],
            "top_at_risk": [asdict(t) for t in self.top_at_risk],
            "top_at_risk_ties": self.top_at_risk_ties,
            "policy": p.policy,
            "read_options": p.read_options,
            "sources": p.sources,
            "skipped": p.skipped,
            "skipped_examples": p.skipped_examples,
            "warnings": self.warnings,
            "skips": p.skip_report(),
        }
