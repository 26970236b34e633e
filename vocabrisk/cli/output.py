"""Where a command's output goes, and how it ends when it fails.

Results go to stdout (`report_console`), progress and log lines to stderr, and only where
someone watches: not with --quiet, not into a pipe, not under JSON. Every failure becomes an
exit code a CI can read and a message instead of a traceback (`report_errors`, which wraps
each command of `vocabrisk.cli.commands`); exit codes 0 and 1 are the commands' own.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import itertools
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vocabrisk.errors import UsageError, VocabriskError
from vocabrisk.storage.outputs import check_writable

if TYPE_CHECKING:
    from rich.console import Console

EXIT_INPUT_ERROR = 2  # bad input, usage or any other error: the command could not do its job
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped with Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM: what a scheduler, a CI timeout or `kill` sends


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into what Ctrl-C does (outputs left whole, reports replaced), so that a scheduler's
    stop is as safe as a user's; the command exits 143."""


def stop_on_sigterm(ctx: click.Context) -> None:
    """Make SIGTERM stop this command as Ctrl-C does, until the command ends (then the old handler is back)."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; an embedding host keeps its own

    def terminate(signum, frame):
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    ctx.call_on_close(lambda: signal.signal(signal.SIGTERM, previous))


DEBUG = "vocabrisk.debug"

# The interpreter's teardown runs the cycle collector over every object left, and a scan leaves
# object arrays of every token's text: 0.06 s at exit for a 150k vocabulary, where plain Python
# exits in 0.03 s. Nothing collectable is left to find by then; frozen objects are still freed.
atexit.register(gc.freeze)


INTERRUPTED_NOTE = "vocabrisk.interrupted"  # ctx.meta: what an interrupted command did write, where it wrote something
INTERRUPTED_GATE = VocabriskError("interrupted before the gate could judge the corpus", hint="run the gate again")


def report_errors(command):
    """Turn every failure into an exit code a CI can read, with no traceback (unless --debug).

    A VocabriskError prints `error: ...` plus its hint (a UsageError, click's usage error); any
    other error (a full disk, a bug) prints what it was; all exit 2. Ctrl-C exits 130, SIGTERM 143. Outputs
    are written atomically, so an interrupted or failed run leaves none half-written.
    """

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        debug = click.get_current_context().meta.get(DEBUG) or os.environ.get("VOCABRISK_DEBUG")
        try:
            return command(*args, **kwargs)
        except UsageError as exc:
            if exc.option:
                raise click.BadParameter(exc.message, param_hint=exc.option) from exc
            raise click.UsageError(exc.message) from exc
        except VocabriskError as exc:
            if debug:
                raise
            _print_error(exc.message, exc.hint)
        except KeyboardInterrupt as exc:
            note = click.get_current_context().meta.get(INTERRUPTED_NOTE, "nothing was written")
            how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
            stderr_console().print(f"[bold red]{how}[/]: {note}", markup=True)
            sys.exit(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)
        except (click.ClickException, click.exceptions.Exit):
            raise
        except Exception as exc:
            if debug:
                raise
            _print_error(*error_text(exc))
        sys.exit(EXIT_INPUT_ERROR)

    return wrapper


def error_text(exc: Exception) -> tuple[str, str | None]:
    """What an error says to the user, and the hint: a VocabriskError's own, else its kind and what it was."""
    if isinstance(exc, VocabriskError):
        return exc.message, exc.hint
    if isinstance(exc, click.ClickException):
        return exc.format_message(), "see --help"
    what = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.filename else str(exc)
    return f"{type(exc).__name__}: {what}", "rerun with --debug for the traceback, and report it if the input is valid"


def publish_gate_error(exc: Exception, reports: Sequence[str], output_format: str | None) -> None:
    """A gate that could not judge overwrites every --report FORMAT=PATH with the error, and prints it in a CI
    OUTPUT_FORMAT, so that CI shows an error (and no earlier run's passing report). A report the error cannot be
    written to (a full disk) is removed, which needs no space; one that cannot be removed either (a read-only
    folder) is left: the error is what the run reports, on stderr and in its exit code."""
    from vocabrisk.cli.config import parse_report_target
    from vocabrisk.report.ci import format_error
    from vocabrisk.storage.outputs import write_atomic

    message, hint = error_text(exc)
    for text in reports:
        try:
            name, path = parse_report_target(text)
        except VocabriskError:
            continue
        try:
            write_atomic(path, format_error(message, hint, name), "report")
        except VocabriskError:
            with contextlib.suppress(OSError):
                Path(path).unlink(missing_ok=True)
    if output_format and output_format != "text":
        click.echo(format_error(message, hint, output_format), nl=False)


class GateCommand(click.Command):
    """The gate's command: an error in its flags (a threshold that is not a number, say) also goes to the
    reports it names (`publish_gate_error`), read from the arguments as written, since none could be parsed."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, list(args))
        except click.UsageError as exc:
            formats = _raw_values(args, "--format")
            publish_gate_error(exc, _raw_values(args, "--report"), formats[-1] if formats else None)
            raise


def _raw_values(args: Sequence[str], option: str) -> list[str]:
    """The values given to OPTION in ARGS, as `OPTION VALUE` or `OPTION=VALUE`."""
    values = [value for flag, value in itertools.pairwise(args) if flag == option]
    return values + [arg.removeprefix(f"{option}=") for arg in args if arg.startswith(f"{option}=")]


def stderr_console() -> Console:
    """The console for errors and log lines. rich is imported by the commands that print through it:
    a quiet JSON scan that succeeds never does."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _print_error(message: str, hint: str | None) -> None:
    from rich.markup import escape

    err = stderr_console()
    # escaped: messages quote paths, TOML tables and extras (`vocabrisk[report]`) that look like markup
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True)
    if hint:
        err.print(f"[dim]hint:[/] {escape(hint)}", markup=True)


def log_lines(quiet: bool):
    """Where verify and calibrate say what they are doing: dimmed on stderr, or nowhere."""
    if quiet:
        return lambda _message: None

    def say(message: str) -> None:  # rich is imported by the first line said, not by a run that says none
        from rich.markup import escape

        stderr_console().print(f"[dim]{escape(message)}[/]")

    return say


def report_console() -> Console:
    """The report console: the terminal's width, or where stdout is a pipe or a CI log, COLUMNS if set, else 160."""
    from rich.console import Console

    console = Console()
    if console.is_terminal:
        return console
    columns = os.environ.get("COLUMNS", "")
    return Console(width=int(columns) if columns.isdigit() and int(columns) > 0 else 160)


def progress_bar(quiet: bool):
    """What makes the progress display of each count: a live bar on an interactive terminal; nothing in CI,
    pipes or --quiet."""
    if quiet:
        return contextlib.nullcontext
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        return contextlib.nullcontext
    from vocabrisk.report.progress import RichScanProgress

    return functools.partial(RichScanProgress, console)


def check_outputs(out: Path | str | None = None, force: bool = False, reports=(), checkpoint=None) -> None:
    """Every output of a command checked before any input is read, so a long run never ends unable to save.

    OUT is a profile folder (replaced only with FORCE), REPORTS are files ("-" is stdout), CHECKPOINT a folder.
    """
    if out:
        from vocabrisk.profile.profile import check_profile_target

        check_profile_target(out, force)
    for path in reports:
        if path != "-":
            check_writable(path, "report")
    if checkpoint:
        check_writable(checkpoint, "checkpoint folder", folder=True)
    _hold_for_the_command([(out, "profile folder"), (checkpoint, "checkpoint folder")])


def _hold_for_the_command(outputs) -> None:
    """Lock each output folder against a second command writing it (`vocabrisk.storage.locks`) until this one ends.
    The lock module (and filelock, 25 ms to import) is imported only where there is one to take."""
    ctx = click.get_current_context(silent=True)
    for path, what in outputs:
        if path:
            from vocabrisk.storage.locks import hold

            lock = hold(path, what)
            if ctx is not None:
                ctx.call_on_close(lock.release)
