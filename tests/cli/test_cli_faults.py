"""The command line under hostile input: devices and directories, endless pipes, labels
that a spreadsheet would run, blank lines, numbers in odd spellings, stale sidecars.

Anything that could hang or read without end runs in a subprocess under a timeout.
"""

import csv
import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastgen
from fastgen import cli
from fastgen.cli.errors import CLIError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fastgen.__file__)))
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def run(args, *, shell=False, env_extra=None, timeout=900, cwd=None):
    """Run ``python -m fastgen ARGS`` (or a bash command line); (status, out, err)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    cmd = ["bash", "-c", args] if shell else [sys.executable, "-m", "fastgen", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def in_process(args, capsys):
    try:
        rc = cli.main([str(a) for a in args])
    except SystemExit as exc:
        rc = exc.code
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def write_rows(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2)) + (np.arange(60) % 2)[:, None]
    data = write_rows(d / "train.csv", ["a", "b", "y"],
                      [[f"{u:.6f}", f"{v:.6f}", k % 2] for (u, v), k in zip(X, range(60))])
    model = str(d / "model.npz")
    assert cli.main(["fit", "--model", "lda", data, "--target", "y", "-o", str(model)]) == 0
    (d / "folder").mkdir()
    return {"dir": str(d), "data": data, "model": model, "folder": str(d / "folder")}


# ------------------------------------------------------------ devices and directories

REFUSED = [
    (["info", "/dev/zero"], "'/dev/zero' is a character device, not a fastgen params file"),
    (["info", "{folder}"], "is a directory, not a fastgen params file"),
    (["predict", "{model}", "/dev/zero"], "'/dev/zero' is a character device, not a CSV"),
    (["predict", "/dev/zero", "{data}"], "'/dev/zero' is a character device"),
    (["predict", "{model}", "{folder}"], "is a directory, not a CSV file"),
    (["fit", "--model", "lda", "/dev/urandom", "--target", "y", "-o", "{dir}/p.npz"],
     "'/dev/urandom' is a character device, not a CSV file"),
    (["curve", "--csv", "/dev/zero", "--target", "y", "--splits", "2"],
     "'/dev/zero' is a character device, not a CSV file"),
]


@pytest.mark.parametrize("args, message", REFUSED, ids=[" ".join(a[:2]) + " " + a[-1]
                                                         for a, _ in REFUSED])
def test_devices_and_directories_are_refused_in_one_line(files, args, message):
    args = [a.format(**files) for a in args]
    rc, out, err = run(args, timeout=900)  # reading /dev/zero would never end
    assert rc == 2 and out == "", (rc, err)
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    assert message.format(**files) in err, err


# ------------------------------------------------------------------------ pipes


ENDLESS = "(echo a,b,y; yes 1.5,2.5,0)"


@pytest.mark.parametrize("how", ["option", "environment", "option beats environment"])
def test_an_endless_pipe_stops_at_the_limit(files, how):
    option = " --max-pipe-bytes 64K" if how != "environment" else ""
    env = {"FASTGEN_MAX_PIPE_BYTES": "100G" if how == "option beats environment"
           else "64K" if how == "environment" else ""}
    cmd = (f"{ENDLESS} | {sys.executable} -m fastgen predict {files['model']} /dev/stdin"
           f"{option}")
    rc, out, err = run(cmd, shell=True, env_extra=env, timeout=900)
    assert rc == 2 and out == "", (rc, err[-500:])
    assert "is a pipe and sent more than 65536 bytes" in err, err
    assert "--max-pipe-bytes" in err and "FASTGEN_MAX_PIPE_BYTES" in err


def test_process_substitution_keeps_working(files, tmp_path):
    """fit and predict read ``<(zcat data.csv.gz)`` as they read the file itself."""
    gz = tmp_path / "train.csv.gz"
    subprocess.run(f"gzip -c {files['data']} > {gz}", shell=True, check=True)
    py = f"{sys.executable} -m fastgen"
    cmd = (f"{py} fit --model qda <(zcat {gz}) --target y -o {tmp_path}/piped.npz "
           f">/dev/null && "
           f"{py} predict {tmp_path}/piped.npz <(zcat {gz}) --proba --max-pipe-bytes 1M")
    rc, out, err = run(cmd, shell=True, timeout=900)
    assert rc == 0, err
    assert cli.main(["fit", "--model", "qda", files["data"], "--target", "y",
                     "-o", str(tmp_path / "file.npz")]) == 0
    assert fastgen.load_params(tmp_path / "piped.npz") == fastgen.load_params(
        tmp_path / "file.npz")
    buf = io.StringIO()
    args = cli.build_parser().parse_args(["predict", str(tmp_path / "file.npz"),
                                          files["data"], "--proba"])
    assert args.func(args, buf) == 0
    assert out == buf.getvalue()


SIZES = [("1048576", 1 << 20), ("64K", 64 << 10), ("512M", 512 << 20), ("2G", 2 << 30),
         ("1GiB", 1 << 30), ("3mb", 3 << 20), (" 7 ", 7), ("1T", 1 << 40)]
BAD_SIZES = ["0", "-1", "1.5G", "G", "", "1_000", "ten", "1E6", "٣K"]


@pytest.mark.parametrize("text, size", SIZES)
def test_pipe_limit_sizes(text, size, monkeypatch):
    from fastgen.cli.csvio import max_pipe_bytes, parse_size

    assert parse_size(text) == size
    monkeypatch.setenv("FASTGEN_MAX_PIPE_BYTES", text)
    assert max_pipe_bytes() == size and max_pipe_bytes("1K") == 1024


@pytest.mark.parametrize("text", BAD_SIZES)
def test_bad_pipe_limit_sizes_are_refused(text, files, capsys):
    rc, out, err = in_process(["predict", files["model"], files["data"],
                               "--max-pipe-bytes", text], capsys)
    assert rc == 2 and "--max-pipe-bytes must be a positive number of bytes" in err, err


# ------------------------------------------------------------------- CSV injection

DANGEROUS = ["=1+2", "@SUM(A1)", "+cmd|' /C calc'!A0", "-2+3", "\tTAB", "\r=CR",
             "=HYPERLINK(\"http://x\")"]
HARMLESS = ["-1", "+1", "-2.5e3", "plain", "a=b", "'quoted"]


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return "_" not in text


@pytest.mark.parametrize("raw", [False, True], ids=["escaped", "raw"])
@pytest.mark.parametrize("labels", [DANGEROUS[:4], DANGEROUS[3:], HARMLESS[:3],
                                    [DANGEROUS[0], HARMLESS[0]]], ids=str)
def test_predictions_csv_cells_are_not_formulas(tmp_path, capsys, labels, raw):
    rng = np.random.default_rng(1)
    K = len(labels)
    X = rng.standard_normal((20 * K, 2)) + 3 * np.repeat(np.arange(K), 20)[:, None]
    y = np.repeat(np.array(labels), 20)
    params = fastgen.fit_gaussian_nb(X, y)
    model = tmp_path / "m.npz"
    fastgen.save_params(model, params, feature_names=["=f1", "f2"], target_name="=target")
    data = write_rows(tmp_path / "x.csv", ["=f1", "f2"], X.tolist())
    rc, out, err = in_process(["predict", model, data, "--proba", *(["--raw"] * raw)],
                              capsys)
    assert rc == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    header, cells = rows[0], [r[0] for r in rows[1:]]
    expected = [str(c) for c in params.classes[np.argmax(fastgen.predict_proba(params, X),
                                                         axis=1)]]
    written = [header[0], *cells, *header[1:]]
    wanted = ["=target", *expected, *(f"p({c})" for c in params.classes)]
    if raw:
        assert written == wanted
    else:
        for got, want in zip(written, wanted, strict=True):
            assert got in (want, "'" + want)  # nothing lost but a leading quote
            assert not got.startswith(FORMULA_START) or _is_number(got), got
            assert (got != want) == (want.startswith(FORMULA_START)
                                     and not _is_number(want))
    for r in rows[1:]:  # probabilities are numbers, never touched
        assert all(math.isfinite(float(v)) for v in r[1:])


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.one_of(st.text(max_size=12),
                 st.builds(lambda c, t: c + t, st.sampled_from(FORMULA_START),
                           st.text(max_size=8)),
                 st.floats(allow_nan=False).map(repr),
                 st.floats(allow_nan=False).map(lambda v: f"{v:+.3g}")))
def test_escape_cell_property(text):
    from fastgen.cli.commands import escape_cell

    got = escape_cell(text)
    assert got in (text, "'" + text)                  # lossless: at most a leading quote
    assert not got.startswith(FORMULA_START) or _is_number(got)  # never a formula
    if _is_number(text) or not text.startswith(FORMULA_START):
        assert got == text                            # numbers and plain text untouched


# ------------------------------------------------------------ line numbers, numbers

LAYOUTS = {
    "blank after header": "a,b,y\n\n1,2,0\n{bad}\n3,4,1\n",
    "blank lines between": "a,b,y\n1,2,0\n\n\n\n3,4,1\n\n{bad}\n",
    "blank lines first": "\n\na,b,y\n1,2,0\n\n{bad}\n",
    "crlf": "a,b,y\r\n\r\n1,2,0\r\n\r\n{bad}\r\n3,4,1\r\n",
    "quoted newline before": "a,b,y\n1,2,\"zero\nlabel\"\n\n{bad}\n",
}
BAD_ROWS = {
    "non-numeric": ("5,x7,1", "column 'b': non-numeric value 'x7'"),
    "ragged": ("777,1", "2 fields, but the header has 3"),
    "underscore": ("5,1_000,1", "column 'b': non-numeric value '1_000' (features must be "
                                "numbers, written without underscores)"),
}


@pytest.mark.parametrize("bad", list(BAD_ROWS))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_errors_name_the_files_own_line(tmp_path, capsys, layout, bad):
    row, message = BAD_ROWS[bad]
    text = LAYOUTS[layout].format(bad=row)
    path = tmp_path / "data.csv"
    path.write_bytes(text.encode())
    want = text.replace("\r\n", "\n").split("\n").index(row) + 1  # the reference
    rc, out, err = in_process(["fit", "--model", "lda", path, "--target", "y",
                               "-o", tmp_path / "p.npz"], capsys)
    assert rc == 2
    assert f"line {want}" in err and message in err, (want, err)


NUMBERS = ["12", "-3.5", ".5", "5.", "1e-3", "+1E6", " 7 ", "\t8", "0010", "1.5E+02",
           "١٢٣", "-0"]
NOT_NUMBERS = ["1_000", "1__0", "1_0.5", "0x10", "1,5", "1e", "--1", "", "one", "1 2",
               "inf", "-inf", "nan", "1e999"]


def _reference(text):
    """The grammar: Python's float() without underscores, finite."""
    if "_" in text:
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


@pytest.mark.parametrize("cell", NUMBERS + NOT_NUMBERS, ids=repr)
def test_number_grammar(tmp_path, cell):
    from fastgen.cli.csvio import load_csv

    path = write_rows(tmp_path / "n.csv", ["a", "y"], [["1", "0"], [cell, "1"]])
    want = _reference(cell)
    assert (want is None) == (cell in NOT_NUMBERS)
    if want is None:
        with pytest.raises(CLIError, match="line 3, column 'a'"):
            load_csv(path, "y")
    else:
        X, _y, _names = load_csv(path, "y")
        assert X[1, 0] == want


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.integers(1, 6))
def test_underscores_are_refused_wherever_they_sit(value, at):
    from fastgen.cli.csvio import numeric_columns

    text = repr(value)
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    i = digits[min(at, len(digits)) - 1]
    spelled = text[:i + 1] + "_" + text[i + 1:]  # float() may accept this one
    rows = [[text], [spelled]]
    with pytest.raises(CLIError, match="line 3, column 'x'.*without underscores"):
        numeric_columns(rows, [0], ["x"], "f.csv")
    assert numeric_columns(rows[:1], [0], ["x"], "f.csv")[0, 0] == value


def test_help_states_the_grammar_the_limit_and_the_escaping():
    parser = cli.build_parser()
    sub = parser._subparsers._group_actions[0].choices
    for name in ("fit", "predict"):
        text = " ".join(sub[name].format_help().split())
        assert "float()" in text and "without underscores" in text and "1_000" in text
        assert "--max-pipe-bytes" in text and "FASTGEN_MAX_PIPE_BYTES" in text
        assert "OWASP" in text and "--raw" in text


def test_an_underscore_number_is_refused_end_to_end(tmp_path):
    path = write_rows(tmp_path / "u.csv", ["a", "y"], [["1", "0"], ["1_000", "1"]] * 3)
    rc, out, err = run(["fit", "--model", "lda", path, "--target", "y",
                        "-o", str(tmp_path / "u.npz")])
    assert rc == 2 and "line 3, column 'a': non-numeric value '1_000'" in err, err


# --------------------------------------------------------------------------- sidecar


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.mark.parametrize("damage", ["stale", "truncated", "not an object", "none"])
def test_the_params_file_wins_over_its_sidecar(files, tmp_path, capsys, damage):
    model = tmp_path / "m.npz"
    shutil.copy(files["model"], model)
    shutil.copy(files["model"] + ".json", str(model) + ".json")
    side = tmp_path / "m.npz.json"
    meta = json.loads(side.read_text())
    assert meta["params_sha256"] == _sha256(model)  # the sidecar names its params file
    if damage == "stale":  # another fit's params, this fit's sidecar
        X = np.random.default_rng(5).standard_normal((30, 2))
        fastgen.save_params(model, fastgen.fit_gaussian_nb(X, np.arange(30) % 3),
                            feature_names=["a", "b"], target_name="y")
    elif damage == "truncated":
        side.write_text(side.read_text()[:25])
    elif damage == "not an object":
        side.write_text("[1, 2]")
    rc, out, err = in_process(["info", model], capsys)
    assert rc == 0, err
    if damage == "none":
        assert err == "" and "model: lda" in out
    else:
        assert err.startswith("fastgen: warning: ignoring") and err.count("\n") == 1, err
        assert "model:" not in out  # the sidecar's claim is not shown
    want = type(fastgen.load_params(model)).__name__
    assert f"type: {want}" in out
    rc, out, err = in_process(["predict", model, files["data"]], capsys)
    assert rc == 0 and len(out.splitlines()) == 61


@pytest.mark.parametrize("content", [
    "[" * 100000,                                    # RecursionError in json
    '{"features": ' * 100000,
    '{"features": [1, 2], "params_sha256": null}',   # names that are not text
    '{"features": "ab"}',
    '{"features": ["a", "b"], "params_sha256": 5}',
    '{"features": ["a", "b"], "target": ["y"]}',
    '{"features": ["a", "b"], "model": {}}',
    "null", '"text"', "1e999", "",
    b"\xff\xfe\x00{",                                 # not UTF-8
])
def test_every_damaged_sidecar_only_warns(files, tmp_path, capsys, content):
    model = tmp_path / "m.npz"
    shutil.copy(files["model"], model)
    side = tmp_path / "m.npz.json"
    if isinstance(content, bytes):
        side.write_bytes(content)
    else:
        side.write_text(content)
    for args in (["info", model], ["predict", model, files["data"]]):
        rc, out, err = in_process(args, capsys)
        assert rc == 0, err
        assert err.startswith("fastgen: warning: ignoring") and err.count("\n") == 1, err
    assert len(out.splitlines()) == 61


# ------------------------------------------------------------------------ labels


def _fit_predict_labels(tmp_path, capsys, labels, *extra):
    """Fit Gaussian naive Bayes on rows whose features sit apart by label (two rows
    per label), predict them back; (params, raw cells, escaped cells)."""
    rows = [[f"{10.0 * k + 0.01 * r:.2f}", f"{-10.0 * k - 0.02 * r:.2f}", text]
            for k, text in enumerate(labels) for r in range(2)]
    data = tmp_path / "labels.csv"
    with open(data, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_ALL)
        w.writerow(["a", "b", "y"])
        w.writerows(rows)
    model = tmp_path / "labels.npz"
    rc, _out, err = in_process(["fit", "--model", "gaussian_nb", data, "--target", "y",
                                "-o", model, *extra], capsys)
    assert rc == 0, err
    cells = {}
    for raw in (True, False):
        out = tmp_path / f"pred{raw}.csv"
        rc, _o, err = in_process(["predict", model, data, "-o", out]
                                 + (["--raw"] if raw else []), capsys)
        assert rc == 0, err
        with open(out, newline="", encoding="utf-8") as f:
            cells[raw] = [r[0] for r in csv.reader(f)][1:]
    return fastgen.load_params(model), cells[True], cells[False]


LABELS = ["007", "7", "070", "02139", "1", "1.0", "1e0", "\tTAB", " x ", "\rCR", "=1+2"]


def test_labels_are_the_text_of_their_cells(tmp_path, capsys):
    params, raw, escaped = _fit_predict_labels(tmp_path, capsys, LABELS)
    assert sorted(params.classes.tolist()) == sorted(LABELS)  # eleven classes
    want = [text for text in LABELS for _ in range(2)]
    assert raw == want
    assert escaped == [cli.commands.escape_cell(t) for t in want]
    assert escaped[want.index("\tTAB")] == "'\tTAB"  # the escaping still applies
    assert escaped[want.index("02139")] == "02139"


def test_numeric_labels_on_request(tmp_path, capsys):
    params, raw, _ = _fit_predict_labels(tmp_path, capsys, ["1", "2.5", "10"],
                                         "--numeric-labels")
    assert params.classes.dtype.kind == "f" and params.classes.tolist() == [1, 2.5, 10]
    assert raw == ["1.0", "1.0", "2.5", "2.5", "10.0", "10.0"]


label_text = st.text(st.characters(blacklist_categories=("Cs",),
                                   blacklist_characters="\x00"), min_size=1, max_size=8)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.lists(label_text, min_size=2, max_size=4, unique=True))
def test_random_labels_round_trip(tmp_path_factory, capsys, labels):
    tmp = tmp_path_factory.mktemp("labels")
    params, raw, escaped = _fit_predict_labels(tmp, capsys, labels)
    assert sorted(params.classes.tolist()) == sorted(labels)
    want = [text for text in labels for _ in range(2)]
    assert raw == want
    assert escaped == [cli.commands.escape_cell(t) for t in want]


# ------------------------------------------------------------------- outputs


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.mark.parametrize("link", ["same path", "symlink", "hard link"])
@pytest.mark.parametrize("over", ["data", "params"])
def test_outputs_over_inputs_are_refused(files, tmp_path, capsys, link, over):
    data = tmp_path / "d.npz"  # so that 'fit -o' can name it as it is
    shutil.copy(files["data"], data)
    model = tmp_path / "m.npz"
    shutil.copy(files["model"], model)
    source = data if over == "data" else model
    target = tmp_path / "out.npz"
    if link == "same path":
        target = source
    elif link == "symlink":
        target.symlink_to(source)
    else:
        os.link(source, target)
    before = _digest(source)
    commands = [["predict", model, data, "-o", target]]
    if over == "data":
        commands.append(["fit", "--model", "lda", data, "--target", "y", "-o", target])
    for args in commands:
        rc, out, err = in_process(args, capsys)
        assert rc == 2 and out == "", err
        assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
        assert "(the same file)" in err and "name another file" in err
        assert _digest(source) == before


def test_outputs_that_are_directories_or_devices_are_refused(files, tmp_path, capsys):
    adir = tmp_path / "adir"
    adir.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    fit = ["fit", "--model", "lda", files["data"], "--target", "y", "-o"]
    cases = [(fit + [adir], "is a directory"), (fit + [fifo], "is a pipe"),
             (["predict", files["model"], files["data"], "-o", adir], "is a directory")]
    full_npz = "/dev/full.npz"
    if os.path.exists("/dev/full") and not os.path.exists(full_npz):
        cases.append((fit + ["/dev/full"], "is a character device"))
    try:
        for args, message in cases:
            rc, out, err = in_process(args, capsys)
            assert rc == 2 and out == "", err
            assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
            assert message in err, err
    finally:
        created = os.path.exists(full_npz)
        if created:
            os.unlink(full_npz)
    assert not created
    assert sorted(os.listdir(tmp_path)) == ["adir", "fifo"] and not os.listdir(adir)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["predict {model} {data}", "info {model}",
                                     "predict {model} {data} -o /dev/full"])
def test_a_failed_write_is_one_error_line(files, command):
    cmd = f"{sys.executable} -m fastgen {command.format(**files)} > /dev/full"
    rc, out, err = run(cmd, shell=True, timeout=900)
    assert rc == 2, err
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    assert "No space left on device" in err


# -------------------------------------------------------------- what is printed

CONTROL = "b\x1b]0;PWNED\x07\x1b[2J"


def _no_control(text):
    return not any(c in text.replace("\n", "") for c in "\x1b\x07\x9b\x00\r\t\u202e")


def test_printed_names_and_labels_are_escaped(tmp_path, capsys):
    data = write_rows(tmp_path / "d.csv", ["a", CONTROL, "y\u202e"],
                      [[k, k * 2 + 1, f"\x1b[31m{k % 2}"] for k in range(8)])
    model = tmp_path / "m.npz"
    outputs = []
    for args in (["fit", "--model", "lda", data, "--target", "y\u202e", "-o", model],
                 ["info", model],
                 ["fit", "--model", "lda", data, "--target", "nope\x1b[2J", "-o", model],
                 ["predict", model, write_rows(tmp_path / "e.csv", ["a", "c"], [[1, 2]])],
                 ["curve", "--csv", data, "--target", "y\u202e", "--splits", "1",
                  "--sizes", "4", "--models", "nb", "--no-progress"]):
        rc, out, err = in_process(args, capsys)
        outputs.append((rc, out, err))
        assert _no_control(out) and _no_control(err), (args, out, err)
    (rc, out, _), (rc_missing, _, err) = outputs[1], outputs[2]
    assert rc == 0 and "features: a, b\\x1b]0;PWNED\\x07\\x1b[2J" in out
    assert "\\x1b[31m0" in out  # the labels
    assert rc_missing == 2 and "\\x1b" in err and err.count("\n") == 1


@given(st.text())
def test_printable_escapes_exactly_the_control_characters(text):
    from fastgen.cli.text import printable

    shown = printable(text)
    assert not any(unicodedata.category(c) == "Cc" or c in "\u2028\u2029\u202e"
                   for c in shown)
    if not any(unicodedata.category(c) == "Cc" for c in text) and not any(
            c in text for c in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067"
                               "\u2068\u2069"):
        assert shown == text


# ------------------------------------------------------------------ NUL bytes


@pytest.mark.parametrize("header, row", [
    (["a", "b", "y"], ["2\x00", "1", "0"]),
    (["a", "b", "y"], ["2", "1", "0\x00"]),
    (["a", "b\x00", "y"], ["2", "1", "0"]),
])
def test_cells_with_nul_are_refused(tmp_path, capsys, header, row):
    data = write_rows(tmp_path / "nul.csv", header, [row, ["1", "2", "1"]])
    rc, out, err = in_process(["fit", "--model", "lda", data, "--target", "y",
                               "-o", tmp_path / "m.npz"], capsys)
    assert rc == 2 and out == "", err
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    assert "NUL character" in err and not (tmp_path / "m.npz").exists()


def test_predictions_shown_on_a_terminal_escape_control_characters(files, tmp_path):
    """Labels go to a file or pipe exactly as read, but shown on a terminal (a pty
    here) their control characters are escapes, so they cannot run there."""
    import pty

    rows = [[k, k * 3 % 7, "\x1b]0;PWNED\x07" if k % 2 else "plain"] for k in range(12)]
    data = write_rows(tmp_path / "d.csv", ["a", "b", "y"], rows)
    model = tmp_path / "m.npz"
    assert cli.main(["fit", "--model", "lda", data, "--target", "y", "-o", str(model)]) == 0
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "fastgen", "predict", str(model), data, "--raw"]
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.run(command, stdout=secondary, stderr=subprocess.PIPE, env=env,
                              timeout=900)
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 1 << 16)
            except OSError:  # the pty's other end is closed: all read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in shown and b"\x07" not in shown
    assert b"\\x1b]0;PWNED\\x07" in shown
    piped = subprocess.run(command, capture_output=True, env=env, timeout=900)
    assert b"\x1b]0;PWNED\x07" in piped.stdout  # not a terminal: as read


# ------------------------------------------------------------------ quoting

QUOTES = {
    "unterminated": ('a,b,y\n0.1,0.2,0\n1.0,2.0,"oops\n1.5,-1,1\n2.0,-2,0\n', 3,
                     "a quote opens a cell and is never closed"),
    "unterminated after a quoted newline": (
        'a,b,y\n0.1,0.2,"multi\nline"\n\n1,2,"x\n3,4,1\n', 5,
        "a quote opens a cell and is never closed"),
    "text after a closing quote": ('a,b,y\n0.1,0.2,"c0"x\n1,2,1\n', 2,
                                   "text after a closing quote"),
}


@pytest.mark.parametrize("command", ["fit", "predict"])
@pytest.mark.parametrize("case", list(QUOTES))
def test_a_broken_quote_is_refused_naming_its_line(files, tmp_path, capsys, case, command):
    text, line, message = QUOTES[case]
    path = tmp_path / "q.csv"
    path.write_text(text)
    args = (["fit", "--model", "lda", path, "--target", "y", "-o", tmp_path / "m.npz"]
            if command == "fit" else ["predict", files["model"], path])
    rc, out, err = in_process(args, capsys)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    assert f"line {line}: {message}" in err, err
    assert not (tmp_path / "m.npz").exists()


def test_well_formed_quotes_still_read(files, tmp_path, capsys):
    path = tmp_path / "ok.csv"
    path.write_text('a,b,y\n"0.1",0.2,"multi\nline ""q"" ok"\n1,"2",x\n')
    rc, out, err = in_process(["predict", files["model"], path], capsys)
    assert rc == 0 and len(out.splitlines()) == 3, (out, err)


# --------------------------------------------------- feature names of a params file


def _stored_names(path, names):
    """Rewrite the feature names stored in the header of params file ``path``."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    header = json.loads(str(np.load(io.BytesIO(members["__fastgen__.npy"]))[()]))
    header["feature_names"] = names
    buf = io.BytesIO()
    np.save(buf, np.array(json.dumps(header)))
    members["__fastgen__.npy"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        for name, raw in members.items():
            z.writestr(name, raw)


@pytest.mark.parametrize("names", [["a", "a"], ["b"], ["a", "b", "y"]])
@pytest.mark.parametrize("command", ["predict", "info"])
def test_params_naming_a_column_twice_are_refused(files, tmp_path, capsys, names, command):
    model = str(tmp_path / "m.npz")
    shutil.copy(files["model"], model)
    _stored_names(model, names)
    rc, out, err = in_process([command, model] + ([files["data"]] if command == "predict"
                                                  else []), capsys)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    assert "feature name" in err, err


def test_the_command_line_never_reads_a_column_twice(files, tmp_path, capsys, monkeypatch):
    """Names from elsewhere than the checked params file (the sidecar of an older file)
    are checked too."""
    from fastgen.cli import commands

    monkeypatch.setattr(commands, "load_feature_names", lambda path: (("a", "a"), "y"))
    rc, out, err = in_process(["predict", files["model"], files["data"]], capsys)
    assert rc == 2 and out == "" and "names a feature more than once" in err, err


# ----------------------------------------------------- closed standard streams


@pytest.fixture(scope="module")
def warned_model(files, tmp_path_factory):
    """A model whose sidecar is damaged: ``predict`` and ``info`` warn about it."""
    d = tmp_path_factory.mktemp("closed")
    model = str(d / "m.npz")
    shutil.copy(files["model"], model)
    with open(model + ".json", "w") as f:
        f.write("garbage")
    return model


def _py(*args):
    import shlex

    return " ".join(shlex.quote(a) for a in (sys.executable, "-m", "fastgen", *args))


@pytest.mark.parametrize("case", ["warning", "error"])
def test_a_closed_stderr_never_reaches_stdout(files, warned_model, tmp_path, case):
    """``2>&-``: warnings and errors were printed into stdout (into the predictions)."""
    data = files["data"] if case == "warning" else str(tmp_path / "absent.csv")
    rc, out, err = run(f"{_py('predict', warned_model, data)} 2>&-", shell=True)
    assert rc == (0 if case == "warning" else 2), (rc, out, err)
    assert "fastgen" not in out and err == "", out
    if case == "warning":
        assert out.splitlines()[0] == "y" and len(out.splitlines()) == 61, out


def test_a_closed_stdout_is_one_error_line(warned_model):
    """``>&-``: an AttributeError traceback before; now exit status 2 and one line (and
    nothing at all with stderr closed too)."""
    args = ["info", warned_model]
    rc, out, err = run(f"{_py(*args)} >&-", shell=True)
    assert rc == 2 and "Traceback" not in err, err
    assert err.splitlines()[-1] == ("fastgen: error: cannot write to standard output: "
                                    "standard output is closed"), err
    assert run(f"{_py(*args)} >&- 2>&-", shell=True)[::2] == (2, "")


@pytest.mark.parametrize("output", ["", "sub/"])
@pytest.mark.parametrize("command", ["fit", "predict"])
def test_an_output_naming_no_file_is_refused(files, tmp_path, capsys, monkeypatch, output,
                                             command):
    """``fit -o ''`` wrote the hidden files ``.npz`` and ``.npz.json``."""
    monkeypatch.chdir(tmp_path)
    args = (["fit", "--model", "lda", files["data"], "--target", "y", "-o", output]
            if command == "fit" else ["predict", files["model"], files["data"], "-o", output])
    rc, out, err = in_process(args, capsys)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.startswith("fastgen: error: ") and err.count("\n") == 1, err
    assert "names no file" in err, err
    assert os.listdir(tmp_path) == []


# ------------------------------------------- model refusals named by line and column


def test_a_models_refusal_names_the_files_line_and_column(tmp_path, capsys):
    """"X contains a negative value (-6.0) at row 2, column 1" named X's indices, not
    the file's line (blank lines count) and column (the target comes first here)."""
    path = tmp_path / "neg.csv"
    path.write_text("y,a,b\n\nx,1,2\ny,3,4\n\nx,5,-6\ny,7,8\n")
    rc, out, err = in_process(["fit", "--model", "multinomial_nb", path, "--target", "y",
                               "-o", tmp_path / "m.npz"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert f"{str(path)!r}, line 6, column 'b': X contains a negative value (-6.0);" in err
    assert "row 2" not in err, err


def test_a_refusal_when_predicting_names_the_files_line(files, tmp_path, capsys,
                                                         monkeypatch):
    from fastgen.cli import commands

    def refuse(params, X):
        raise ValueError("X value at row 1, column 0 (1e+308) overflows float32")

    monkeypatch.setattr(commands, "predict", refuse)
    path = tmp_path / "p.csv"
    path.write_text("b,a\n1,2\n\n3,4\n")
    rc, out, err = in_process(["predict", files["model"], path], capsys)
    assert rc == 2 and out == "", err
    assert f"{str(path)!r}, line 4, column 'a': X value (1e+308) overflows" in err, err


@pytest.mark.parametrize("message", ["no row here", "X contains NaN at row 9, column 0",
                                     "X contains NaN at row 0, column 5"])
def test_refusals_without_a_row_of_the_file_are_unchanged(message):
    from fastgen.cli.commands import located

    assert located(message, "d.csv", [2, 3], ["a", "b"]) == message
