"""The ``fastgen`` command line: the argument parser and :func:`main`.

Commands
--------
``fastgen demo``
    Fit pooled (LDA) and per-class (QDA) Gaussian discriminant analysis on the bundled
    iris data and print the parameters, training accuracy and confusion tables.
``fastgen curve``
    Learning curves of generative and discriminative classifiers, after Ng & Jordan (2001):
    mean test error ± standard error against the training-set size m, as a table and a
    PNG plot.
``fastgen fit`` / ``fastgen predict`` / ``fastgen info``
    Fit a model on a CSV file and save its params; predict for a CSV file; describe a
    saved params file.
``fastgen docs``
    Build the documentation of a source checkout once, into a cache, and print or open
    its index page.
``fastgen compile``
    Compile the kernels of chosen model families and dtypes into numba's cache ahead of
    time (what a Dockerfile or a cluster's start-up script runs).

User mistakes (a missing file, an unknown column or data set, non-numeric data, invalid
options) end with one line ``fastgen: error: ...`` on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import textwrap

from ..kernels._notice import JITDisabledError
from . import commands
from .csvio import DATASETS, MAX_PIPE_BYTES_ENV
from .errors import EXIT_USAGE, CLIError, OutputError
from .models import CURVE_MODELS, FIT_MODELS, MODELS, fit_option_default
from .text import closest, did_you_mean, printable, say

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other CLI error, and
    name the closest valid choice to a mistyped one (a subcommand, ``--model``), as
    Python 3.14's ``suggest_on_error`` does (fastgen supports 3.10)."""

    def error(self, message):
        hint = f" (see '{self.prog} --help')"
        self.exit(EXIT_USAGE, f"fastgen: error: {printable(message)}{hint}\n")

    def _options(self):
        return [s for action in self._actions for s in action.option_strings]

    def _unknown(self, token):
        """Whether an option token names no option, not even by argparse's prefixes."""
        name = token.split("=", 1)[0]
        return not any(o.startswith(name) for o in self._options())

    def _check_value(self, action, value):
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            message = str(exc.message)
            if (action.choices is not None and isinstance(value, str)
                    and "did you mean" not in message):
                hint = did_you_mean(value, action.choices)
                if hint:
                    raise argparse.ArgumentError(action, message + hint) from None
            raise


class _MainParser(_Parser):
    """The ``fastgen`` parser: an unknown option before the subcommand is refused
    first, naming the closest option (``fastgen --verison`` would otherwise say that a
    command is required)."""

    def parse_known_args(self, args=None, namespace=None):
        for token in sys.argv[1:] if args is None else args:
            if token == "--" or not token.startswith("-") or token == "-":
                break  # the subcommand: its own parser reads what follows
            if self._unknown(token):
                match = closest(token.split("=", 1)[0], self._options())
                self.error(f"unrecognized arguments: {token}"
                           + (f"; did you mean {match!r}?" if match else ""))
        return super().parse_known_args(args, namespace)


class _CommandParser(_Parser):
    """The parser of a subcommand: an unknown option is its error (its help is the one
    to read), naming the closest option it has: ``fastgen compile --families gda``
    says "unrecognized arguments: --families gda; did you mean '--family'?"."""

    def parse_known_args(self, args=None, namespace=None):
        self._args = list(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(args, namespace)
        self._refuse_unknown(extras)
        return namespace, extras

    def _refuse_unknown(self, tokens):
        unknown = [t.split("=", 1)[0] for t in tokens if t.startswith("-") and len(t) > 1]
        if unknown:
            hints = [(closest(t, self._options()), t) for t in unknown]
            hints = [f"{m!r}" + (f" for {t}" if len(unknown) > 1 else "")
                     for m, t in hints if m is not None]
            text = f"; did you mean {' and '.join(hints)}?" if hints else ""
            self.error(f"unrecognized arguments: {' '.join(tokens)}{text}")

    def error(self, message):
        # a required option that is missing because it was mistyped (``--datset``):
        # the mistyped one is the error to report, with the closest option
        if "required" in message and getattr(self, "_args", None):
            typos = [t for t in self._args
                     if t.startswith("--") and len(t) > 2 and self._unknown(t)]
            if typos:
                self._args = None
                self._refuse_unknown(typos)
        super().error(message)


def _model_lines(names):
    """The help's model list: name, then the description (curve defaults filled in)."""
    lines = []
    for name in names:
        first, *more = MODELS[name].curve_description.split("\n")
        lines.append(f"  {name:<10}{first}")
        lines += [" " * 12 + s for s in more]
    return "\n".join(lines)


_CURVE_EPILOG = f"""\
models:
{_model_lines(CURVE_MODELS)}
The Gaussian models and logistic regression see features standardised with each training
set's mean and standard deviation (so the small reg and l2 are in units of each feature's
spread); naive Bayes for binary or count features sees the raw values.  Split i draws its
random numbers from seed and i alone, so --jobs N gives the same table as --jobs 1.  The
training rows of a split are put in a random order whose first rows hold two of every
class; the training set of size m is the first m rows (nested sets).  A fit that fails is
recorded as NaN, left out of the mean and reported below the table.

data sets: {', '.join(DATASETS)} (iris is bundled; the others come from
scikit-learn); NAME:AvB keeps two classes, e.g. digits:3v8.  --csv reads a file as
'fastgen fit' reads DATA (see 'fastgen fit --help').
"""

_DATA_HELP = f"""\
DATA is a CSV file with a header row (UTF-8), or a pipe such as <(zcat data.csv.gz), read
up to --max-pipe-bytes (default: ${MAX_PIPE_BYTES_ENV}, else 1G); directories and
devices are refused.  Features are numbers as Python's float() reads them, without
underscores: 12, -3.5, .5, 1e-3, +1E6 (1_000 is refused); they must be finite.  A label
is the text of its cell, exactly as the file holds it (007, 7 and 070 are three
classes; 1 and 1.0 are two), unless --numeric-labels reads the labels as numbers.
Errors name the file's own line numbers (blank lines count); cells holding a NUL
character are refused.
"""

_PREDICT_EPILOG = """\
'fastgen fit' writes PARAMS (fastgen.save_params, with the names of the target and the
feature columns) and PARAMS.json (the model, target and features); predict reads those
columns by name, so DATA may hold them in any order, with the target or other columns
besides.  Params saved without feature names (from Python, or by an older fastgen without
PARAMS.json) are refused unless --by-position says that every column of DATA is a
feature, in the order used for fitting.  Output: a
CSV with a header and the predicted label per row ('--proba' adds one probability column
p(CLASS) per class, written with full precision).  A cell of the output that begins with
=, +, -, @, a tab or a carriage return and is not a number (-1 and +2.5 are left alone)
gets a leading ' so that a spreadsheet shows it as text instead of running it as a
formula (OWASP, CSV injection); --raw writes every cell as it is.  Written to a
terminal, control characters in cells are shown as escapes such as \\x1b.  Files are
replaced whole or not at all: a temporary file beside the target, renamed onto it when
complete.
PARAMS.json carries PARAMS's SHA-256; a PARAMS.json that does not match its PARAMS is
ignored with a warning (PARAMS holds the model).

""" + _DATA_HELP


_COMPILE_EPILOG = """\
families:
{families}

Where the cache lives (numba's order): $NUMBA_CACHE_DIR when set; else __pycache__
beside fastgen's kernel sources (fastgen/kernels/__pycache__); else numba's user cache
directory (~/.cache/numba); else a private directory under the temp directory.  numba
skips a location the process cannot write to, so run 'fastgen compile' as the user (and
with the NUMBA_CACHE_DIR) of the processes that will use the cache.  The command prints
the directory it filled.  Entries are keyed on the kernel sources' path, modification
time and size, the numba version and the CPU: to share one cache between workers, give
them the same writable NUMBA_CACHE_DIR on a shared volume, the same fastgen installed at
the same path, the same numba version and CPU model, and run 'fastgen compile' once
before they start.  Concurrent writers are serialised by a lock file in the cache
directory.

Without it, the first call of each family on an input above 10^5 stored values (smaller
ones take numpy and compile nothing), in a process with an empty cache, compiles its
kernels (seconds to a minute) and says so on stderr once per family: "fastgen:
compiling kernels for logistic regression (fit_logistic) on first use (cached in
/path/to/cache for later runs)".  Silence
that line with FASTGEN_QUIET=1 (or FASTGEN_LOG_LEVEL=WARNING, or the level of the
'fastgen' logger).
"""


def _wrap(text):
    return textwrap.fill(text, width=88)


def _add_command(sub, name, func, *, help, description, epilog):
    """Add the subcommand ``name``, run by ``func(args)``: its description is wrapped
    to 88 columns, its epilog printed as written."""
    p = sub.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=epilog, help=help, description=_wrap(description))
    p.set_defaults(func=func)
    return p


def _add_numeric_labels(p):
    p.add_argument("--numeric-labels", action="store_true",
                   help="read the labels as numbers (007 and 7 are then one class); by "
                        "default a label is the text of its cell")


def _add_pipe_limit(p):
    p.add_argument("--max-pipe-bytes", metavar="SIZE",
                   help=f"most bytes read from a pipe, e.g. <(zcat data.csv.gz): a number "
                        f"with an optional K, M or G suffix (default: ${MAX_PIPE_BYTES_ENV}, "
                        f"else 1G)")


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser of the ``fastgen`` command."""
    parser = _MainParser(
        prog="fastgen",
        description="Generative classifiers (GDA, naive Bayes) and IRLS logistic regression.",
    )
    import fastgen

    parser.add_argument("--version", action="version", version=f"fastgen {fastgen.__version__}")
    sub = parser.add_subparsers(dest="command", required=True,
                                parser_class=_CommandParser)
    p = sub.add_parser("demo", help="fit LDA and QDA on the bundled iris data and report")
    p.set_defaults(func=commands.demo)

    p = _add_command(
        sub, "curve", commands.curve, epilog=_CURVE_EPILOG,
        help="learning curves: generative vs discriminative (Ng & Jordan 2001)",
        description="Test error against training-set size m for generative classifiers "
                    "and logistic regression: mean ± standard error over random splits, "
                    "printed as a table and optionally drawn as a PNG.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", metavar="NAME", help="a named data set (see below)")
    src.add_argument("--csv", metavar="PATH", help="a CSV file with a header row")
    p.add_argument("--target", metavar="COL", help="the label column of --csv")
    p.add_argument("--models", default=",".join(CURVE_MODELS),
                   help="comma-separated models (default: %(default)s)")
    p.add_argument("--splits", type=int, default=50,
                   help="random test/train splits (default: %(default)s)")
    p.add_argument("--sizes", default="geometric",
                   help="training-set sizes: 'geometric' or 'linear' (10 sizes from "
                        "max(2K, 4) to all training rows) or a list m1,m2,... "
                        "(default: %(default)s)")
    p.add_argument("--test-size", type=float, default=0.3,
                   help="fraction of rows held out for testing (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    p.add_argument("--plot", metavar="PNG", help="draw the curves into this PNG file")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes, one split each at a time (default: %(default)s)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (none is shown when stderr is not a terminal)")
    _add_numeric_labels(p)
    _add_pipe_limit(p)

    p = _add_command(
        sub, "fit", commands.fit, epilog=_PREDICT_EPILOG,
        help="fit a model on a CSV file and save its params",
        description="Fit a model on DATA (every column but the target is a feature) and "
                    "write its params.  lda, qda, gda: fit_gda with covariance 'pooled', "
                    "'per_class', 'pooled_diagonal'; nb: Bernoulli, multinomial or "
                    "Gaussian naive Bayes for binary, count or other features.")
    p.add_argument("--model", required=True, choices=FIT_MODELS)
    p.add_argument("data", metavar="DATA", help="CSV file with a header row")
    p.add_argument("--target", required=True, metavar="COL", help="the label column")
    p.add_argument("-o", "--output", metavar="PARAMS",
                   help="params file to write (.npz appended where missing; PARAMS.json "
                        "is written beside it); a directory, a device or DATA itself is "
                        "refused; required unless --summary is given")
    p.add_argument("--summary", action="store_true",
                   help="logistic: print the statsmodels-style inference table "
                        "(needs --l2 0, the default)")
    p.add_argument("--reg", type=float, default=fit_option_default("reg"),
                   help="lda/qda/gda: Σ ← (1 − reg)Σ + reg·I (default: %(default)s)")
    p.add_argument("--l2", type=float, default=fit_option_default("l2"),
                   help="logistic: ridge penalty on the coefficients (default: %(default)s)")
    p.add_argument("--firth", action="store_true",
                   help="logistic: Firth's bias-reduced estimate (binary or multinomial), "
                        "finite under separation, instead of the ridge penalty")
    p.add_argument("--correction", choices=("flic", "flac"),
                   help="logistic --firth, binary y: Puhr et al.'s intercept (flic) or "
                        "added-covariate (flac) correction, whose mean predicted "
                        "probability equals the event rate")
    p.add_argument("--alpha", type=float, default=fit_option_default("alpha"),
                   help="Bernoulli/multinomial NB smoothing (default: %(default)s)")
    p.add_argument("--var-smoothing", type=float,
                   default=fit_option_default("var_smoothing"),
                   help="Gaussian NB variance smoothing (default: %(default)s)")
    _add_numeric_labels(p)
    _add_pipe_limit(p)

    p = _add_command(sub, "predict", commands.predict_csv, epilog=_PREDICT_EPILOG,
                     help="predict labels (and probabilities) for a CSV file",
                     description="Predict a label for every row of DATA.")
    p.add_argument("params", metavar="PARAMS", help="params file written by 'fastgen fit'")
    p.add_argument("data", metavar="DATA", help="CSV file with a header row")
    p.add_argument("--proba", action="store_true", help="add class probability columns")
    p.add_argument("--by-position", action="store_true",
                   help="read the columns of DATA as the features in the fitted order "
                        "(its column count must match), not by name")
    p.add_argument("-o", "--output", metavar="CSV",
                   help="write here (default: stdout); a directory, PARAMS or DATA "
                        "itself is refused")
    p.add_argument("--raw", action="store_true",
                   help="write cells as they are, without the leading ' that keeps "
                        "spreadsheets from running cells such as =1+2 as formulas")
    _add_pipe_limit(p)

    from .._compile import DTYPES, FAMILIES

    p = _add_command(
        sub, "compile", commands.compile_kernels,
        epilog=_COMPILE_EPILOG.format(families="\n".join(
            textwrap.fill(f"{name}: {what}", width=88, initial_indent="  ",
                          subsequent_indent=" " * 4) for name, what in FAMILIES.items())),
        help="compile kernels into numba's cache ahead of time",
        description="Fill numba's cache with fastgen's compiled kernels for the chosen "
                    "model families and dtypes, one worker process per family and dtype, "
                    "so that later processes load them instead of compiling on first use.")
    p.add_argument("--family", action="append", metavar="NAME",
                   help="a family to compile (repeat, or comma-separate; default: all): "
                        + ", ".join(FAMILIES))
    p.add_argument("--dtype", action="append", metavar="DTYPE",
                   help="dtype of X to compile for (repeat, or comma-separate; default: "
                        + " and ".join(DTYPES) + ")")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: the number of CPUs)")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar or progress lines on stderr")

    p = sub.add_parser("info", help="describe a params file",
                       description="Print the type, classes, n_features, covariance type "
                                   "and array shapes of a params file.")
    p.add_argument("params", metavar="PARAMS")
    p.set_defaults(func=commands.info)

    p = sub.add_parser(
        "docs", help="build the documentation once (cached) and print or open its index",
        description=_wrap("Build the HTML documentation of this source checkout into a "
                          "cache directory, once: later runs reuse it until the sources "
                          "change.  Prints the path of index.html.  Needs sphinx and "
                          "numpydoc (the docs or test extra)."))
    p.add_argument("--open", action="store_true", help="open index.html in a web browser")
    p.add_argument("--dir", metavar="DIR",
                   help="cache directory (default: $FASTGEN_DOCS_DIR, else "
                        "~/.cache/fastgen/docs)")
    p.add_argument("--rebuild", action="store_true", help="build even if up to date")
    p.add_argument("--strict", action="store_true",
                   help="turn Sphinx warnings into errors (as the tests build the site)")
    p.set_defaults(func=_docs)
    return parser


def _docs(args):
    from .docs import run

    return run(args)


def main(argv=None) -> int:
    """Run the ``fastgen`` command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for a user mistake or a write that failed
        (reported on stderr as one ``fastgen: error: ...`` line, escaped by
        :func:`~fastgen.cli.text.printable`).
    """
    stdout, stderr = sys.stdout, sys.stderr
    # a closed standard stream (``2>&-``, ``>&-``): its descriptor is taken by the null
    # device, so that no file the command opens lands on it; diagnostics are then
    # dropped (``print(file=None)`` would write them into stdout), and output is an error
    out_closed, err_closed = _fill_if_closed(1, stdout), _fill_if_closed(2, stderr)
    if err_closed:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - closed in finally
    if out_closed:
        sys.stdout = _ClosedStdout()
    try:
        return _main(argv)
    finally:
        if err_closed:
            sys.stderr.close()
        sys.stdout, sys.stderr = stdout, stderr


def _fill_if_closed(fd, stream) -> bool:
    """Whether the standard stream on ``fd`` is closed (no stream, or no descriptor);
    a closed descriptor is opened on the null device."""
    try:
        os.fstat(fd)
    except OSError:
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        return True
    return stream is None


class _ClosedStdout:
    """Standard output that was closed: every write fails (an error, exit status 2)."""

    def write(self, text):
        raise OSError(errno.EBADF, "standard output is closed")

    flush = write

    def fileno(self):
        raise ValueError("standard output is closed")


def _main(argv):
    parser = build_parser()
    stdout = sys.stdout
    sys.stdout = _CheckedStdout(stdout)
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
            # --help, --version: what they printed must reach standard output
            sys.stdout.flush()
            return 0
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe or a full disk shows up here
        return status
    except (CLIError, ValueError, JITDisabledError) as exc:
        if isinstance(exc, _StdoutError):
            _discard_stdout(stdout)
        # fastgen reports every invalid input as a ValueError naming the problem.
        say(f"fastgen: error: {exc}", sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("fastgen: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`fastgen demo | head`): stop quietly, as Unix tools do
        _discard_stdout(stdout)
        return 0
    finally:
        sys.stdout = stdout


class _StdoutError(OutputError):
    """A write to standard output failed."""


class _CheckedStdout:
    """Standard output whose failed writes (a full disk, ``> /dev/full``) are an
    :class:`OutputError`; a closed pipe stays a ``BrokenPipeError``."""

    def __init__(self, stream):
        self._stream = stream

    def _checked(self, method, *args):
        try:
            return method(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _StdoutError(f"cannot write to standard output: "
                              f"{exc.strerror or exc}") from None

    def write(self, text):
        return self._checked(self._stream.write, text)

    def flush(self):
        return self._checked(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _discard_stdout(stream):
    """Point ``stream``'s file descriptor at the null device, so that the interpreter's
    final flush of what is still buffered cannot fail (and print a traceback) again."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's buffer)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
