"""The CI gate: hold a profile against thresholds and a baseline, and say pass or fail.

A data pipeline runs `vocabrisk gate` before training, the way it runs a linter before
merging: exit 0 when every limit holds, 1 when one is breached, 2 when the gate could not
judge (bad input, bad configuration). Limits are absolute (corpus risk, share of starved
rows, risk carried by one token group) or relative to a baseline profile of the data as it
was, so that a change to the data that raises the risk fails the build even where the
absolute level is accepted.

>>> from vocabrisk import Summary, Thresholds, evaluate, scan
>>> summary = Summary.of(scan(["sample_corpora/"], "demo"))
>>> result = evaluate(summary, Thresholds(max_risk=0.1))
>>> round(summary.risk.score, 3), result.passed, result.exit_code
(0.054, True, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from vocabrisk.compare import check_comparable, diff
from vocabrisk.errors import ProfileError, VocabriskError
from vocabrisk.profile.profile import Profile
from vocabrisk.risk.exposure import BANDS
from vocabrisk.risk.summary import Summary
from vocabrisk.risk.wording import HOW_WELL, format_epochs

EXIT_PASSED = 0
EXIT_BREACHED = 1
ALL_GROUPS = "*"
DEFAULT_MAX_RISK = BANDS[1][0]  # with no limit configured at all, fail on the high band


@dataclass(frozen=True)
class Thresholds:
    """Limits a profile must keep; None means no limit. Risks and shares are in [0, 1]."""

    max_risk: float | None = None
    max_forgetting: float | None = None  # nats: the forecast's total, on the base model's own text
    max_starved_share: float | None = None
    max_group_risk: dict[str, float] = field(default_factory=dict)  # group (or "*") → limit
    max_risk_increase: float = 0.0  # over the baseline's risk, when there is a baseline
    max_skipped_share: float = 0.0  # of the input's bytes; 0: any skipped file or record fails

    @property
    def absolute(self) -> bool:
        return (
            self.max_risk is not None
            or self.max_forgetting is not None
            or self.max_starved_share is not None
            or bool(self.max_group_risk)
        )


@dataclass(frozen=True)
class Check:
    """One limit held against one measured value."""

    rule: str  # max-risk, max-forgetting, max-starved-share, max-group-risk, max-risk-increase
    subject: str  # what was measured, e.g. "corpus risk" or "Hangul risk"
    value: float
    limit: float
    detail: str  # context a reader needs to act on a failure
    holds: bool | None = None  # the verdict where it is not just value <= limit

    @property
    def passed(self) -> bool:
        return self.value <= self.limit if self.holds is None else self.holds

    @property
    def message(self) -> str:
        verdict = "is within" if self.passed else "exceeds" if self.value > self.limit else "fails"
        return f"{self.subject} {self.value:.4f} {verdict} {self.rule} {self.limit:.4f} ({self.detail})"

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "subject": self.subject,
            "value": self.value,
            "limit": self.limit,
            "passed": self.passed,
            "message": self.message,
        }


@dataclass(frozen=True)
class GateResult:
    inputs: tuple[str, ...]  # the corpus paths or saved profile gated, as given
    summary: Summary
    checks: list[Check]
    baseline: dict | None  # `compare.diff` from the baseline, plus its path
    config: str | None = None  # the configuration file the limits came from
    defaulted: bool = False  # no limit was configured, so DEFAULT_MAX_RISK applied

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def subject(self) -> str:
        return " ".join(self.inputs) or "corpus"

    @property
    def exit_code(self) -> int:
        return EXIT_PASSED if self.passed else EXIT_BREACHED

    def to_dict(self) -> dict:
        """Plain data for every output format (text, JSON, GitHub, JUnit, SARIF, Markdown)."""
        return {
            "passed": self.passed,
            "exit_code": self.exit_code,
            "subject": self.subject,
            "inputs": list(self.inputs),
            "config": self.config,
            "default_limit": self.defaulted,
            "checks": [c.to_dict() for c in self.checks],
            "baseline": self.baseline,
            "summary": self.summary.to_dict(),
        }


def evaluate(
    summary: Summary,
    thresholds: Thresholds,
    baseline: Profile | None = None,
    *,
    inputs: Sequence[str] = (),
    baseline_name: str = "baseline",
    config: str | None = None,
) -> GateResult:
    """Hold SUMMARY against THRESHOLDS and, when given, against a BASELINE profile of the same model."""
    defaulted = not thresholds.absolute and baseline is None
    if defaulted:
        thresholds = replace(thresholds, max_risk=DEFAULT_MAX_RISK)
    checks = [*_absolute_checks(summary, thresholds), _skipped_check(summary, thresholds.max_skipped_share)]
    change = None
    if baseline is not None:
        change = _baseline_change(baseline, summary, baseline_name)
        checks.append(
            Check(
                rule="max-risk-increase",
                subject="risk increase over the baseline",
                value=change["risk_after"] - change["risk_before"],
                limit=thresholds.max_risk_increase,
                detail=f"{change['risk_before']:.4f} in {baseline_name} → {change['risk_after']:.4f}; "
                f"{change['newly_starved']:,} rows newly starved",
            )
        )
    return GateResult(tuple(inputs), summary, checks, change, config, defaulted)


def _skipped_check(summary: Summary, limit: float) -> Check:
    """Input the scan could not read: a gate that judged other data than it was given must not pass.

    With limit 0 (the default) any skipped file or record fails, even one whose size is unknown;
    under any limit short of 1, so does a skip that lost an amount that cannot be measured (a
    truncated or corrupt compressed stream).
    """
    profile = summary.profile
    skips = profile.skip_report()
    detail = skips["summary"] or "nothing skipped"
    if skips["examples"]:
        first = skips["examples"][0]
        detail += f"; first: {first['source']}, {first['locator']}: {first['reason']}"
    unmeasured = profile.skips.unmeasured and limit < 1
    if limit == 0 and profile.skipped:
        detail += "; any skip fails: fix the input, or allow some with --max-skipped-share"
    elif unmeasured:
        detail += "; the share is only an estimate, so no limit short of 1 can be shown to hold: fix the input"
    holds = profile.skipped == 0 if limit == 0 else False if unmeasured else None
    return Check("max-skipped-share", "share of the input skipped", skips["share"], limit, detail, holds)


def _absolute_checks(summary: Summary, thresholds: Thresholds) -> list[Check]:
    risk, forecast, coverage = summary.risk, summary.forecast, summary.coverage
    checks = []
    if thresholds.max_risk is not None:
        checks.append(Check("max-risk", "corpus risk", risk.score, thresholds.max_risk, f"band {risk.band}"))
    if thresholds.max_forgetting is not None:
        basis = "" if forecast.old_text else ", no old text: global prior contexts"
        band = f"band {forecast.low:.3f}–{forecast.high:.3f}" if forecast.possible else "beyond what is possible"
        constants = forecast.calibration.described
        checks.append(
            Check(
                "max-forgetting",
                "forecast forgetting (nats)" if forecast.possible else "forecast forgetting (nats, at least)",
                min(forecast.total, forecast.ceiling),  # past the ceiling only the ceiling is a true number
                thresholds.max_forgetting,
                f"{band}, {constants}, {format_epochs(forecast.epochs)} epochs{basis}; {HOW_WELL}",
                holds=None if forecast.possible else False,  # a plan past what is possible fails any limit
            )
        )
    if thresholds.max_starved_share is not None:
        checks.append(
            Check(
                "max-starved-share",
                "share of starved rows",
                coverage.starved_share,
                thresholds.max_starved_share,
                f"{coverage.starved_rows:,} of {coverage.coverable_rows:,} rows",
            )
        )
    groups = {g.group: g for g in summary.groups}
    by_folded = {name.casefold(): name for name in groups}  # `cyrillic` names Cyrillic
    limits = {by_folded.get(name.casefold(), name): limit for name, limit in thresholds.max_group_risk.items()}
    unknown = sorted(set(limits) - set(groups) - {ALL_GROUPS})
    if unknown:
        raise VocabriskError(
            f"max-group-risk names groups this model's vocabulary does not have: {', '.join(unknown)}",
            hint=f"groups here: {', '.join(sorted(groups))}; `{ALL_GROUPS}` limits every group",
        )
    fallback = limits.pop(ALL_GROUPS, None)
    for name, group in groups.items():
        limit = limits.get(name, fallback)
        if limit is not None:
            checks.append(
                Check(
                    "max-group-risk",
                    f"{name} risk",
                    group.risk,
                    limit,
                    f"{group.starved:,} of {group.rows:,} rows starved; "
                    f"corpus share {group.corpus_share:.2%}, base share {group.base_share:.2%}",
                )
            )
    return checks


def _baseline_change(old: Profile, summary: Summary, name: str) -> dict:
    """`compare.diff` from the baseline under the same plan, refused where risks are not on one scale."""
    try:
        check_comparable(old, summary.profile, f"baseline {name}", "this corpus")
    except ProfileError as exc:
        raise ProfileError(f"baseline {name}: {exc.message}", hint=exc.hint) from exc
    return {"path": name, **diff(old, summary.profile, summary.risk.plan)}
