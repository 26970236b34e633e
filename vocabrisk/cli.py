"""The `vocabrisk` command line: wires the stages together, nothing else."""

from __future__ import annotations

import contextlib
import functools
import json
import sys

import click
from rich.console import Console

from vocabrisk._version import __version__
from vocabrisk.corpus import ReadOptions
from vocabrisk.counting import SpecialTokenPolicy
from vocabrisk.errors import VocabriskError
from vocabrisk.risk import TrainingPlan
from vocabrisk.scan import load_model, scan
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


def plan_options(command):
    """Options describing the planned fine-tuning run (see `vocabrisk.risk`)."""
    defaults = TrainingPlan()
    for option in reversed(
        [
            click.option(
                "--tokens-per-step",
                type=click.IntRange(min=1),
                default=defaults.tokens_per_step,
                show_default=True,
                help="Tokens in one optimizer step (batch size × sequence length × accumulation).",
            ),
            click.option(
                "--steps",
                type=click.IntRange(min=1),
                default=defaults.steps,
                show_default=True,
                help="Optimizer steps of the planned run.",
            ),
            click.option(
                "--beta2",
                type=click.FloatRange(0.0, 1.0, max_open=True),
                default=defaults.beta2,
                show_default=True,
                help="Adam's beta2 (second-moment memory ≈ 1/(1-beta2) steps).",
            ),
        ]
    ):
        command = option(command)
    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="vocabrisk")
def main() -> None:
    """Predict how much training on a corpus will make a language model forget, before training."""


@main.command("scan")
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "--model",
    "-m",
    default="demo",
    show_default=True,
    help="`demo`, a local model folder, or a Hugging Face hub id (read from the local cache).",
)
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False),
    help="Save the profile (tokens.parquet + profile.json) to this folder.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Report format on stdout.",
)
@click.option(
    "--text-field",
    "text_fields",
    multiple=True,
    help="JSON field (dotted path) or table column holding the text; repeat to join several.  [default: text]",
)
@click.option(
    "--text-unit",
    type=click.Choice(["file", "line", "paragraph"]),
    default="file",
    show_default=True,
    help="What one document is in plain-text files.",
)
@click.option(
    "--input-format",
    type=click.Choice(["text", "jsonl", "json", "parquet", "csv", "tsv", "arrow"]),
    help="Read every input (and stdin) as this format.",
)
@click.option(
    "--special-tokens/--no-special-tokens",
    default=True,
    show_default=True,
    help="Count the special tokens the tokenizer's post-processor adds per document (Llama's <s>, BERT's [CLS]/[SEP]).",
)
@click.option(
    "--eos",
    is_flag=True,
    help="Count one EOS token per document, as pipelines that pack documents with a separator do.",
)
@click.option(
    "--split-special-tokens",
    is_flag=True,
    help="Encode special-token strings found in the text as plain text, not as special tokens.",
)
@plan_options
@click.option(
    "--strict", is_flag=True, help="Fail on the first skipped file or record instead of skipping and reporting."
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@_report_errors
def scan_command(
    inputs,
    model,
    out,
    output_format,
    text_fields,
    text_unit,
    input_format,
    special_tokens,
    eos,
    split_special_tokens,
    tokens_per_step,
    steps,
    beta2,
    strict,
    quiet,
):
    """Profile corpora (files, folders, globs, or - for stdin) against MODEL's vocabulary and head."""
    read_options = ReadOptions(
        text_fields=tuple(text_fields) or ("text",), text_unit=text_unit, input_format=input_format
    )
    policy = SpecialTokenPolicy(
        add_special_tokens=special_tokens, append_eos=eos, split_special_tokens=split_special_tokens
    )
    plan = TrainingPlan(tokens_per_step=tokens_per_step, steps=steps, beta2=beta2)
    err = Console(stderr=True)
    loaded = load_model(model)
    with _progress(err, quiet or output_format == "json") as progress:
        profile = scan(list(inputs), loaded, read_options=read_options, policy=policy, strict=strict, progress=progress)
    if out:
        profile.save(out)
    summary = Summary.of(profile, plan)
    if output_format == "json":
        payload = summary.to_dict()
        payload["saved_to"] = out
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    from vocabrisk.report.terminal import render_scan

    render_scan(summary, Console())
    if out:
        err.print(f"profile saved to {out}")


def _progress(console: Console, quiet: bool):
    """A live progress bar on an interactive terminal; nothing in CI, pipes or --quiet."""
    if quiet or not console.is_terminal:
        return contextlib.nullcontext(None)
    from vocabrisk.report.progress import RichScanProgress

    return RichScanProgress(console)


if __name__ == "__main__":
    main()
