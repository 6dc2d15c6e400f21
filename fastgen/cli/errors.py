"""The command line's user-mistake exception and exit status."""

__all__ = ["CLIError", "EXIT_USAGE"]

#: exit status of a user mistake (as argparse's own)
EXIT_USAGE = 2


class CLIError(Exception):
    """A user mistake: reported as one ``fastgen: error:`` line with exit status 2."""
