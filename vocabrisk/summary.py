"""What a profile and its risk say, as plain data: the single source for every report format."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocabrisk.forecast import Calibration, Forecast, forecast, load_calibration, model_key
from vocabrisk.plan import TrainingPlan
from vocabrisk.profile import Profile
from vocabrisk.risk import RiskResult, assess

TOP_TOKENS = 15


@dataclass(frozen=True)
class Summary:
    profile: Profile
    risk: RiskResult
    forecast: Forecast

    @classmethod
    def of(cls, profile: Profile, plan: TrainingPlan | None = None, calibration: Calibration | None = None) -> Summary:
        """The risk and the forecast of a profile under a plan; the model's saved calibration by default."""
        plan = plan or TrainingPlan()
        risk = assess(profile, plan)
        calibration = calibration or load_calibration(model_key(profile.model, profile.tokenizer))
        predicted = forecast(
            profile.shares, risk.exposure, risk.prior, profile.old_text, plan, profile.total_tokens, calibration
        )
        return cls(profile, risk, predicted)

    @property
    def encoder(self) -> bool:
        """An encoder (BERT) has no causal output head: the head risk does not apply to it."""
        return bool(self.profile.model.get("encoder"))

    def trust(self) -> str:
        """How far to trust the risk, given the model and the prior behind it."""
        p = self.profile
        if self.encoder:
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

    def groups(self) -> list[dict]:
        """Per token group: rows, how many the corpus uses, leaves absent or starved, and risk carried."""
        p, r = self.profile, self.risk
        coverable = p.coverable
        rows = []
        for name in sorted(set(p.groups[coverable])):
            mask = (p.groups == name) & coverable
            rows.append(
                {
                    "group": name,
                    "rows": int(mask.sum()),
                    "used": int((mask & (p.counts.counts > 0)).sum()),
                    "absent": int((mask & (p.counts.counts == 0)).sum()),
                    "starved": int((mask & r.starved).sum()),
                    "corpus_share": float(p.shares[mask].sum()),
                    "base_share": float(r.prior[mask].sum()),
                    "risk": float(r.contribution[mask].sum()),
                }
            )
        rows.sort(key=lambda g: -g["risk"])
        return rows

    def top_at_risk(self, k: int = TOP_TOKENS) -> list[dict]:
        """The starved tokens the base model uses most: the rows whose drift costs most.

        Ties (a data-free prior gives many tokens the same share) go to the tokens the corpus
        holds fewest of, then to longer tokens (more specific text to add), then by id.
        """
        p, r = self.profile, self.risk
        lengths = np.array([len(token) for token in p.tokens])
        order = np.lexsort((np.arange(p.vocab_size), -lengths, p.counts.counts, -r.contribution))
        rows = []
        for token_id in order[:k]:
            if r.contribution[token_id] <= 0:
                break
            rows.append(
                {
                    "token_id": int(token_id),
                    "token": p.tokens[token_id],
                    "group": str(p.groups[token_id]),
                    "count": int(p.counts.counts[token_id]),
                    "base_share": float(r.prior[token_id]),
                    "exposure": float(r.exposure[token_id]),
                }
            )
        return rows

    def ties_after_top(self, k: int = TOP_TOKENS) -> int:
        """How many tokens not listed in `top_at_risk` tie with the last one listed."""
        shown = self.top_at_risk(k)
        if len(shown) < k:
            return 0
        last = self.risk.contribution[shown[-1]["token_id"]]
        tied = np.isclose(self.risk.contribution, last, rtol=1e-9, atol=0.0)
        return int(tied.sum()) - sum(1 for t in shown if tied[t["token_id"]])

    @property
    def implied_epochs(self) -> float | None:
        """How many times the plan goes over this corpus."""
        return self.risk.plan.implied_epochs(self.profile.total_tokens)

    def warnings(self) -> list[str]:
        """What a reader should know before trusting the numbers: today, a plan that repeats the corpus."""
        warning = self.risk.plan.repeats_warning(self.profile.total_tokens)
        return [warning] if warning else []

    def to_dict(self) -> dict:
        p, r = self.profile, self.risk
        coverable = int(p.coverable.sum())
        return {
            "tool_version": p.tool_version,
            "model": p.model["name"],
            "tokenizer": p.tokenizer,
            "head": p.model.get("head"),
            "head_note": p.model.get("head_note"),
            "documents": p.documents,
            "text_bytes": p.text_bytes,
            "tokens": p.total_tokens,
            "vocab_size": p.vocab_size,
            "coverable_rows": coverable,
            "used_rows": p.used_rows(),
            "used_share": p.used_rows() / coverable if coverable else 0.0,
            "absent_rows": int(p.absent_rows().sum()),
            "starved_rows": int(r.starved.sum()),
            "forecast": self.forecast.to_dict(),
            "risk": {
                "score": r.score,
                "band": r.band,
                "prior": r.prior_source,
                "plan": r.plan.to_dict(),
                "implied_epochs": self.implied_epochs,
                "meaning": "starved usage: prior-weighted share of output-head rows expected to drift under "
                "one-sided Adam updates (secondary: it names the rows, the forecast ranks corpora)",
                "bands": "low < 0.05 ≤ medium < 0.20 ≤ high",
                "applies": not self.encoder,
                "trust": self.trust(),
            },
            "groups": self.groups(),
            "top_at_risk": self.top_at_risk(),
            "top_at_risk_ties": self.ties_after_top(),
            "policy": p.policy,
            "read_options": p.read_options,
            "sources": p.sources,
            "skipped": p.skipped,
            "skipped_examples": p.skipped_examples,
            "warnings": self.warnings(),
            "skips": p.skip_report(),
        }


def skipped_text(skips: dict, example: bool = True) -> str:
    """One line on what a scan left out, for every report: "nothing", or how much and the first case."""
    if not skips["files"] and not skips["records"]:
        return "nothing"
    text = f"{skips['summary']}, {skips['share']:.1%} of the input"
    if example and skips["examples"]:
        first = skips["examples"][0]
        text += f"; first: {first['source']}, {first['locator']}: {first['reason']}"
    return text
