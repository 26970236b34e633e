"""The flags several commands share, as click option groups; `vocabrisk.cli.commands` applies them.

Two groups hand the command one value instead of their flags: `plan_options` the plan
flags given (`plan_flags`, resolved by `config.training_plan`) and `corpus_options` one
`ScanSettings` (`settings`; the executor flags join it where the command has them).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import click

from vocabrisk.cli.settings import DEFAULT_MODEL, ScanSettings
from vocabrisk.counting.engines import ENGINES
from vocabrisk.counting.executors import EXECUTORS
from vocabrisk.report import CI_FORMATS as GATE_FORMATS
from vocabrisk.risk.plan import CHECKS, WHOLE, TrainingPlan
from vocabrisk.risk.plan_settings import SETTINGS, SOURCE_SETTINGS


class Finite(click.FloatRange):
    """A FloatRange that also refuses nan and ±inf: no limit or setting means them, and JSON cannot carry them."""

    def convert(self, value, param, ctx):
        if not math.isfinite(click.FLOAT.convert(value, param, ctx)):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(value, param, ctx)


def plan_type(setting: str) -> click.ParamType:
    """The click type of a plan flag, made from the check the plan itself applies: one range, stated once."""
    check = SOURCE_SETTINGS.get(setting) or CHECKS[SETTINGS[setting]]
    if check.choices:
        return click.Choice(check.choices)
    low, high = (None if math.isinf(x) else x for x in (check.low, check.high))
    if check.kind is WHOLE:
        return click.IntRange(min=low, max=high, min_open=check.low_open, max_open=check.high_open)
    low, high = (None if x is None else float(x) for x in (low, high))
    return Finite(min=low, max=high, min_open=check.low_open, max_open=check.high_open)


def options(*decorators):
    """One decorator applying DECORATORS in the order written, as if stacked above the command."""

    def apply(command):
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


def _handing_over(flags: tuple[str, ...], name: str, make):
    """A decorator passing the FLAGS the command has as one keyword argument NAME: MAKE(flags present)."""

    def decorator(command):
        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            given = {flag: kwargs.pop(flag) for flag in flags if flag in kwargs}
            return command(*args, **{name: make(given)}, **kwargs)

        return wrapper

    return decorator


_PLAN = TrainingPlan()
plan_options = options(
    _handing_over((*SETTINGS, *SOURCE_SETTINGS), "plan_flags",
                  lambda given: {name: value for name, value in given.items() if value is not None}),
    click.option("--steps", type=plan_type("steps"),
                 help=f"Optimizer steps of the planned run.  [default: {_PLAN.steps:,}]"),
    click.option("--epochs", type=plan_type("epochs"),
                 help="Or the run's length in epochs over the corpus: the steps follow from its size."),
    click.option("--tokens-per-step", type=plan_type("tokens_per_step"),
                 help="Tokens in one optimizer step (batch size × sequence length × accumulation × GPUs).  "
                      f"[default: {_PLAN.tokens_per_step:,}]"),
    click.option("--training-args", type=click.Path(dir_okay=False),
                 help="Read the plan from a transformers TrainingArguments JSON (to_json_string()). Flags win over "
                      "it, and it wins over the [plan] of the configuration file."),
    click.option("--seq-len", type=plan_type("seq_len"),
                 help="With --training-args: the tokens in one sequence, which TrainingArguments do not say."),
    click.option("--world-size", type=plan_type("world_size"),
                 help="With --training-args: data-parallel processes (GPUs) sharing each step.  [default: 1]"),
    click.option("--lr", type=plan_type("lr"),
                 help=f"Peak learning rate.  [default: {_PLAN.learning_rate:g}]"),
    click.option("--warmup-steps", type=plan_type("warmup_steps"), help="Linear warmup steps.  [default: 0]"),
    click.option("--lr-schedule", type=plan_type("lr_schedule"),
                 help="The learning rate after warmup: constant, or decaying to 0.  [default: constant]"),
    click.option("--adam-beta1", type=plan_type("adam_beta1"), help="Adam's beta1.  [default: 0.9]"),
    click.option("--adam-beta2", "--beta2", "adam_beta2", type=plan_type("adam_beta2"),
                 help="Adam's beta2 (second-moment memory ≈ 1/(1-beta2) steps).  [default: 0.999]"),
    click.option("--adam-eps", type=plan_type("adam_eps"), help="Adam's eps.  [default: 1e-08]"),
    click.option("--weight-decay", type=plan_type("weight_decay"), help="AdamW's weight decay.  [default: 0]"),
    click.option("--trains", type=plan_type("trains"),
                 help="What the run trains: everything, all but the output head, LoRA adapters, or LoRA and the "
                      "head.  [default: all]"),
    click.option("--head-eps", type=plan_type("head_eps"),
                 help="Adam's eps for the output head only (the mitigation), if the run raises it."),
)  # fmt: skip

_SCAN_SETTINGS = tuple(f.name for f in dataclasses.fields(ScanSettings) if f.name != "progress")
corpus_options = options(
    _handing_over(_SCAN_SETTINGS, "settings", lambda given: ScanSettings(**given)),
    click.option("--model", "-m",
                 help="`demo`, a local model folder, or a Hugging Face hub id (read from the local cache). A saved "
                      f"profile keeps the model it was counted with.  [default: {DEFAULT_MODEL}]"),
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


def _engine(ctx, param, value):
    """--engine names the tokenizer engine; where counting runs was once `--engine local|ray`, now --executor."""
    if value in EXECUTORS:
        raise click.BadParameter(
            f"{value!r} is where counting runs, which --executor chooses now (--executor {value}); --engine "
            f"chooses what encodes: {', '.join(ENGINES)}",
            ctx,
            param,
        )
    if value not in ENGINES:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(ENGINES)}", ctx, param)
    return value


executor_options = options(
    click.option("--executor", "executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
                 help="Where counting runs: this machine, or a Ray cluster (pip install 'vocabrisk[ray]'). "
                      "The profile is the same either way."),
    click.option("--engine", default="auto", show_default=True, callback=_engine, metavar="[auto|tokenizers|fastokens]",
                 help="What encodes: tokenizers (the reference), fastokens (an accelerator, checked against the "
                      "reference on hard strings and on the corpus's first documents), or auto: the faster that "
                      "counts exactly here. The counts are the same either way."),
    click.option("--workers", type=click.IntRange(min=1),
                 help="Counting processes (local) or tasks in flight (ray), each counting whole files (small ones "
                      "together, up to 8 MiB).  "
                      "[default: local 1, ray every CPU of the cluster]"),
    click.option("--address", help="The Ray cluster to join (auto, ray://HEAD:10001).  [default: start one here]"),
)  # fmt: skip
force_option = click.option(
    "--force", is_flag=True, help="Replace a saved profile already at --out (its own files; others there stay)."
)
format_option = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True
)


def config_option(what: str = "the training plan"):
    return click.option(
        "--config",
        "config_file",
        type=click.Path(exists=True, dir_okay=False),
        help=f"Read {what} from this TOML file, not from the nearest vocabrisk.toml or pyproject.toml.",
    )


budget_option = click.option(
    "--budget", type=Finite(min=0.0), metavar="NATS",
    help="The forgetting you allow, in nats: the forecast's curve says at which step of the plan it is crossed.",
)  # fmt: skip


class OldLoss(Finite):
    """--old-loss: nats, or `auto`, `measure` or `none`."""

    name = "nats|auto|measure|none"
    WORDS = ("auto", "measure", "none")

    def convert(self, value, param, ctx):
        return value if value in self.WORDS else super().convert(value, param, ctx)


old_loss_option = click.option(
    "--old-loss", type=OldLoss(min=0.0), default="auto", metavar="NATS|auto|measure|none",
    help="The base model's mean loss on the old text (--reference), nats per token over windows of 256 tokens "
         "(a longer context reads lower): it weighs the forecast's two body pathways (docs/VALIDITY.md, \"v9\"). "
         "`auto`: the calibration's (`vocabrisk calibrate` measures it), else one kept from an earlier run, else "
         "measured here where torch and transformers are installed and the model has at most 200M weights (one "
         "forward pass on the CPU, then kept), else unknown: transfer alone. `measure`: measured here whatever "
         "the model's size, in place of the calibration's. `none`: nothing measured.",
    show_default=True,
)  # fmt: skip


gate_limit_options = options(
    click.option("--max-forgetting", type=Finite(min=0.0), metavar="NATS",
                 help="Fail when the forecast forgetting (rise of loss on the base model's own text) is above NATS."),
    click.option("--max-risk", type=Finite(0.0, 1.0), help="Fail when the starved-usage risk is above this."),
    click.option("--max-starved-share", type=Finite(0.0, 1.0),
                 help="Fail when a larger share of the head's coverable rows is starved."),
    click.option("--max-group-risk", "group_limits", multiple=True, metavar="GROUP=LIMIT",
                 help="Fail when one token group carries more risk than LIMIT; `*=LIMIT` for every group. Repeatable."),
    click.option("--baseline", type=click.Path(file_okay=False),
                 help="A saved profile of the data as it was: fail when the risk rises over it by more than allowed."),
    click.option("--max-risk-increase", type=Finite(0.0, 1.0),
                 help="Allowed rise of the risk over the baseline.  [default: 0]"),
    click.option("--max-skipped-share", type=Finite(0.0, 1.0),
                 help="Allowed share of the input's bytes left unread (bad records, unsupported files).  "
                      "[default: 0, any skip fails]"),
)  # fmt: skip
# The training plan a verify or calibrate run carries out, under the plan flags' names (with defaults for a
# short check, not for a real run), and what only a real run needs.
verify_options = options(
    click.option("--steps", type=plan_type("steps"), default=150, show_default=True, help="Optimizer steps."),
    click.option("--lr", type=plan_type("lr"), default=1e-3, show_default=True, help="AdamW learning rate."),
    click.option("--tokens-per-step", type=plan_type("tokens_per_step"), default=2048, show_default=True,
                 help="Tokens in one optimizer step (batch = tokens-per-step / seq-len windows)."),
    click.option("--seq-len", type=click.IntRange(min=2), default=128, show_default=True, help="Window length."),
    click.option("--lr-schedule", type=plan_type("lr_schedule"), default="constant", show_default=True,
                 help="After warmup: constant, or linear / cosine decay to 0."),
    click.option("--adam-beta1", "--beta1", "adam_beta1", type=plan_type("adam_beta1"), default=0.9,
                 show_default=True, help="Adam's beta1."),
    click.option("--adam-beta2", "--beta2", "adam_beta2", type=plan_type("adam_beta2"), default=0.999,
                 show_default=True, help="Adam's beta2."),
    click.option("--adam-eps", type=plan_type("adam_eps"), default=1e-8, show_default=True,
                 help="AdamW eps of every parameter (the head's too, except in the --compare-eps run)."),
    click.option("--weight-decay", type=plan_type("weight_decay"), default=0.0, show_default=True),
    click.option("--warmup-steps", type=plan_type("warmup_steps"), default=15, show_default=True,
                 help="Linear warmup steps of the learning rate."),
    click.option("--grad-clip", type=Finite(min=0.0), default=1.0, show_default=True,
                 help="Clip the global gradient norm (0: off)."),
    click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N."),
    click.option("--bf16", is_flag=True, help="bfloat16 autocast (GPU only); weights stay float32."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed of the data order."),
)  # fmt: skip
scan_source_options = options(
    click.option("--checkpoint", type=click.Path(file_okay=False),
                 help="Save each file's counts in this folder as it is done, so that --resume can continue the scan."),
    click.option("--resume", is_flag=True,
                 help="Continue the scan whose counts are in --checkpoint; count only the rest."),
    click.option("--hf-dataset", "hf_datasets", multiple=True, metavar="NAME[:CONFIG]",
                 help="Also stream a Hugging Face dataset (a hub id, which needs network, or a local folder)."),
    click.option("--split", default="train", show_default=True, help="The split of --hf-dataset to read."),
)  # fmt: skip
gate_output_options = options(
    click.option("--out", "-o", type=click.Path(file_okay=False),
                 help="Save the profile (a folder: profile.json, tokens.parquet, old_text.npz where the prior came "
                      "from text), to report on it later without rescanning."),
    force_option,
    click.option("--format", "output_format", type=click.Choice(GATE_FORMATS), default="text", show_default=True,
                 help="Print the result for people (text), scripts (json), GitHub annotations, JUnit, Markdown or "
                      "SARIF."),
    click.option("--report", "reports", multiple=True, metavar="FORMAT=PATH",
                 help="Also write the result in FORMAT to PATH (e.g. junit=gate.xml); repeatable."),
)  # fmt: skip
report_output_options = options(
    click.option("--html", "html_path", type=click.Path(dir_okay=False, allow_dash=True),
                 help="Write a self-contained HTML page with plots (- for stdout)."),
    click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, allow_dash=True),
                 help="Write the same content as Markdown tables, e.g. for a CI job summary (- for stdout).  "
                      "[default: printed, when no --html is named]"),
)  # fmt: skip
verify_run_options = options(
    click.option("--compare-eps", is_flag=True, help="Train again with Adam's eps raised for the output head only."),
    click.option("--head-eps", type=Finite(min=0.0, min_open=True),
                 help="The head eps for --compare-eps.  [default: from the plain run's measured gradients]"),
    click.option("--heldout-share", type=Finite(0.0, 1.0, min_open=True, max_open=True), default=0.1,
                 show_default=True, help="Share of the corpus's tokens held out to measure learning."),
    click.option("--eval-windows", type=click.IntRange(min=1), default=64, show_default=True,
                 help="Windows of old text (and of held-out text) to evaluate on."),
    click.option("--plot", "plot_path", type=click.Path(dir_okay=False), help="Write a PNG of the measurements."),
)  # fmt: skip
calibrate_options = options(
    click.option("--model", default=DEFAULT_MODEL, show_default=True,
                 help="Base model: a local folder, hub id in the cache, or 'demo'."),
    click.option("--probe", "probes", multiple=True, type=click.Path(exists=True),
                 help="Generic text the model did not see, not one of your candidates (repeatable); real text of "
                      "the kinds you scan sets the scale best.  [default: the probe set shipped with vocabrisk: eight "
                      "real texts (English docs, Python and JavaScript code, a word list, a table, German, Japanese "
                      "and Russian technical prose), 16 fine-tunes]"),
    click.option("--reference", multiple=True, type=click.Path(exists=True),
                 help="Old text, in the base model's own distribution, to measure forgetting on. "
                      "[default: the model's bundled sample]"),
    verify_options,
    click.option("--eval-windows", type=click.IntRange(min=1), default=32, show_default=True,
                 help="Windows of old text to evaluate on."),
    click.option("--quiet", "-q", is_flag=True, help="No progress lines."),
)  # fmt: skip
