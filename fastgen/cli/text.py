"""What the command line prints, made safe for a terminal: :func:`printable`.

Column names, labels and paths come from the user's files.  Printed raw, a name such
as ``b\\x1b]0;PWNED\\x07`` would run as a terminal escape sequence; every message,
warning and report line goes through :func:`printable` first.  The CSV the command
writes (predictions) is data, not a message, and is written as it is.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["printable", "say", "closest", "did_you_mean"]

# C0 and C1 control characters, DEL, the line and paragraph separators, and the
# bidirectional overrides and isolates (which reorder what follows them on screen)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match):
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text) -> str:
    """``str(text)`` with every control character written as an escape (``\\x1b``,
    ``\\t``, ``\\n``, ``\\u202e``), so that printing it cannot move the cursor, retitle
    the terminal or break the line; other text is unchanged."""
    return _CONTROL.sub(_escape, str(text))


def say(text, file) -> None:
    """Print one line of ``text`` to ``file``, escaped by :func:`printable`; nothing
    where ``file`` is None (a closed stderr: ``print`` would write to stdout)."""
    if file is not None:
        print(printable(text), file=file)


def closest(word, candidates):
    """The candidate closest to ``word`` (difflib's similarity ratio at least 0.6), or
    None: the suggestion for a mistyped option, subcommand or name."""
    match = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=1)
    return match[0] if match else None


def did_you_mean(word, candidates):
    """``"; did you mean 'X'?"`` for the :func:`closest` candidate, else ``""``."""
    match = closest(word, candidates)
    return "" if match is None else f"; did you mean {match!r}?"
