"""The command line's exceptions and exit status."""

__all__ = ["CLIError", "OutputError", "EXIT_USAGE"]

#: exit status of a user mistake or a failed write (as argparse's own)
EXIT_USAGE = 2


class CLIError(Exception):
    """A user mistake: reported as one ``fastgen: error:`` line with exit status 2."""


class OutputError(CLIError):
    """A write that failed (a missing directory, a full disk, standard output on
    ``/dev/full``): reported as a :class:`CLIError` is."""
