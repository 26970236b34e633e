"""What a profile and its risk say, as plain data: the single source for every report format."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vocabrisk.plan import TrainingPlan
from vocabrisk.profile import Profile
from vocabrisk.risk import RiskResult, assess

TOP_TOKENS = 15


@dataclass(frozen=True)
class Summary:
    profile: Profile
    risk: RiskResult

    @classmethod
    def of(cls, profile: Profile, plan: TrainingPlan | None = None) -> Summary:
        return cls(profile, assess(profile, plan or TrainingPlan()))

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
        """The starved tokens the base model uses most: the rows whose drift costs most."""
        p, r = self.profile, self.risk
        order = np.argsort(-r.contribution, kind="stable")
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
            "risk": {
                "score": r.score,
                "band": r.band,
                "prior": r.prior_source,
                "plan": r.plan.to_dict(),
                "meaning": "prior-weighted share of output-head rows expected to drift under one-sided Adam updates",
            },
            "groups": self.groups(),
            "top_at_risk": self.top_at_risk(),
            "policy": p.policy,
            "read_options": p.read_options,
            "sources": p.sources,
            "skipped": p.skipped,
            "skipped_examples": p.skipped_examples,
        }
