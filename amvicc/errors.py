"""Errors that reach the user as one line instead of a traceback."""


class UserError(Exception):
    """A mistake the user can fix: bad input, unknown model, missing file.

    The CLI prints the message as one line (what is wrong and how to fix it) and exits with
    ``exit_code``. Raise it only where the message is complete on its own.
    """

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class WorkspaceError(UserError):
    """The workspace cannot be read or written: read-only, full, or not an amvicc database.

    Nothing the user did to the command is wrong, so a stage that meets it records its run as
    ``interrupted`` (rerunning the same command resumes once the workspace is usable again),
    never as ``running``.
    """


class Terminated(KeyboardInterrupt):
    """The process was asked to stop by a signal (SIGTERM, SIGHUP), not by Ctrl-C.

    A :class:`KeyboardInterrupt`, so everything that keeps work on Ctrl-C keeps it here too;
    the CLI exits with ``128 + signal`` as shells expect.
    """

    def __init__(self, signal_number: int) -> None:
        super().__init__(f"stopped by signal {signal_number}")
        self.signal_number = signal_number
