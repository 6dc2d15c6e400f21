"""The command line's exceptions and exit statuses."""

__all__ = ["CLIError", "OutputError", "EXIT_USAGE", "EXIT_IO"]

#: exit status of a user mistake (as argparse's own)
EXIT_USAGE = 2

#: exit status of a write that failed (a full disk, standard output on /dev/full)
EXIT_IO = 1


class CLIError(Exception):
    """A user mistake: reported as one ``fastgen: error:`` line with exit status 2."""


class OutputError(CLIError):
    """A write that failed: one ``fastgen: error:`` line with exit status 1."""
