"""Errors that reach the user as one line instead of a traceback."""


class UserError(Exception):
    """A mistake the user can fix: bad input, unknown model, missing file.

    The CLI prints the message as one line (what is wrong and how to fix it) and exits with
    ``exit_code``. Raise it only where the message is complete on its own.
    """

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
