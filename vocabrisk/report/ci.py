"""A gate result in the formats CI systems read; each formatter takes a `GateResult`.

- `text`: for people reading a log; `json`: for scripts.
- `github`: the text, then workflow commands (`::error title=...::message`) that GitHub
  Actions turns into annotations on the run and, for a single corpus file, on that file.
- `junit`: one test case per check; GitLab, Jenkins, Azure and CircleCI show these as tests.
- `sarif`: SARIF 2.1.0 with one result per breached limit, for code-scanning dashboards.
- `markdown`: a job summary (`$GITHUB_STEP_SUMMARY`) or a merge-request comment.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from xml.etree import ElementTree

from rich.console import Console
from rich.text import Text

from vocabrisk._version import __version__
from vocabrisk.gate import Check, GateResult
from vocabrisk.report.markdown import code, escape, facts, groups_table, table, tokens_table
from vocabrisk.storage.outputs import json_text

RULES = {
    "max-risk": "The corpus's forgetting risk (prior-weighted exposure of output-head rows) is above its limit.",
    "max-forgetting": "The forecast rise of loss on the base model's own text is above its limit.",
    "max-starved-share": "Too large a share of the output head's rows would be starved by the corpus.",
    "max-group-risk": "One token group (a script, digits, code symbols...) carries more risk than its limit.",
    "max-risk-increase": "The data change raises the forgetting risk over the baseline profile by more than allowed.",
    "max-skipped-share": "Part of the input could not be read (unsupported, corrupt or missing the text field), "
    "so the gate judged other data than it was given.",
}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def format_result(result: GateResult, name: str) -> str:
    return {
        "text": to_text,
        "json": to_json,
        "github": to_github,
        "junit": to_junit,
        "markdown": to_markdown,
        "sarif": to_sarif,
    }[name](result)


def format_error(message: str, hint: str | None, name: str) -> str:
    """A gate that could not judge (exit 2), in format NAME: what overwrites each report it was asked for, so
    that CI shows the error, never the result an earlier run left there."""
    full = f"{message} (hint: {hint})" if hint else message
    if name == "json":
        error = {"passed": False, "exit_code": 2, "error": {"message": message, "hint": hint}}
        return json_text(error, indent=2, ensure_ascii=False) + "\n"
    if name == "github":
        return _workflow_command("error", {"title": "vocabrisk gate error"}, full) + "\n"
    if name == "junit":
        suites = ElementTree.Element("testsuites", name="vocabrisk gate", tests="1", failures="0", errors="1")
        suite = ElementTree.SubElement(suites, "testsuite", name="vocabrisk gate", tests="1", failures="0",
                                       errors="1", skipped="0")  # fmt: skip
        case = ElementTree.SubElement(suite, "testcase", classname="vocabrisk.gate", name="gate", time="0")
        ElementTree.SubElement(case, "error", message=message, type="error").text = hint
        return _xml(suites)
    if name == "sarif":
        notification = {"level": "error", "message": {"text": full}}
        invocation = {"executionSuccessful": False, "exitCode": 2, "toolExecutionNotifications": [notification]}
        return _sarif_log([], [invocation], {"passed": False, "error": message})
    if name == "markdown":
        return f"## vocabrisk gate ⚠️ error: it could not judge the corpus\n\n{escape(message)}\n" + (
            f"\n_hint: {escape(hint)}_\n" if hint else ""
        )
    return f"vocabrisk gate ERROR  {full}\n"


def render_text(result: GateResult, console: Console) -> None:
    """One line per check, never wrapped, so a log can be searched for what failed."""
    print_line = functools.partial(console.print, soft_wrap=True)
    s = result.summary
    verdict = Text("PASSED", style="bold green") if result.passed else Text("FAILED", style="bold red")
    print_line(Text.assemble("vocabrisk gate ", verdict, f"  {result.subject}"))
    print_line(
        Text(
            f"  model {s.profile.model['name']} · {s.profile.total_tokens:,} tokens · "
            f"forecast {s.forecast.headline} nats · starved usage {s.risk.score:.3f} ({s.risk.band}) · "
            f"{s.coverage.starved_rows:,} of {s.coverage.coverable_rows:,} rows starved",
            style="dim",
        )
    )
    print_line(Text(f"  plan: {s.plan_text}", style="dim"))
    for warning in s.warnings:
        print_line(Text(f"  warning: {warning}", style="yellow"))
    shown, held = _readable_checks(result.checks)
    for check in shown:
        mark = Text("  ✓ ", style="green") if check.passed else Text("  ✗ ", style="bold red")
        print_line(Text.assemble(mark, check.message))
    if held:
        print_line(Text.assemble(Text("  ✓ ", style="green"), held))
    baseline = result.baseline
    if baseline and baseline["newly_starved_tokens"]:
        tokens = " ".join(t["token"] for t in baseline["newly_starved_tokens"][:10])
        print_line(Text(f"  newly starved, most used first: {tokens}", style="dim"))
    print_line(Text(f"  {_limits_origin(result)}", style="dim"))


def to_text(result: GateResult) -> str:
    buffer = io.StringIO()
    render_text(result, Console(file=buffer, width=160, color_system=None, highlight=False))
    return buffer.getvalue()


def to_json(result: GateResult) -> str:
    return json_text(result.to_dict(), indent=2, ensure_ascii=False) + "\n"


def to_github(result: GateResult) -> str:
    """The text report, then one annotation per breached limit (or a notice that all held)."""
    inputs = result.inputs
    properties = {"title": "vocabrisk gate"}
    if len(inputs) == 1 and Path(inputs[0]).is_file():
        properties["file"] = inputs[0]
    lines = [to_text(result).rstrip("\n")]
    for warning in result.summary.warnings:
        lines.append(_workflow_command("warning", {**properties, "title": "vocabrisk warning"}, warning))
    for check in result.checks:
        if not check.passed:
            lines.append(_workflow_command("error", {**properties, "title": f"vocabrisk {check.rule}"}, check.message))
    if result.passed:
        verdict = (
            f"passed {len(result.checks)} checks: forecast {result.summary.forecast.headline} nats, "
            f"starved usage {result.summary.risk.score:.4f}"
        )
        lines.append(_workflow_command("notice", properties, f"{result.subject}: {verdict}"))
    return "\n".join(lines) + "\n"


def _workflow_command(kind: str, properties: dict, message: str) -> str:
    def value(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    props = ",".join(f"{k}={value(v).replace(':', '%3A').replace(',', '%2C')}" for k, v in properties.items())
    return f"::{kind} {props}::{value(message)}"


def to_junit(result: GateResult) -> str:
    checks = result.checks
    failures = str(sum(not c.passed for c in checks))
    suites = ElementTree.Element("testsuites", name="vocabrisk gate", tests=str(len(checks)), failures=failures)
    suite = ElementTree.SubElement(
        suites, "testsuite", name=f"vocabrisk gate: {result.subject}", tests=str(len(checks)),
        failures=failures, errors="0", skipped="0",
    )  # fmt: skip
    properties = ElementTree.SubElement(suite, "properties")
    s = result.summary
    for name, value in (
        ("model", s.profile.model["name"]),
        ("risk", f"{s.risk.score:.6f}"),
        ("band", s.risk.band),
        ("starved_rows", str(s.coverage.starved_rows)),
        ("limits", _limits_origin(result)),
    ):
        ElementTree.SubElement(properties, "property", name=name, value=value)
    for check in checks:
        case = ElementTree.SubElement(
            suite, "testcase", classname=f"vocabrisk.gate.{check.rule}", name=check.subject, time="0"
        )
        if not check.passed:
            failure = ElementTree.SubElement(case, "failure", message=check.message, type=check.rule)
            failure.text = RULES[check.rule]
    return _xml(suites)


def _xml(root: ElementTree.Element) -> str:
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def to_sarif(result: GateResult) -> str:
    locations = [{"physicalLocation": {"artifactLocation": {"uri": _uri(p)}}} for p in result.inputs]
    results = [
        {
            "ruleId": check.rule,
            "level": "error",
            "message": {"text": check.message},
            "locations": locations,
            "properties": {"value": check.value, "limit": check.limit},
        }
        for check in result.checks
        if not check.passed
    ]
    invocation = {"executionSuccessful": True, "exitCode": result.exit_code}
    return _sarif_log(results, [invocation], {"risk": result.summary.risk_dict(), "passed": result.passed})


def _sarif_log(results: list[dict], invocations: list[dict], properties: dict) -> str:
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "vocabrisk",
                        "version": __version__,
                        "rules": [
                            {"id": rule, "shortDescription": {"text": text}, "defaultConfiguration": {"level": "error"}}
                            for rule, text in RULES.items()
                        ],
                    }
                },
                "invocations": invocations,
                "results": results,
                "properties": properties,
            }
        ],
    }
    return json_text(log, indent=2, ensure_ascii=False) + "\n"


def _uri(path: str) -> str:
    p = Path(path)
    return p.resolve().as_uri() if p.is_absolute() else p.as_posix()


def to_markdown(result: GateResult) -> str:
    s = result.summary
    verdict = "✅ passed" if result.passed else "❌ failed"
    parts = [
        f"## vocabrisk gate {verdict}: {escape(result.subject)}",
        "",
        table(["", "check", "value", "limit"], _check_rows(result.checks), align="llrr"),
        "",
    ]
    baseline = result.baseline
    if baseline:
        parts.append(
            f"**Baseline** {escape(baseline['path'])}: risk {baseline['risk_before']:.4f} → "
            f"{baseline['risk_after']:.4f}, {baseline['newly_starved']:,} rows newly starved, "
            f"{baseline['no_longer_starved']:,} no longer starved."
        )
        if baseline["newly_starved_tokens"]:
            tokens = " ".join(code(t["token"]) for t in baseline["newly_starved_tokens"][:10])
            parts.append(f"Newly starved, most used first: {tokens}")
        parts.append("")
    parts += [
        f"_{escape(_limits_origin(result))}_",
        "",
        "<details><summary>Profile</summary>",
        "",
        facts(s),
        "",
        groups_table(s.groups),
        "",
        tokens_table(s.top_at_risk),
        "",
        "</details>",
    ]
    return "\n".join(parts) + "\n"


def _readable_checks(checks: list[Check]) -> tuple[list[Check], str | None]:
    """The checks to list one by one, and a line for the group limits that held.

    `--max-group-risk '*=...'` makes one check per token group, dozens for a large vocabulary:
    a reader needs the groups that broke their limit, and only the closest call of the rest.
    """
    held = [c for c in checks if c.passed and c.rule == "max-group-risk"]
    if len(held) < 2:
        return checks, None
    top = max(held, key=lambda c: c.value - c.limit)
    shown = [c for c in checks if not (c.passed and c.rule == "max-group-risk")]
    return shown, (
        f"{len(held)} token groups within max-group-risk (closest: {top.subject} {top.value:.4f}, "
        f"limit {top.limit:.4f})"
    )


def _check_rows(checks: list[Check]) -> list[list[str]]:
    shown, held = _readable_checks(checks)
    rows = [
        ["✅" if c.passed else "❌", f"{escape(c.subject)} ({c.rule})", f"{c.value:.4f}", f"{c.limit:.4f}"]
        for c in shown
    ]
    return rows + ([["✅", escape(held), "", ""]] if held else [])


def _limits_origin(result: GateResult) -> str:
    if result.defaulted:
        return "no limit set: the default max-risk fails the high band"
    return f"configuration file: {result.config}" if result.config else "limits from command-line flags"
