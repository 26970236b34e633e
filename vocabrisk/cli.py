"""The `vocabrisk` command line: wires the stages together, nothing else."""

from __future__ import annotations

import contextlib
import functools
import json
import sys

import click
from rich.console import Console

from vocabrisk._version import __version__
from vocabrisk.advice import advise
from vocabrisk.compare import diff, rank
from vocabrisk.corpus import ReadOptions
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.errors import VocabriskError
from vocabrisk.profile import Profile, is_profile
from vocabrisk.risk import TrainingPlan
from vocabrisk.scan import AUTO, load_model, scan
from vocabrisk.summary import Summary

EXIT_INPUT_ERROR = 2


def _report_errors(command):
    """Print a VocabriskError as `error: ...` plus its hint, and exit 2 (no traceback)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except VocabriskError as exc:
            err = Console(stderr=True, highlight=False)
            err.print(f"[bold red]error:[/] {exc.message}", markup=True)
            if exc.hint:
                err.print(f"[dim]hint:[/] {exc.hint}", markup=True)
            sys.exit(EXIT_INPUT_ERROR)

    return wrapper


def _options(*options):
    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply


_PLAN = TrainingPlan()
plan_options = _options(
    click.option("--tokens-per-step", type=click.IntRange(min=1), default=_PLAN.tokens_per_step, show_default=True,
                 help="Tokens in one optimizer step (batch size × sequence length × accumulation)."),
    click.option("--steps", type=click.IntRange(min=1), default=_PLAN.steps, show_default=True,
                 help="Optimizer steps of the planned run."),
    click.option("--beta2", type=click.FloatRange(0.0, 1.0, max_open=True), default=_PLAN.beta2, show_default=True,
                 help="Adam's beta2 (second-moment memory ≈ 1/(1-beta2) steps)."),
)  # fmt: skip
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
                      "relies on each token. Default: the model's bundled sample if any, else from the tokenizer."),
    click.option("--strict", is_flag=True, help="Fail on the first skipped file or record instead of reporting it."),
    click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
)  # fmt: skip
format_option = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="vocabrisk")
def main() -> None:
    """Predict how much training on a corpus will make a language model forget, before training."""


class _Scanner:
    """The scan settings shared by `scan` and `rank`, turned into a callable per corpus."""

    def __init__(self, model, text_fields, text_unit, input_format, special_tokens, eos, split_special_tokens,
                 reference, strict, quiet, output_format):  # fmt: skip
        self.loaded = load_model(model)
        self.read_options = ReadOptions(
            text_fields=tuple(text_fields) or ("text",), text_unit=text_unit, input_format=input_format
        )
        self.policy = SpecialTokenPolicy(
            add_special_tokens=special_tokens, append_eos=eos, split_special_tokens=split_special_tokens
        )
        self.strict = strict
        self.err = Console(stderr=True)
        self.quiet = quiet or output_format == "json"
        self.reference = self.profile_of(reference) if reference else AUTO

    def profile_of(self, inputs: tuple[str, ...]) -> Profile:
        """A saved profile as is, or the counts of corpora (with no prior of their own)."""
        if len(inputs) == 1 and is_profile(inputs[0]):
            return Profile.load(inputs[0])
        return self(list(inputs), reference=None)

    def __call__(self, inputs: list[str] | str, reference=AUTO) -> Profile:
        with _progress(self.err, self.quiet) as progress:
            return scan(
                inputs if isinstance(inputs, list) else [inputs],
                self.loaded,
                read_options=self.read_options,
                policy=self.policy,
                strict=self.strict,
                progress=progress,
                reference=self.reference if reference == AUTO else reference,
            )


@main.command("scan")
@click.argument("inputs", nargs=-1, required=True)
@corpus_options
@plan_options
@click.option("--mix", multiple=True, help="A replay corpus (paths or a saved profile) for the what-if mixing advice.")
@click.option("--out", "-o", type=click.Path(file_okay=False), help="Save the profile (tokens.parquet + profile.json).")
@format_option
@_report_errors
def scan_command(inputs, tokens_per_step, steps, beta2, mix, out, output_format, **options):
    """Profile corpora (files, folders, globs, or - for stdin) against MODEL's vocabulary and head."""
    scanner = _Scanner(output_format=output_format, **options)
    profile = scanner(list(inputs))
    if out:
        profile.save(out)
    replay = scanner.profile_of(mix) if mix else None
    summary = Summary.of(profile, TrainingPlan(tokens_per_step=tokens_per_step, steps=steps, beta2=beta2))
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
@plan_options
@format_option
@_report_errors
def rank_command(candidates, tokens_per_step, steps, beta2, output_format, **options):
    """Order candidate corpora by forgetting risk, least risky first.

    Each CANDIDATE is one corpus: a file, a folder, a quoted glob, or a saved profile (not rescanned).
    """
    scanner = _Scanner(output_format=output_format, **options)
    ranked = rank(
        list(candidates),
        scanner.loaded,
        TrainingPlan(tokens_per_step=tokens_per_step, steps=steps, beta2=beta2),
        scan_candidate=scanner,
    )
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
def diff_command(old, new, tokens_per_step, steps, beta2, output_format):
    """What changed between two saved profiles of the same model: risk, starved rows, groups."""
    result = diff(
        Profile.load(old), Profile.load(new), TrainingPlan(tokens_per_step=tokens_per_step, steps=steps, beta2=beta2)
    )
    if output_format == "json":
        click.echo(json.dumps({"old": old, "new": new, **result}, indent=2))
        return
    from vocabrisk.report.terminal import render_diff

    render_diff(old, new, result, _stdout())


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
