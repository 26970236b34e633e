"""The `vocabrisk` command line: wires the stages together, nothing else."""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape as escape_markup

from vocabrisk._version import __version__
from vocabrisk.advice import advise
from vocabrisk.compare import diff, rank
from vocabrisk.corpus import ReadOptions
from vocabrisk.corpus.hf_stream import input_for
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.engines import ENGINES, engine_for
from vocabrisk.errors import VocabriskError
from vocabrisk.plan import LR_SCHEDULES, SETTINGS, SOURCE_SETTINGS, TRAINS, TrainingPlan, resolve_plan
from vocabrisk.profile import Profile, is_profile
from vocabrisk.report.ci import FORMATS as GATE_FORMATS
from vocabrisk.scan import AUTO, load_model, scan
from vocabrisk.summary import Summary

EXIT_INPUT_ERROR = 2  # bad input, usage or any other error: the command could not do its job
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped with Ctrl-C
_DEBUG = "vocabrisk.debug"


def _report_errors(command):
    """Turn every failure into an exit code a CI can read, with no traceback (unless --debug).

    A VocabriskError prints `error: ...` plus its hint; any other error (a full disk, a bug)
    prints what it was; all exit 2. Ctrl-C exits 130. Outputs are written atomically, so an
    interrupted or failed run leaves none half-written.
    """

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        err = Console(stderr=True, highlight=False)
        debug = click.get_current_context().meta.get(_DEBUG) or os.environ.get("VOCABRISK_DEBUG")
        try:
            return command(*args, **kwargs)
        except VocabriskError as exc:
            if debug:
                raise
            # escaped: messages quote paths, TOML tables and extras (`vocabrisk[report]`) that look like markup
            err.print(f"[bold red]error:[/] {escape_markup(exc.message)}", markup=True)
            if exc.hint:
                err.print(f"[dim]hint:[/] {escape_markup(exc.hint)}", markup=True)
        except KeyboardInterrupt:
            err.print("[bold red]interrupted[/]: nothing was written", markup=True)
            sys.exit(EXIT_INTERRUPTED)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except Exception as exc:
            if debug:
                raise
            what = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.filename else str(exc)
            err.print(f"[bold red]error:[/] {escape_markup(f'{type(exc).__name__}: {what}')}", markup=True)
            err.print("[dim]hint:[/] rerun with --debug for the traceback, and report it if the input is valid",
                      markup=True)  # fmt: skip
        sys.exit(EXIT_INPUT_ERROR)

    return wrapper


def _options(*options):
    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply


_PLAN = TrainingPlan()
_plan_flags = _options(
    click.option("--steps", type=click.IntRange(min=1),
                 help=f"Optimizer steps of the planned run.  [default: {_PLAN.steps:,}]"),
    click.option("--epochs", type=click.FloatRange(min=0.0, min_open=True),
                 help="Or the run's length in epochs over the corpus: the steps follow from its size."),
    click.option("--tokens-per-step", type=click.IntRange(min=1),
                 help="Tokens in one optimizer step (batch size × sequence length × accumulation × GPUs).  "
                      f"[default: {_PLAN.tokens_per_step:,}]"),
    click.option("--training-args", type=click.Path(dir_okay=False),
                 help="Read the plan from a transformers TrainingArguments JSON (to_json_string()). Flags win over "
                      "it, and it wins over the [plan] of the configuration file."),
    click.option("--seq-len", type=click.IntRange(min=1),
                 help="With --training-args: the tokens in one sequence, which TrainingArguments do not say."),
    click.option("--world-size", type=click.IntRange(min=1),
                 help="With --training-args: data-parallel processes (GPUs) sharing each step.  [default: 1]"),
    click.option("--lr", type=click.FloatRange(min=0.0),
                 help=f"Peak learning rate.  [default: {_PLAN.learning_rate:g}]"),
    click.option("--warmup-steps", type=click.IntRange(min=0), help="Linear warmup steps.  [default: 0]"),
    click.option("--lr-schedule", type=click.Choice(LR_SCHEDULES),
                 help="The learning rate after warmup: constant, or decaying to 0.  [default: constant]"),
    click.option("--adam-beta1", type=click.FloatRange(0.0, 1.0, max_open=True), help="Adam's beta1.  [default: 0.9]"),
    click.option("--adam-beta2", "--beta2", "adam_beta2", type=click.FloatRange(0.0, 1.0, max_open=True),
                 help="Adam's beta2 (second-moment memory ≈ 1/(1-beta2) steps).  [default: 0.999]"),
    click.option("--adam-eps", type=click.FloatRange(min=0.0), help="Adam's eps.  [default: 1e-08]"),
    click.option("--weight-decay", type=click.FloatRange(min=0.0), help="AdamW's weight decay.  [default: 0]"),
    click.option("--trains", type=click.Choice(TRAINS),
                 help="What the run trains: everything, all but the output head, LoRA adapters, or LoRA and the "
                      "head.  [default: all]"),
    click.option("--head-eps", type=click.FloatRange(min=0.0, min_open=True),
                 help="Adam's eps for the output head only (the mitigation), if the run raises it."),
)  # fmt: skip


def plan_options(command):
    """The plan flags, handed to COMMAND as one `plan_flags` dict of the flags given (see plan.resolve_plan)."""

    @functools.wraps(command)
    def with_plan_flags(*args, **kwargs):
        given = {name: kwargs.pop(name) for name in (*SETTINGS, *SOURCE_SETTINGS)}
        return command(*args, plan_flags={k: v for k, v in given.items() if v is not None}, **kwargs)

    return _plan_flags(with_plan_flags)


corpus_options = _options(
    click.option("--model", "-m", default="demo", show_default=True,
                 help="`demo`, a local model folder, or a Hugging Face hub id (read from the local cache)."),
    click.option("--text-field", "text_fields", multiple=True,
                 help="JSON field (dotted path) or column with the text; repeat to join several.  [default: text]"),
    click.option("--text-unit", type=click.Choice(["file", "line", "paragraph"]), default="file", show_default=True,
                 help="What one document is in plain-text files."),
    click.option("--input-format", type=click.Choice(["text", "jsonl", "json", "parquet", "csv", "tsv", "arrow"]),
                 help="Read every input (and stdin) as this format."),
    click.option("--special-tokens/--no-special-tokens", default=True, show_default=True,
                 help="Count the special tokens the tokenizer's post-processor adds per document (Llama's <s>)."),
    click.option("--eos", is_flag=True,
                 help="Count one EOS token per document, as pipelines that pack documents with a separator do."),
    click.option("--split-special-tokens", is_flag=True,
                 help="Encode special-token strings found in the text as plain text, not as special tokens."),
    click.option("--reference", "-r", multiple=True,
                 help="Text in the base model's own distribution (paths or a saved profile): how much the model "
                      "relies on each token. Default: the model's bundled sample if any, else --prior."),
    click.option("--prior", type=click.Choice(["auto", "head", "tokenizer", "self-samples"]), default="auto",
                 show_default=True, help="Where the prior comes from when no --reference is given; "
                 "self-samples: text the model generates itself (needs the verify extra)."),
    click.option("--strict", is_flag=True, help="Fail on the first skipped file or record instead of reporting it."),
    click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
)  # fmt: skip
force_option = click.option("--force", is_flag=True, help="Replace a saved profile already at --out.")
format_option = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True
)
engine_options = _options(
    click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
                 help="Where counting runs: this machine, or a Ray cluster (pip install 'vocabrisk[ray]'). "
                      "The profile is the same either way."),
    click.option("--workers", type=click.IntRange(min=1),
                 help="Counting processes (local) or tasks in flight (ray), each counting whole files.  "
                      "[default: local 1, ray every CPU of the cluster]"),
    click.option("--address", help="The Ray cluster to join (auto, ray://HEAD:10001).  [default: start one here]"),
)  # fmt: skip


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="vocabrisk")
@click.option("--debug", is_flag=True, help="Show the traceback of an error (also VOCABRISK_DEBUG=1).")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Predict how much training on a corpus will make a language model forget, before training.

    Exit codes: 0 done (gate: every limit holds), 1 a gate limit breached, 2 bad input, usage or
    any other error, 130 interrupted.
    """
    ctx.meta[_DEBUG] = debug


class _Scanner:
    """The scan settings shared by `scan` and `rank`, turned into a callable per corpus."""

    def __init__(self, model, text_fields, text_unit, input_format, special_tokens, eos, split_special_tokens,
                 reference, prior, strict, quiet, output_format, engine="local", workers=None,
                 address=None):  # fmt: skip
        self.loaded = load_model(model)
        self.read_options = ReadOptions(
            text_fields=tuple(text_fields) or ("text",), text_unit=text_unit, input_format=input_format
        )
        self.policy = SpecialTokenPolicy(
            add_special_tokens=special_tokens, append_eos=eos, split_special_tokens=split_special_tokens
        )
        self.strict = strict
        self.engine = engine_for(engine, workers, address)
        self.err = Console(stderr=True)
        self.quiet = quiet or output_format == "json"
        self.prior = prior
        self.reference = self.profile_of(reference, "--reference") if reference else AUTO

    def profile_of(self, inputs: tuple[str, ...], option: str) -> Profile:
        """A saved profile as is, or the counts of corpora (with no prior of their own)."""
        if len(inputs) == 1 and is_profile(inputs[0]):
            return Profile.load(inputs[0])
        for path in inputs:
            if "://" not in path and path != "-" and not glob.has_magic(path) and not os.path.exists(path):
                raise VocabriskError(f"{option} {path}: not found", hint=f"check the path given to {option}")
        return self(list(inputs), reference=None, prior="tokenizer")

    def __call__(self, inputs: list[str] | str, reference=AUTO, prior=None, checkpoint=None, resume=False) -> Profile:
        with _progress(self.err, self.quiet) as progress:
            return scan(
                inputs if isinstance(inputs, list) else [inputs],
                self.loaded,
                read_options=self.read_options,
                policy=self.policy,
                strict=self.strict,
                progress=progress,
                reference=self.reference if reference == AUTO else reference,
                prior=prior or self.prior,
                engine=self.engine,
                checkpoint=checkpoint,
                resume=resume,
            )


@main.command("scan")
@click.argument("inputs", nargs=-1)
@corpus_options
@engine_options
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False),
    help="Save each file's counts in this folder as it is done, so that --resume can continue the scan.",
)
@click.option("--resume", is_flag=True, help="Continue the scan whose counts are in --checkpoint; count only the rest.")
@click.option(
    "--hf-dataset",
    "hf_datasets",
    multiple=True,
    metavar="NAME[:CONFIG]",
    help="Also stream a Hugging Face dataset (a hub id, which needs network, or a local folder).",
)
@click.option("--split", default="train", show_default=True, help="The split of --hf-dataset to read.")
@plan_options
@click.option("--mix", multiple=True, help="A replay corpus (paths or a saved profile) for the what-if mixing advice.")
@click.option("--out", "-o", type=click.Path(file_okay=False), help="Save the profile (tokens.parquet + profile.json).")
@force_option
@format_option
@_report_errors
def scan_command(inputs, checkpoint, resume, hf_datasets, split, plan_flags, mix, out, force, output_format,
                 **options):  # fmt: skip
    """Profile corpora (files, folders, globs, URLs such as s3://bucket/prefix/, or - for stdin) against
    MODEL's vocabulary and head."""
    inputs = [*inputs, *(input_for(name, split) for name in hf_datasets)]
    if not inputs:
        raise click.UsageError("name a corpus: files, folders, globs, URLs, - for stdin, or --hf-dataset NAME")
    if resume and not checkpoint:
        raise click.UsageError("--resume continues from a checkpoint folder: add --checkpoint DIR")
    _check_outputs(out, force, checkpoint=checkpoint)
    plan = _plan(plan_flags)
    scanner = _Scanner(output_format=output_format, **options)
    replay = scanner.profile_of(mix, "--mix") if mix else None  # first: a bad --mix fails before the long scan
    profile = scanner(inputs, checkpoint=checkpoint, resume=resume)
    if out:
        profile.save(out, overwrite=force)
    summary = Summary.of(profile, plan)
    advice = advise(summary, replay)
    if output_format == "json":
        click.echo(json.dumps({**summary.to_dict(), "advice": advice.to_dict(), "saved_to": out}, indent=2))
        return
    from vocabrisk.report.terminal import render_scan

    render_scan(summary, advice, _stdout())
    if out:
        scanner.err.print(f"profile saved to {out}")


@main.command("rank")
@click.argument("candidates", nargs=-1, required=True)
@corpus_options
@engine_options
@plan_options
@format_option
@_report_errors
def rank_command(candidates, plan_flags, output_format, **options):
    """Order candidate corpora by forgetting risk, least risky first.

    Each CANDIDATE is one corpus: a file, a folder, a quoted glob, or a saved profile (not rescanned).
    """
    plan = _plan(plan_flags)
    scanner = _Scanner(output_format=output_format, **options)
    ranked = rank(list(candidates), scanner.loaded, plan, scan_candidate=scanner)
    rows = [r.row() for r in ranked]
    if output_format == "json":
        click.echo(json.dumps({"model": scanner.loaded.files.name, "candidates": rows}, indent=2))
        return
    from vocabrisk.report.terminal import render_rank

    render_rank(rows, ranked[0].summary.risk, _stdout())


@main.command("diff")
@click.argument("old", type=click.Path(exists=True, file_okay=False))
@click.argument("new", type=click.Path(exists=True, file_okay=False))
@plan_options
@format_option
@_report_errors
def diff_command(old, new, plan_flags, output_format):
    """What changed between two saved profiles of the same model: risk, starved rows, groups."""
    result = diff(Profile.load(old), Profile.load(new), _plan(plan_flags))
    if output_format == "json":
        click.echo(json.dumps({"old": old, "new": new, **result}, indent=2))
        return
    from vocabrisk.report.terminal import render_diff

    render_diff(old, new, result, _stdout())


@main.command("gate")
@click.argument("inputs", nargs=-1, required=True)
@corpus_options
@engine_options
@plan_options
@click.option(
    "--max-forgetting",
    type=click.FloatRange(min=0.0),
    metavar="NATS",
    help="Fail when the forecast forgetting (rise of loss on the base model's own text) is above NATS.",
)
@click.option("--max-risk", type=click.FloatRange(0.0, 1.0), help="Fail when the starved-usage risk is above this.")
@click.option(
    "--max-starved-share",
    type=click.FloatRange(0.0, 1.0),
    help="Fail when a larger share of the head's coverable rows is starved.",
)
@click.option(
    "--max-group-risk",
    "group_limits",
    multiple=True,
    metavar="GROUP=LIMIT",
    help="Fail when one token group carries more risk than LIMIT; `*=LIMIT` for every group. Repeatable.",
)
@click.option(
    "--baseline",
    type=click.Path(file_okay=False),
    help="A saved profile of the data as it was: fail when the risk rises over it by more than allowed.",
)
@click.option(
    "--max-risk-increase",
    type=click.FloatRange(0.0, 1.0),
    help="Allowed rise of the risk over the baseline.  [default: 0]",
)
@click.option(
    "--max-skipped-share",
    type=click.FloatRange(0.0, 1.0),
    help="Allowed share of the input's bytes left unread (bad records, unsupported files).  "
    "[default: 0, any skip fails]",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Read limits from this TOML file, not from the nearest vocabrisk.toml or pyproject.toml.",
)
@click.option(
    "--out", "-o", type=click.Path(file_okay=False), help="Save the profile, to report on it later without rescanning."
)
@force_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(GATE_FORMATS),
    default="text",
    show_default=True,
    help="Print the result for people (text), scripts (json), GitHub annotations, JUnit, Markdown or SARIF.",
)
@click.option(
    "--report",
    "reports",
    multiple=True,
    metavar="FORMAT=PATH",
    help="Also write the result in FORMAT to PATH (e.g. junit=gate.xml); repeatable.",
)
@click.pass_context
@_report_errors
def gate_command(ctx, inputs, plan_flags, max_forgetting, max_risk, max_starved_share, group_limits, baseline,
                 max_risk_increase, max_skipped_share, config_file, out, force, output_format, reports,
                 **options):  # fmt: skip
    """Fail a data pipeline whose corpus would make MODEL forget too much. Exit 0 pass, 1 breach, 2 error.

    INPUTS is a corpus (files, folders, globs) or one saved profile, which is not rescanned. Limits come
    from flags, else from `[tool.vocabrisk.gate]` in the nearest pyproject.toml (or `[gate]` in a
    vocabrisk.toml); with no limit anywhere, the gate fails on the high band.
    """
    from vocabrisk.config import load_config
    from vocabrisk.gate import Thresholds, evaluate
    from vocabrisk.outputs import write_atomic
    from vocabrisk.report.ci import format_result, render_text

    config = load_config(Path(config_file) if config_file else None)
    flag_or_config = functools.partial(_flag_or_config, ctx)
    plan = resolve_plan(plan_flags, config.plan)
    options["model"] = flag_or_config("model", options["model"], config.model)
    thresholds = Thresholds(
        max_risk=flag_or_config("max_risk", max_risk, config.max_risk),
        max_forgetting=flag_or_config("max_forgetting", max_forgetting, config.max_forgetting),
        max_starved_share=flag_or_config("max_starved_share", max_starved_share, config.max_starved_share),
        max_group_risk={**config.max_group_risk, **dict(_key_value(g, "--max-group-risk") for g in group_limits)},
        max_risk_increase=flag_or_config("max_risk_increase", max_risk_increase, config.max_risk_increase) or 0.0,
        max_skipped_share=flag_or_config("max_skipped_share", max_skipped_share, config.max_skipped_share) or 0.0,
    )
    outputs = [_report_target(r) for r in reports]
    baseline = baseline or config.baseline
    if not baseline and (max_risk_increase is not None or config.max_risk_increase is not None):
        raise click.UsageError("--max-risk-increase needs a baseline: --baseline DIR, or `baseline` in the config")
    if baseline and out and Path(out).resolve() == Path(baseline).resolve():
        raise click.UsageError("--out would overwrite the baseline it is compared with; save it elsewhere")
    _check_outputs(out, force, reports=[path for _, path in outputs])
    baseline_profile = Profile.load(baseline) if baseline else None
    if len(inputs) == 1 and is_profile(inputs[0]):
        profile = Profile.load(inputs[0])
    else:
        options["quiet"] = options["quiet"] or output_format != "text"
        profile = _Scanner(output_format=output_format, **options)(list(inputs))
    if out:
        profile.save(out, overwrite=force)
    result = evaluate(Summary.of(profile, plan), thresholds, baseline_profile, inputs=inputs,
                      baseline_name=str(baseline), config=str(config.path) if config.path else None)  # fmt: skip
    data = result.to_dict()
    for name, path in outputs:
        write_atomic(path, format_result(data, name), "report")
    if output_format == "text":
        render_text(data, _stdout())
    else:
        click.echo(format_result(data, output_format), nl=False)
    ctx.exit(result.exit_code)


def _check_outputs(out: str | None, force: bool, reports=(), checkpoint: str | None = None) -> None:
    """Every output checked before any input is read, so a long run never ends unable to save."""
    from vocabrisk.outputs import check_profile_target, check_writable

    if out:
        check_profile_target(out, force)
    for path in reports:
        if path != "-":
            check_writable(path, "report")
    if checkpoint:
        check_writable(checkpoint, "checkpoint folder", folder=True)


def _flag_or_config(ctx: click.Context, name: str, value, configured):
    """A flag given on the command line wins; else the configuration file's value; else the flag's default."""
    given = ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    return value if given or configured is None else configured


def _plan(plan_flags: dict) -> TrainingPlan:
    """The plan from flags over the nearest configuration file's, as `gate` and `report` judge under."""
    from vocabrisk.config import load_config

    return resolve_plan(plan_flags, load_config().plan)


def _key_value(text: str, option: str) -> tuple[str, float]:
    """GROUP=LIMIT (group names may hold spaces: `code symbols=0.05`)."""
    key, sep, value = text.rpartition("=")
    try:
        limit = float(value)
    except ValueError:
        limit = -1.0
    if not sep or not key or not 0.0 <= limit <= 1.0:
        raise click.BadParameter(f"{text!r} is not GROUP=LIMIT with LIMIT from 0 to 1", param_hint=option)
    return key, limit


def _report_target(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not path or name not in GATE_FORMATS:
        raise click.BadParameter(f"{text!r} is not FORMAT=PATH with FORMAT one of {', '.join(GATE_FORMATS)}",
                                 param_hint="--report")  # fmt: skip
    return name, path


@main.command("report")
@click.argument("profiles", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@plan_options
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write a self-contained HTML page with plots (- for stdout).",
)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the same content as Markdown tables, e.g. for a CI job summary (- for stdout).  "
    "[default: printed, when no --html is named]",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Read the training plan from this TOML file, not from the nearest vocabrisk.toml or pyproject.toml.",
)
@_report_errors
def report_command(profiles, plan_flags, html_path, markdown_path, config_file):
    """Report on saved profiles: coverage by base-model usage, risk by group, top tokens, advice.

    Several profiles of the same model are ranked, least risky first. Save profiles with
    `vocabrisk scan CORPUS --out DIR` or `vocabrisk gate CORPUS --out DIR`. The training plan
    comes from flags, else from the same configuration file as the gate's limits.
    """
    from vocabrisk.config import load_config
    from vocabrisk.outputs import write_atomic
    from vocabrisk.report.content import build_report
    from vocabrisk.report.html import render_html
    from vocabrisk.report.markdown import render_markdown

    if not html_path and not markdown_path:
        markdown_path = "-"  # nothing named: print the report
    _check_outputs(None, False, reports=[path for path in (html_path, markdown_path) if path])
    config = load_config(Path(config_file) if config_file else None)
    plan = resolve_plan(plan_flags, config.plan)
    report = build_report(profiles, plan)
    err = Console(stderr=True, highlight=False)
    for path, render in ((html_path, render_html), (markdown_path, render_markdown)):
        if path == "-":
            click.echo(render(report), nl=False)
        elif path:
            write_atomic(path, render(report), "report")
            err.print(f"wrote {path}")


verify_options = _options(
    click.option("--steps", type=click.IntRange(min=1), default=150, show_default=True, help="Optimizer steps."),
    click.option("--lr", type=click.FloatRange(min=0.0), default=1e-3, show_default=True, help="AdamW learning rate."),
    click.option("--tokens-per-step", type=click.IntRange(min=1), default=2048, show_default=True,
                 help="Tokens in one optimizer step (batch = tokens-per-step / seq-len windows)."),
    click.option("--seq-len", type=click.IntRange(min=2), default=128, show_default=True, help="Window length."),
    click.option("--beta1", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.9, show_default=True),
    click.option("--beta2", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.999, show_default=True),
    click.option("--adam-eps", type=click.FloatRange(min=0.0), default=1e-8, show_default=True,
                 help="AdamW eps of every parameter (the head's too, except in the --compare-eps run)."),
    click.option("--weight-decay", type=click.FloatRange(min=0.0), default=0.0, show_default=True),
    click.option("--warmup-steps", type=click.IntRange(min=0), default=15, show_default=True,
                 help="Linear warmup steps of the learning rate."),
    click.option("--grad-clip", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
                 help="Clip the global gradient norm (0: off)."),
    click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N."),
    click.option("--bf16", is_flag=True, help="bfloat16 autocast (GPU only); weights stay float32."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed of the data order."),
)  # fmt: skip


@main.command("verify")
@click.argument("inputs", nargs=-1, required=True)
@corpus_options
@verify_options
@click.option("--compare-eps", is_flag=True, help="Train again with Adam's eps raised for the output head only.")
@click.option("--head-eps", type=click.FloatRange(min=0.0, min_open=True),
              help="The head eps for --compare-eps.  [default: from the plain run's measured gradients]")  # fmt: skip
@click.option("--heldout-share", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.1,
              show_default=True, help="Share of the corpus's tokens held out to measure learning.")  # fmt: skip
@click.option("--eval-windows", type=click.IntRange(min=1), default=64, show_default=True,
              help="Windows of old text (and of held-out text) to evaluate on.")  # fmt: skip
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write a PNG of the measurements.")
@format_option
@_report_errors
def verify_command(inputs, model, text_fields, text_unit, input_format, special_tokens, eos, split_special_tokens,
                   reference, prior, strict, quiet, compare_eps, head_eps, heldout_share, eval_windows,
                   plot_path, output_format, **train):  # fmt: skip
    """Fine-tune a copy of MODEL briefly on the corpus and measure what the scan predicted.

    Measures each head row's drift, forgetting on old text (--reference, the model's bundled
    sample, or else samples the base model generates itself), learning on held-out new text,
    where forgetting lives (head restored, head only) and what restoring rows after training
    recovers, and compares the predicted per-row risk with the measured drift. Needs the
    `verify` extra: pip install 'vocabrisk[verify]'.
    """
    try:
        from vocabrisk.verify.run import TrainConfig, VerifyConfig, verify
    except ImportError as exc:
        raise VocabriskError(f"verify needs torch and transformers ({exc})",
                             hint="pip install 'vocabrisk[verify]'") from exc  # fmt: skip
    if any(is_profile(r) for r in reference):
        raise VocabriskError("verify measures forgetting on old text: --reference must be text, not a saved profile")
    if prior != "auto":
        raise click.UsageError("verify predicts with the prior of its old text (--reference); drop --prior")
    train["grad_clip"] = train["grad_clip"] or None
    config = VerifyConfig(
        train=TrainConfig(eps=train.pop("adam_eps"), **train),
        compare_eps=compare_eps,
        head_eps=head_eps,
        heldout_share=heldout_share,
        eval_windows=eval_windows,
    )
    err = Console(stderr=True, highlight=False)
    result = verify(
        list(inputs),
        model,
        config,
        reference=list(reference) or None,
        read_options=ReadOptions(text_fields=tuple(text_fields) or ("text",), text_unit=text_unit,
                                 input_format=input_format),
        policy=SpecialTokenPolicy(add_special_tokens=special_tokens, append_eos=eos,
                                  split_special_tokens=split_special_tokens),
        strict=strict,
        log=None if quiet or output_format == "json" else (lambda message: err.print(f"[dim]{message}[/]")),
    )  # fmt: skip
    if plot_path:
        from vocabrisk.verify.report import plot_verify

        plot_verify(result, plot_path)
        err.print(f"plot written to {plot_path}")
    if output_format == "json":
        click.echo(json.dumps(result.report, indent=2))
        return
    from vocabrisk.verify.report import render_verify

    render_verify(result, _stdout())


@main.command("calibrate")
@click.option(
    "--model", default="demo", show_default=True, help="Base model: a local folder, hub id in the cache, or 'demo'."
)
@click.option(
    "--probe",
    "probes",
    multiple=True,
    required=True,
    type=click.Path(exists=True),
    help="Generic text the model did not see, not one of your candidates (repeatable; two or more).",
)
@click.option(
    "--reference",
    multiple=True,
    type=click.Path(exists=True),
    help="Old text, in the base model's own distribution, to measure forgetting on. "
    "[default: the model's bundled sample]",
)
@verify_options
@click.option(
    "--eval-windows",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Windows of old text to evaluate on.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@format_option
@_report_errors
def calibrate_command(model, probes, reference, eval_windows, quiet, output_format, **train):  # fmt: skip
    """Fit the forecast's constants to MODEL from short fine-tunes on probe text.

    Each probe is trained on whole and as its first quarter; the forgetting measured on old text
    fixes kappa (how far rows move per unit of learning rate), head_gain and body_gain (how
    repetition adds to it), saved under ~/.cache/vocabrisk/calibration/ where later scans of the
    same model find them. Needs the `verify` extra: pip install 'vocabrisk[verify]'.
    """
    try:
        from vocabrisk.verify.probes import calibrate
        from vocabrisk.verify.train import TrainConfig
    except ImportError as exc:
        raise VocabriskError(f"calibrate needs torch and transformers ({exc})",
                             hint="pip install 'vocabrisk[verify]'") from exc  # fmt: skip
    train["grad_clip"] = train["grad_clip"] or None
    err = Console(stderr=True, highlight=False)
    result = calibrate(
        list(probes),
        model,
        TrainConfig(eps=train.pop("adam_eps"), **train),
        reference=list(reference) or None,
        eval_windows=eval_windows,
        log=(lambda _m: None) if quiet or output_format == "json" else (lambda m: err.print(f"[dim]{m}[/]")),
    )
    data = {"calibration": result.calibration.to_dict(), "saved": str(result.path), "runs": result.runs}
    if output_format == "json":
        click.echo(json.dumps(data, indent=2))
        return
    from vocabrisk.report.terminal import render_calibration

    render_calibration(data, _stdout())


def _stdout() -> Console:
    """The report console; wide enough for the tables when stdout is a pipe or a CI log."""
    console = Console()
    return console if console.is_terminal else Console(width=160)


def _progress(console: Console, quiet: bool):
    """A live progress bar on an interactive terminal; nothing in CI, pipes or --quiet."""
    if quiet or not console.is_terminal:
        return contextlib.nullcontext(None)
    from vocabrisk.report.progress import RichScanProgress

    return RichScanProgress(console)


if __name__ == "__main__":
    main()
