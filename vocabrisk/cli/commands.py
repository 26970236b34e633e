"""The `vocabrisk` command line: wires the stages together, nothing else."""

from __future__ import annotations

from dataclasses import replace

import click
from click.core import ParameterSource

from vocabrisk._version import __version__
from vocabrisk.cli.config import load_config, training_plan
from vocabrisk.cli.options import (
    budget_option,
    calibrate_options,
    config_option,
    corpus_options,
    executor_options,
    force_option,
    format_option,
    gate_limit_options,
    gate_output_options,
    old_loss_option,
    plan_options,
    report_output_options,
    scan_source_options,
    verify_options,
    verify_run_options,
)
from vocabrisk.cli.output import (
    DEBUG,
    INTERRUPTED_GATE,
    INTERRUPTED_NOTE,
    GateCommand,
    check_outputs,
    log_lines,
    progress_bar,
    publish_gate_error,
    report_console,
    report_errors,
    stderr_console,
    stop_on_sigterm,
)
from vocabrisk.cli.settings import old_loss_of
from vocabrisk.corpus.hf_stream import input_for
from vocabrisk.storage.outputs import json_text

# Each command imports the stages it runs in its body, so that none pays for another's
# (`--help` and a gate on a saved profile import no counting or prior code).


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="vocabrisk")
@click.option("--debug", is_flag=True, help="Show the traceback of an error (also VOCABRISK_DEBUG=1).")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Predict how much training on a corpus will make a language model forget, before training.

    Exit codes: 0 done (gate: every limit holds), 1 a gate limit breached, 2 bad input, usage or
    any other error, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM; outputs as for Ctrl-C).
    """
    ctx.meta[DEBUG] = debug
    stop_on_sigterm(ctx)


@main.command("scan")
@click.argument("inputs", nargs=-1)
@corpus_options
@executor_options
@scan_source_options
@plan_options
@config_option()
@click.option("--mix", multiple=True, help="A replay corpus (paths or a saved profile) for the what-if mixing advice.")
@budget_option
@old_loss_option
@click.option(
    "--out",
    "-o",
    type=click.Path(file_okay=False),
    help="Save the profile in this folder: profile.json, tokens.parquet and, where the prior came "
    "from text, old_text.npz (the forecast's old text). Copy it whole.",
)
@force_option
@format_option
@report_errors
def scan_command(inputs, settings, quiet, checkpoint, resume, hf_datasets, split, plan_flags, config_file, mix, budget,
                 old_loss, out, force, output_format):  # fmt: skip
    """Profile corpora (files, folders, globs, URLs such as s3://bucket/prefix/, or - for stdin) against
    MODEL's vocabulary and head; a saved profile is read as it was saved."""
    from vocabrisk.advice import advise
    from vocabrisk.counting.executors.work import release_counters
    from vocabrisk.risk.summary import Summary

    inputs = [*inputs, *(input_for(name, split) for name in hf_datasets)]
    if not inputs:
        raise click.UsageError("name a corpus: files, folders, globs, URLs, - for stdin, or --hf-dataset NAME")
    if resume and not checkpoint:
        raise click.UsageError("--resume continues from a checkpoint folder: add --checkpoint DIR")
    check_outputs(out, force, checkpoint=checkpoint)
    plan = training_plan(plan_flags, config_file)
    settings = replace(settings, progress=progress_bar(quiet or output_format == "json")).ready()
    replay = settings.counts_of(mix, "--mix") if mix else None  # first: a bad --mix fails before the long scan
    profile = settings.profile_of(inputs, checkpoint=checkpoint, resume=resume)
    release_counters()  # counted all it will: the advice runs without the tokenizers in memory
    if out:
        profile.save(out, force=force)
    summary = Summary.of(profile, plan, budget=budget, old_loss=old_loss_of(old_loss, settings, log_lines(quiet)))
    advice = advise(summary, replay)
    if output_format == "json":
        click.echo(json_text({**summary.to_dict(), "advice": advice.to_dict(), "saved_to": out}, indent=2))
        return
    from vocabrisk.report.terminal import render_scan

    render_scan(summary, advice, report_console())
    if out:
        stderr_console().print(f"profile saved to {out}")


@main.command("rank")
@click.argument("candidates", nargs=-1, required=True)
@corpus_options
@executor_options
@plan_options
@config_option()
@budget_option
@old_loss_option
@format_option
@report_errors
def rank_command(candidates, settings, quiet, plan_flags, config_file, budget, old_loss, output_format):
    """Order candidate corpora by the forgetting forecast for each, least first (unigram KL and the rest beside it).

    Each CANDIDATE is one corpus: a file, a folder, a quoted glob, or a saved profile (not rescanned).
    """
    from vocabrisk.compare import rank

    plan = training_plan(plan_flags, config_file)
    settings = replace(settings, progress=progress_bar(quiet or output_format == "json")).ready()
    old_loss = old_loss_of(old_loss, settings, log_lines(quiet))
    ranked = rank(
        list(candidates), settings.loaded, plan, scan_candidate=settings.scan, budget=budget, old_loss=old_loss
    )
    for candidate in ranked:
        settings.check_model(candidate.summary.profile, candidate.name)
    if output_format == "json":
        rows = [r.to_dict() for r in ranked]
        click.echo(json_text({"model": ranked[0].summary.profile.model["name"], "candidates": rows}, indent=2))
        return
    from vocabrisk.report.terminal import render_rank

    render_rank(ranked, report_console())


@main.command("diff")
@click.argument("old", type=click.Path(exists=True, file_okay=False))
@click.argument("new", type=click.Path(exists=True, file_okay=False))
@plan_options
@config_option()
@old_loss_option
@format_option
@report_errors
def diff_command(old, new, plan_flags, config_file, old_loss, output_format):
    """What changed between two saved profiles of the same model: risk, starved rows, groups."""
    from vocabrisk.compare import diff
    from vocabrisk.profile.profile import Profile

    plan = training_plan(plan_flags, config_file)
    result = diff(Profile.load(old), Profile.load(new), plan, old_loss=old_loss_of(old_loss, None))
    if output_format == "json":
        click.echo(json_text({"old": old, "new": new, **result}, indent=2))
        return
    from vocabrisk.report.terminal import render_diff

    render_diff(old, new, result, report_console())


@main.command("gate", cls=GateCommand)
@click.argument("inputs", nargs=-1)
@corpus_options
@executor_options
@plan_options
@gate_limit_options
@old_loss_option
@config_option("limits")
@gate_output_options
@click.pass_context
@report_errors
def gate_command(ctx, inputs, settings, quiet, plan_flags, old_loss, config_file, out, force, output_format, reports,
                 **limits):  # fmt: skip
    """Fail a data pipeline whose corpus would make MODEL forget too much. Exit 0 pass, 1 breach, 2 error.

    INPUTS is a corpus (files, folders, globs) or one saved profile, which is not rescanned; with none,
    the `corpus` of the configuration file. Limits come from flags, else from `[tool.vocabrisk.gate]` in
    the nearest pyproject.toml (or `[gate]` in a vocabrisk.toml); with no limit anywhere, the gate fails
    on the high band. A gate that could not judge
    writes the error into every --report, so that CI never shows an earlier run's result.
    """
    try:
        _gate(ctx, inputs, settings, quiet, plan_flags, old_loss, config_file, out, force, output_format, reports,
              limits)  # fmt: skip
    except click.exceptions.Exit:
        raise
    except KeyboardInterrupt:  # an earlier run's passing reports must not stand for this one
        publish_gate_error(INTERRUPTED_GATE, reports, output_format)
        ctx.meta[INTERRUPTED_NOTE] = "each --report now says so, and no profile was written"
        raise
    except Exception as exc:
        publish_gate_error(exc, reports, output_format)
        raise


def _gate(ctx, inputs, settings, quiet, plan_flags, old_loss, config_file, out, force, output_format, reports,
          limits) -> None:  # fmt: skip
    from vocabrisk.counting.executors.work import release_counters
    from vocabrisk.gate import evaluate
    from vocabrisk.profile.profile import Profile
    from vocabrisk.report.ci import format_result, render_text
    from vocabrisk.risk.summary import Summary
    from vocabrisk.storage.outputs import write_all

    config = load_config(config_file)
    plan = config.training_plan(plan_flags)
    gate = config.gate(_given(ctx, model=settings.model, **limits), reports, out, inputs)
    inputs = gate.inputs
    check_outputs(out, force, reports=[path for _, path in gate.reports])
    baseline = Profile.load(gate.baseline) if gate.baseline else None
    settings = replace(settings, model=gate.model, progress=progress_bar(quiet or output_format != "text"))
    profile = settings.profile_of(inputs)
    release_counters()
    if out:
        profile.save(out, force=force)
    summary = Summary.of(profile, plan, old_loss=old_loss_of(old_loss, settings, log_lines(quiet)))
    result = evaluate(summary, gate.thresholds, baseline, inputs=inputs, baseline_name=str(gate.baseline),
                      config=str(config.path) if config.path else None)  # fmt: skip
    write_all({path: format_result(result, name) for name, path in gate.reports}, "report")
    if output_format == "text":
        render_text(result, report_console())
    else:
        click.echo(format_result(result, output_format), nl=False)
    ctx.exit(result.exit_code)


@main.command("report")
@click.argument("profiles", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@plan_options
@report_output_options
@config_option()
@budget_option
@old_loss_option
@report_errors
def report_command(profiles, plan_flags, html_path, markdown_path, config_file, budget, old_loss):
    """Report on saved profiles: coverage by base-model usage, risk by group, top tokens, advice.

    Several profiles of the same model are ranked by unigram KL, least first. Save profiles with
    `vocabrisk scan CORPUS --out DIR` or `vocabrisk gate CORPUS --out DIR`. The training plan
    comes from flags, else from the same configuration file as the gate's limits.
    """
    from vocabrisk.compare import rank
    from vocabrisk.profile.profile import Profile
    from vocabrisk.report.content import build_report
    from vocabrisk.report.html import render_html
    from vocabrisk.report.markdown import render_markdown
    from vocabrisk.storage.outputs import write_all

    if not html_path and not markdown_path:
        markdown_path = "-"  # nothing named: print the report
    check_outputs(reports=[path for path in (html_path, markdown_path) if path])
    plan = training_plan(plan_flags, config_file)
    old_loss = old_loss_of(old_loss, None)  # a report loads no model: a loss given, or kept from a scan
    ranked = rank(list(profiles), plan=plan, scan_candidate=Profile.load, budget=budget, old_loss=old_loss)
    report = build_report(ranked)
    asked = ((html_path, render_html), (markdown_path, render_markdown))
    files = {path: render(report) for path, render in asked if path}
    write_all({path: text for path, text in files.items() if path != "-"}, "report")  # both or neither
    for path, text in files.items():
        if path == "-":
            click.echo(text, nl=False)
        else:
            stderr_console().print(f"wrote {path}")


@main.command("verify")
@click.argument("inputs", nargs=-1, required=True)
@corpus_options
@verify_options
@verify_run_options
@format_option
@report_errors
def verify_command(inputs, settings, quiet, compare_eps, head_eps, heldout_share, eval_windows, plot_path,
                   output_format, **train):  # fmt: skip
    """Fine-tune a copy of MODEL briefly on the corpus and measure what the scan predicted.

    Measures each head row's drift, forgetting on old text (--reference, the model's bundled
    sample, or else samples the base model generates itself), learning on held-out new text,
    where forgetting lives (head restored, head only) and what restoring rows after training
    recovers, and compares the predicted per-row risk with the measured drift. Needs the
    `verify` extra: pip install 'vocabrisk[verify]'.
    """
    train = _train_config("verify", train)
    from vocabrisk.verify.run import VerifyConfig, verify

    reference = settings.old_text()
    config = VerifyConfig(
        train=train, compare_eps=compare_eps, head_eps=head_eps, heldout_share=heldout_share, eval_windows=eval_windows
    )
    result = verify(
        list(inputs),
        settings.model_name,
        config,
        reference=reference,
        read_options=settings.read_options,
        policy=settings.policy,
        strict=settings.strict,
        log=log_lines(quiet or output_format == "json"),
    )
    if plot_path:
        from vocabrisk.verify.report import plot_verify

        plot_verify(result, plot_path)
        stderr_console().print(f"plot written to {plot_path}")
    if output_format == "json":
        click.echo(json_text(result.report, indent=2))
        return
    from vocabrisk.verify.report import render_verify

    render_verify(result, report_console())


@main.command("calibrate")
@calibrate_options
@format_option
@report_errors
def calibrate_command(model, probes, reference, eval_windows, quiet, output_format, **train):  # fmt: skip
    """Fit the forecast's constants to MODEL from short fine-tunes on probe text.

    Each probe is trained on whole and as its first quarter; the forgetting measured on old text
    fixes kappa (how far the head's rows move per unit of learning rate), body_gain (how much
    the rest of the network forgets per unit of its term) and, from the loss early in each run,
    the adaptation (how much any plain text first lowers it), saved under
    ~/.cache/vocabrisk/calibration/ where later scans of the same model find them. It then fits
    again without each probe source in turn and says how well that forecasts the source left out
    (the honest measure of a calibration: the fit's own residuals flatter it). Needs the
    `verify` extra: pip install 'vocabrisk[verify]'.
    """
    train = _train_config("calibrate", train)
    from vocabrisk.verify.probes import calibrate

    result = calibrate(
        list(probes),
        model,
        train,
        reference=list(reference) or None,
        eval_windows=eval_windows,
        log=log_lines(quiet or output_format == "json"),
    )
    data = {"calibration": result.calibration.to_dict(), "saved": str(result.path), "runs": result.runs}
    if output_format == "json":
        click.echo(json_text(data, indent=2))
        return
    from vocabrisk.report.terminal import render_calibration

    render_calibration(data, report_console())


def _train_config(command: str, flags: dict):
    """The training flags of verify and calibrate as a TrainConfig, which needs the `verify` extra installed."""
    from vocabrisk.errors import require

    TrainConfig = require("vocabrisk.verify.train", "verify", command).TrainConfig
    spelt = {"adam_beta1": "beta1", "adam_beta2": "beta2", "adam_eps": "eps"}  # the flags' names, the run's keys
    return TrainConfig.from_dict(
        {spelt.get(k, k): v for k, v in flags.items()} | {"grad_clip": flags["grad_clip"] or None}
    )


def _given(ctx: click.Context, **values) -> dict:
    """The VALUES of the flags given on the command line, not left at their defaults."""
    return {name: v for name, v in values.items() if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT}
