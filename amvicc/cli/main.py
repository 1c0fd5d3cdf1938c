"""The ``amvicc`` command: one verb per stage, also runnable as ``python -m amvicc.<verb>``.

Verbs register themselves with :func:`~amvicc.cli.registry.verb` in light modules of this package
(argument definitions only; heavy libraries are imported when the verb runs), one module per
verb, named as the verb. A :class:`~amvicc.errors.UserError` becomes one line
on stderr and exit status 2, as does an installed package that fails to import.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import shlex
import sys
import traceback
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import NoReturn

from amvicc import __version__
from amvicc.cli.registry import load_verb, load_verbs, verb_name
from amvicc.errors import Terminated, UserError
from amvicc.redaction import redact_text


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage dump) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        """Print the mistake and how to get help, then exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# --- entry points ----------------------------------------------------------------------------


def build_parser(verb: str | None = None) -> ArgumentParser:
    """The ``amvicc`` parser: with every verb, or with ``verb`` alone when it is one.

    Parsing ``amvicc VERB ...`` needs VERB's parser only; anything else (``--help``, a
    mistyped verb) gets every verb, so that the help and the error list them all.
    """
    found = load_verb(verb) if verb is not None else None
    verbs = {found.name: found} if found is not None else load_verbs()
    parser = ArgumentParser(
        prog="amvicc",
        description="Profile where image generators and vision-language models fail on the "
        "same visual concepts (AMVICC / MMVP).",
        epilog="Each verb also runs as `python -m amvicc.<verb>`; `amvicc VERB --help` shows "
        "an example.",
    )
    parser.add_argument("--version", action="version", version=f"amvicc {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for item in verbs.values():
        verb_parser = sub.add_parser(
            item.name,
            help=item.summary,
            description=item.summary,
            epilog="example:\n" + "\n".join(f"  {e}" for e in item.examples),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_verbosity(verb_parser)
        item.configure(verb_parser)
        for child in _sub_verbs(verb_parser):
            _add_verbosity(child, inherited=True)
        verb_parser.set_defaults(_run=item.run, _verb=item.name)
    return parser


def _add_verbosity(parser: argparse.ArgumentParser, *, inherited: bool = False) -> None:
    """``-v``/``-q``; a sub-verb's (``scenes build -q``) only sets them when given.

    argparse copies a sub-parser's defaults over what the verb's parser read, so a default
    there would undo ``scenes -q build``.
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS if inherited else 0,
        help="more detail",
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS if inherited else False,
        help="only warnings and errors; no progress bars",
    )


def _sub_verbs(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers of a verb's actions (``scenes build``, ``prompts check``), at any depth."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += [child, *_sub_verbs(child)]
    return found


def _configure_logging(args: argparse.Namespace) -> None:
    if args.quiet:
        level = logging.WARNING
    elif args.verbose:
        level = logging.DEBUG
    else:
        level = logging.INFO
    logging.basicConfig(level=level, format="%(message)s", stream=sys.stderr, force=True)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_redacting)
    if args.verbose < 2:
        # Third-party libraries log at INFO; keep them quiet unless asked with -vv.
        # openai >= 3 runs on httpx2 / httpcore2.
        noisy_loggers = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "urllib3")
        for noisy in (*noisy_loggers, "diffusers", "transformers"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def _redacting(record: logging.LogRecord) -> bool:
    """A log filter: credentials out of every line (a server's error may quote the key)."""
    message = record.getMessage()
    redacted = redact_text(message)
    if redacted != message:
        record.msg, record.args = redacted, None
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``amvicc`` with ``argv`` (default: the process's arguments).

    Returns:
        The exit status: 0 success, 1 a check found problems, 2 a usage or input mistake,
        130 interrupted (Ctrl-C), 128 + N stopped by signal N (143 for SIGTERM).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    # Recorded with each run; API keys never come on the command line, only their env names.
    args.command_line = shlex.join(["amvicc", *argv])
    _configure_logging(args)
    name = args._verb
    try:
        status: int = args._run(args)
    except UserError as err:
        print(f"amvicc {name}: error: {redact_text(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as stop:
        how = str(stop) if isinstance(stop, Terminated) else "interrupted"
        print(
            f"amvicc {name}: {how}; finished work is saved, rerun the same command to resume",
            file=sys.stderr,
        )
        return 128 + stop.signal_number if isinstance(stop, Terminated) else 130
    except ImportError as err:
        broken = broken_install(err)
        if broken is None:
            raise
        logging.getLogger(__name__).debug("the import that failed", exc_info=err)
        print(f"amvicc {name}: error: {redact_text(broken)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); exit quietly as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:
        # A file amvicc had to write or read and could not, outside the workspace's own
        # checks (which raise UserError): still one line, naming the file.
        if err.errno not in FILE_ERRNOS:
            raise
        where = f" {err.filename}" if err.filename else ""
        print(f"amvicc {name}: error: cannot use{where}: {err.strerror}", file=sys.stderr)
        return 2
    return status


def broken_install(err: ImportError) -> str | None:
    """One line for an installed package that cannot be imported; None for amvicc's own error.

    A package can be installed and still fail to import: a wheel that needs another NumPy
    (pyarrow's "requires NumPy 2.0 or newer"), a half-finished upgrade, a dependency of it
    missing. That is the environment's, not amvicc's: the line names the package amvicc
    imported and the one that failed, and what to do. (A missing extra never gets here:
    :func:`amvicc.extras.require_extra` names it first.)
    """
    packages = []
    for frame in traceback.extract_tb(err.__traceback__):
        parts = Path(frame.filename).parts
        for folder in ("site-packages", "dist-packages"):
            if folder in parts[:-1]:
                top = parts[parts.index(folder) + 1].removesuffix(".py")
                if top != "amvicc" and top not in packages:
                    packages.append(top)
    if not packages:
        named = (err.name or "").split(".")[0]
        if not named or named == "amvicc":
            return None
        packages = [named]
    chain = " → ".join(dict.fromkeys([packages[0], packages[-1]]))
    return (
        f"cannot import {chain}: {err} (an installed package is broken or does not match the "
        "others: `pip check` names it; reinstalling or upgrading it fixes it)"
    )


# Errors of the machine's files, not of amvicc: a full disk, a read-only or forbidden path.
FILE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR}
)


def console(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of the ``amvicc`` program and ``python -m amvicc``.

    :func:`main`, then :func:`exit_now` with its status (argparse's exits included).
    """
    try:
        status: int | str | None = main(argv)
    except SystemExit as stop:  # argparse's errors and --help
        status = stop.code
    exit_now(status)


def run_as_module(
    package: str | None, end: Callable[[int | str | None], NoReturn] | None = None
) -> NoReturn:
    """Entry point of ``python -m amvicc.<verb>``: the same as ``amvicc <verb>``.

    Args:
        package: the ``__package__`` of the ``__main__`` module, which names the verb
            (``amvicc.import_answers`` runs ``import-answers``).
        end: how the process ends with the verb's status (argparse's exits included);
            :func:`exit_now` when not given. Launched generate processes leave their
            process group first.
    """
    try:
        status: int | str | None = main([verb_name(package or ""), *sys.argv[1:]])
    except SystemExit as stop:  # argparse's errors and --help
        status = stop.code
    (end or exit_now)(status)


def exit_now(status: int | str | None) -> NoReturn:
    """End the program with ``status``, its work done, without tearing the interpreter down.

    Finalizing an interpreter that imported pandas, scipy and pyarrow frees every module and
    object one by one: a third of a second after a report is written, which the user waits
    for and nothing needs. Exit handlers still run (logging's flush, temporary files) and
    output is flushed. While another (non-daemon) thread runs, the process ends as usual,
    waiting for it, as Python would; daemon threads (tqdm's monitor) end with the process.
    """
    import atexit
    import threading

    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        raise SystemExit(status)
    if isinstance(status, str):  # SystemExit("message"): printed as Python would
        print(status, file=sys.stderr)
    code = 0 if status is None else status if isinstance(status, int) else 1
    try:
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):  # a closed pipe or stream: nothing to flush
                stream.flush()
    finally:
        os._exit(code)
