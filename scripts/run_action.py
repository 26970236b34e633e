"""Run a composite GitHub Action's steps here, the way the Actions runner runs them.

    python scripts/run_action.py --input corpus=data/train --input model=demo --workspace ../my-data-repo

The steps run in order. A step's `if:` is an expression (with or without `${{ }}`), `success() && ...`
unless it calls a status function, so that once a step fails only `always()`/`failure()` steps run. The
`${{ }}` expressions of its `env`, `with`, `working-directory` and `run` are evaluated over the contexts
`inputs` (the action's defaults under those given), `steps` (outputs, outcome), `github` (action_path,
workspace), `runner` (os, temp) and `env`. A `run:` step is written to a file and run by `bash --noprofile
--norc -eo pipefail FILE` in its working directory (relative to the workspace), with GITHUB_OUTPUT,
GITHUB_ENV, GITHUB_PATH and GITHUB_STEP_SUMMARY each a fresh file, read back after it: outputs, variables
and PATH entries for the later steps, and the job summary. Workflow commands in its output (`::error
title=...::message`) are the annotations the run shows. A `uses:` step runs another action, which cannot
run here: it is recorded with its `with:` evaluated, so that what it would be given can be checked (or run
by a stand-in given to `run_action`). The action's `outputs` are evaluated last.

Expressions: literals ('text', numbers, true, false, null), context properties (`inputs.max-risk`),
`!`, `==`, `!=`, `<`, `<=`, `>`, `>=` (strings compared ignoring case, other mixed types as numbers, as
GitHub does), `&&`, `||`, parentheses, and the status functions. Nothing else of GitHub's language.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")
_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<op>==|!=|<=|>=|&&|\|\||[!<>()])"
    r"|(?P<call>[A-Za-z_]\w*)\(\s*\)|(?P<name>[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*))"
)
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_COMMAND = re.compile(r"^::(?P<kind>error|warning|notice)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


class ExpressionError(ValueError):
    """An expression this runner cannot read."""


# ---- expressions ----------------------------------------------------------------------------
class _Parser:
    """Recursive descent over GitHub's expression grammar, lowest precedence first: || && comparisons ! primary."""

    def __init__(self, text: str, contexts: dict, status: str):
        self.text, self.contexts, self.status = text, contexts, status
        self.tokens = self._tokens(text)
        self.at = 0

    def _tokens(self, text: str) -> list[tuple[str, str]]:
        tokens, position = [], 0
        while position < len(text):
            if not text[position:].strip():
                break
            match = _TOKEN.match(text, position)
            if not match:
                raise ExpressionError(f"cannot read {text[position:]!r} in {text!r}")
            kind = match.lastgroup
            tokens.append((kind, match.group(kind)))
            position = match.end()
        return tokens

    def value(self) -> object:
        result = self._or()
        if self.at != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.at][1]!r} in {self.text!r}")
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def _or(self) -> object:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> object:
        left = self._comparison()
        while self._peek() == "&&":
            self._take()
            right = self._comparison()
            left = right if truthy(left) else left
        return left

    def _comparison(self) -> object:
        left = self._unary()
        if self._peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self._take()[1]
            return compare(left, op, self._unary())
        return left

    def _unary(self) -> object:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        return self._primary()

    def _primary(self) -> object:
        kind, text = self._take()
        if text == "(":
            inner = self._or()
            if self._take()[1] != ")":
                raise ExpressionError(f"a parenthesis is not closed in {self.text!r}")
            return inner
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(text)
        if kind == "call":
            if text not in STATUS_FUNCTIONS:
                raise ExpressionError(f"{text}() is not a function this runner knows")
            return {
                "success": self.status == "success",
                "failure": self.status == "failure",
                "always": True,
                "cancelled": False,
            }[text]
        if kind == "name":
            if text in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[text]
            value: object = self.contexts
            for part in text.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            return value
        raise ExpressionError(f"unexpected {text!r} in {self.text!r}")


def truthy(value: object) -> bool:
    """GitHub's falsy values: false, 0, -0, '', null (and NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (False, 0, "", None)


def _number(value: object) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip()) if value.strip() else 0.0
        except ValueError:
            return math.nan
    return math.nan


def compare(left: object, op: str, right: object) -> bool:
    """A comparison as GitHub makes it: strings ignoring case, any other pair of values as numbers."""
    if isinstance(left, str) and isinstance(right, str):
        a, b = left.casefold(), right.casefold()
        if op in ("==", "!="):
            return (a == b) == (op == "==")
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    x, y = _number(left), _number(right)
    if op in ("==", "!="):
        return (x == y) == (op == "==")
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


def evaluate(text: str, contexts: dict, status: str = "success") -> object:
    """The value of one expression (the text inside `${{ }}`)."""
    return _Parser(text, contexts, status).value()


def as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def substitute(text: str, contexts: dict, status: str = "success") -> str:
    """TEXT with each `${{ expression }}` replaced by its value as text."""
    return _EXPRESSION.sub(lambda m: as_text(evaluate(m.group(1), contexts, status)), text)


def condition_holds(condition: object, contexts: dict, status: str) -> bool:
    """Whether a step's `if:` lets it run; none means `success()`."""
    if condition is None:
        return status == "success"
    text = str(condition).strip()
    whole = _EXPRESSION.fullmatch(text)
    text = whole.group(1) if whole else text
    if not any(re.search(rf"\b{name}\(\s*\)", text) for name in STATUS_FUNCTIONS):
        text = f"success() && ({text})"
    return truthy(evaluate(text, contexts, status))


# ---- the runner -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Annotation:
    kind: str  # error, warning, notice
    properties: dict[str, str]
    message: str


@dataclass
class StepRun:
    name: str
    id: str | None
    outcome: str  # success, failure, skipped; "not run" for a `uses:` step without a stand-in
    uses: str | None = None
    inputs: dict[str, str] = field(default_factory=dict)  # a `uses:` step's `with:`, evaluated
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]
    summary: str  # the job summary the steps wrote
    annotations: list[Annotation]
    conclusion: str  # success or failure

    def step(self, name: str) -> StepRun:
        return next(step for step in self.steps if step.name == name)


# A stand-in for an action a `uses:` step names: given the step's evaluated `with:` and the runner's state,
# it does what that action would (e.g. setup-python puts a Python on the PATH).
StandIn = Callable[[dict[str, str], "Runner"], None]


class Runner:
    """The state of one job: its variables, PATH entries, steps' outputs, summary and annotations."""

    def __init__(self, action: Path, workspace: Path, temp: Path, env: dict[str, str]):
        self.action, self.workspace, self.temp = action, workspace, temp
        self.env = dict(env)  # what GITHUB_ENV added, and the caller's extra variables
        self.path: list[str] = []  # GITHUB_PATH entries, the latest first
        self.steps: dict[str, dict] = {}
        self.summary = ""
        self.annotations: list[Annotation] = []
        self.status = "success"

    def contexts(self, inputs: dict[str, str]) -> dict:
        return {
            "inputs": inputs,
            "steps": self.steps,
            "env": self.env,
            "github": {"action_path": str(self.action.parent), "workspace": str(self.workspace)},
            "runner": {"os": "Linux", "arch": "X64", "temp": str(self.temp)},
        }

    def run_script(self, script: str, env: dict[str, str], cwd: Path, number: int) -> StepRun:
        files = {
            name: self.temp / f"{name.lower()}-{number}" for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH")
        }
        files["GITHUB_STEP_SUMMARY"] = self.temp / f"step_summary-{number}"
        for path in files.values():
            path.write_text("")
        script_file = self.temp / f"step-{number}.sh"
        script_file.write_text(script)
        environ = {
            **os.environ,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_ACTION_PATH": str(self.action.parent),
            "RUNNER_TEMP": str(self.temp),
            "RUNNER_OS": "Linux",
            **self.env,
            **env,
            **{name: str(path) for name, path in files.items()},
        }
        environ["PATH"] = os.pathsep.join([*self.path, environ.get("PATH", "")])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            cwd=cwd,
            env=environ,
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.env.update(_key_values(files["GITHUB_ENV"].read_text()))
        self.path = [line for line in files["GITHUB_PATH"].read_text().splitlines() if line][::-1] + self.path
        self.summary += files["GITHUB_STEP_SUMMARY"].read_text()
        self.annotations += [a for line in done.stdout.splitlines() if (a := _annotation(line))]
        outcome = "success" if done.returncode == 0 else "failure"
        outputs = _key_values(files["GITHUB_OUTPUT"].read_text())
        return StepRun(
            "", None, outcome, returncode=done.returncode, stdout=done.stdout, stderr=done.stderr, outputs=outputs
        )


def _key_values(text: str) -> dict[str, str]:
    """NAME=VALUE lines and NAME<<DELIMITER blocks, as GITHUB_OUTPUT and GITHUB_ENV hold them."""
    values, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            values[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


def _unescape(text: str, properties: bool) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if properties else [])
    for escaped, plain in [*pairs, ("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def _annotation(line: str) -> Annotation | None:
    match = _COMMAND.match(line)
    if not match:
        return None
    properties = {}
    for pair in filter(None, (match["props"] or "").split(",")):
        key, _, value = pair.partition("=")
        properties[key.strip()] = _unescape(value, properties=True)
    return Annotation(match["kind"], properties, _unescape(match["message"], properties=False))


def run_action(
    inputs: dict[str, str],
    workspace: Path,
    action: Path = ROOT / "action.yml",
    env: dict[str, str] | None = None,
    stand_ins: dict[str, StandIn] | None = None,
) -> ActionRun:
    """Run ACTION's steps in WORKSPACE with INPUTS (over the action's defaults); ENV are the job's variables."""
    spec = yaml.safe_load(action.read_text(encoding="utf-8"))
    if spec["runs"].get("using") != "composite":
        raise ValueError(f"{action}: not a composite action")
    declared = spec.get("inputs") or {}
    unknown = sorted(set(inputs) - set(declared))
    if unknown:
        raise ValueError(f"{action} has no input {', '.join(unknown)}")
    values = {name: str(entry.get("default", "")) for name, entry in declared.items()} | inputs
    with tempfile.TemporaryDirectory(prefix="runner-temp-") as temp:
        runner = Runner(action.resolve(), workspace.resolve(), Path(temp), env or {})
        contexts = runner.contexts(values)
        runs = []
        for number, step in enumerate(spec["runs"]["steps"]):
            name = step.get("name") or step.get("uses") or f"step {number}"
            if not condition_holds(step.get("if"), contexts, runner.status):
                record = StepRun(name, step.get("id"), "skipped")
            elif "uses" in step:
                with_ = {k: substitute(str(v), contexts, runner.status) for k, v in (step.get("with") or {}).items()}
                uses = step["uses"]
                stand_in = (stand_ins or {}).get(uses.split("@")[0])
                if stand_in:
                    stand_in(with_, runner)
                record = StepRun(name, step.get("id"), "success" if stand_in else "not run", uses, with_)
            else:
                if step.get("shell") != "bash":
                    raise ValueError(f"step {name!r}: this runner runs `shell: bash` steps only")
                env = {k: substitute(str(v), contexts, runner.status) for k, v in (step.get("env") or {}).items()}
                cwd = runner.workspace / substitute(str(step.get("working-directory", ".")), contexts, runner.status)
                record = runner.run_script(substitute(step["run"], contexts, runner.status), env, cwd, number)
                record.name, record.id = name, step.get("id")
                if record.outcome == "failure":
                    runner.status = "failure"
            if record.id:
                runner.steps[record.id] = {"outputs": record.outputs, "outcome": record.outcome}
            runs.append(record)
        outputs = {
            name: substitute(str(entry.get("value", "")), contexts)
            for name, entry in (spec.get("outputs") or {}).items()
        }
        conclusion = "success" if runner.status == "success" else "failure"
        return ActionRun(runs, outputs, runner.summary, runner.annotations, conclusion)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--action", type=Path, default=ROOT / "action.yml")
    parser.add_argument("--workspace", type=Path, default=Path.cwd(), help="the repository the job checked out")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    inputs = dict(text.split("=", 1) for text in args.input)
    done = run_action(inputs, args.workspace, args.action)
    for step in done.steps:
        print(f"--- {step.name}: {step.outcome}" + (f" ({step.uses} {step.inputs})" if step.uses else ""))
        sys.stdout.write(step.stdout)
        sys.stderr.write(step.stderr)
    for annotation in done.annotations:
        print(f"[{annotation.kind}] {annotation.properties.get('title', '')}: {annotation.message}")
    print(f"--- outputs: {done.outputs}\n--- job: {done.conclusion}")
    return 0 if done.conclusion == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
