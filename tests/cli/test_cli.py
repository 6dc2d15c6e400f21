"""The ``fastgen`` command line, end to end in subprocesses, plus in-process unit checks."""

import csv
import os
import subprocess
import sys

import numpy as np
import pytest

import fastgen
from fastgen import cli
from fastgen.cli import curve
from fastgen.datasets import load_iris

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, cwd=None):
    """Run ``python -m fastgen ARGS``; return (exit status, stdout, stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "fastgen", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=900)
    return proc.returncode, proc.stdout, proc.stderr


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def iris_csv(tmp_path_factory):
    """Iris with the target column in the middle."""
    X, y, names = load_iris()
    path = tmp_path_factory.mktemp("data") / "iris.csv"
    rows = [[*x[:2], s, *x[2:]] for x, s in zip(X, y, strict=True)]
    return write_csv(path, [*names[:2], "species", *names[2:]], rows)


@pytest.fixture(scope="module")
def iris_shuffled_csv(tmp_path_factory):
    """Iris features in reverse order, an extra id column first, no target."""
    X, y, names = load_iris()
    path = tmp_path_factory.mktemp("data") / "iris_new.csv"
    rows = [[f"id{i}", *x[::-1]] for i, x in enumerate(X)]
    return write_csv(path, ["id", *names[::-1]], rows)


@pytest.fixture(scope="module")
def iris_features_csv(tmp_path_factory):
    X, y, names = load_iris()
    path = tmp_path_factory.mktemp("data") / "iris_train.csv"
    return write_csv(path, [*names, "species"], [[*x, s] for x, s in zip(X, y, strict=True)])


CURVE_ARGS = ["curve", "--dataset", "iris", "--splits", "3", "--sizes", "6,15,40",
              "--no-progress"]


@pytest.fixture(scope="module")
def curve_run(tmp_path_factory):
    png = tmp_path_factory.mktemp("plot") / "curve.png"
    return run(*CURVE_ARGS, "--plot", png), png


# --------------------------------------------------------------------------- curve


def test_curve_prints_the_table(curve_run):
    (rc, out, err), _ = curve_run
    assert rc == 0, err
    assert err == ""
    assert "iris: n=150, d=4, 3 classes" in out
    assert "test error, mean ± standard error over 3 splits" in out
    lines = out.splitlines()
    head = next(i for i, s in enumerate(lines) if s.split()[:1] == ["m"])
    assert lines[head].split() == ["m", "nb", "(gaussian)", "gda", "lda", "qda", "logistic"]
    body = [s.split() for s in lines[head + 2:head + 5]]
    assert [r[0] for r in body] == ["6", "15", "40"]
    for r in body:
        cells = r[1:]
        assert len(cells) == 15  # five "mean ± se" cells
        means = np.array(cells[0::3], dtype=float)
        ses = np.array(cells[2::3], dtype=float)
        assert np.all((means >= 0) & (means <= 1)) and np.all(ses >= 0)
        assert cells[1::3] == ["±"] * 5


def test_curve_writes_a_png(curve_run):
    import matplotlib.image

    (rc, out, _), png = curve_run
    assert rc == 0
    assert f"plot written to {png}" in out
    img = matplotlib.image.imread(png)
    assert img.shape[:2] == (450, 700)
    assert img.std() > 0.01            # not a blank canvas
    assert os.path.getsize(png) < 150_000


def test_curve_jobs_2_equals_jobs_1(curve_run):
    (rc1, out1, _), png = curve_run
    rc2, out2, err2 = run(*CURVE_ARGS, "--jobs", "2")
    assert rc1 == 0 and rc2 == 0, err2
    assert out2 == out1.split("\nplot written to")[0]


def test_curve_on_csv_with_count_features_uses_multinomial_nb(tmp_path):
    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 30)
    X = rng.poisson(np.where(y[:, None] == "a", [1.0, 4.0, 2.0], [3.0, 1.0, 2.0]))
    path = write_csv(tmp_path / "counts.csv", ["w1", "label", "w2", "w3"],
                     [[x[0], t, x[1], x[2]] for x, t in zip(X, y, strict=True)])
    rc, out, err = run("curve", "--csv", path, "--target", "label", "--splits", "2",
                       "--sizes", "4,20", "--models", "nb,logistic", "--no-progress")
    assert rc == 0, err
    assert "counts.csv: n=60, d=3, 2 classes (a: 30, b: 30); counts features" in out
    assert "nb (multinomial)" in out and "logistic" in out and "lda" not in out


def test_curve_reports_failed_fits_as_nan():
    # m = 1 holds a single class: logistic regression needs two.
    rc, out, err = run("curve", "--dataset", "iris", "--splits", "2", "--sizes", "1,30",
                       "--models", "logistic,lda", "--no-progress")
    assert rc == 0, err
    row = next(s for s in out.splitlines() if s.split()[:1] == ["1"])
    assert row.split()[1] == "failed"
    assert "logistic: 2 failed fits recorded as NaN" in out
    assert "(m=1: 2)" in out


# --------------------------------------------------------------------------- fit / predict / info


def test_fit_predict_round_trip(tmp_path, iris_csv, iris_shuffled_csv):
    params_path = tmp_path / "qda.npz"
    rc, out, err = run("fit", "--model", "qda", iris_csv, "--target", "species",
                       "--reg", "0.01", "-o", params_path)
    assert rc == 0, err
    assert params_path.exists() and (tmp_path / "qda.npz.json").exists()
    out_csv = tmp_path / "pred.csv"
    # predict reads the feature columns by name: any order, extra columns ignored
    rc, out, err = run("predict", params_path, iris_shuffled_csv, "--proba", "-o", out_csv)
    assert rc == 0, err
    with open(out_csv, newline="") as f:
        rows = list(csv.reader(f))
    X, y, _ = load_iris()
    expected = fastgen.fit_gda(X, y, "per_class", reg=0.01)
    assert rows[0] == ["species", "p(setosa)", "p(versicolor)", "p(virginica)"]
    np.testing.assert_array_equal([r[0] for r in rows[1:]], fastgen.predict(expected, X))
    proba = np.array([r[1:] for r in rows[1:]], dtype=float)
    np.testing.assert_array_equal(proba, fastgen.predict_proba(expected, X))
    # the saved params are those of the in-process fit, bit for bit
    saved = fastgen.load_params(params_path)
    assert saved.covariance.tobytes() == expected.covariance.tobytes()


def test_predict_to_stdout_without_sidecar(tmp_path, iris_features_csv):
    X, y, names = load_iris()
    params = fastgen.fit_logistic(X, y, l2=1.0)
    path = tmp_path / "lr.npz"
    fastgen.save_params(path, params)
    feats = write_csv(tmp_path / "X.csv", names, X)
    # no names in the file and no sidecar: by position only when asked for
    rc, out, err = run("predict", path, feats)
    assert rc == 2 and "--by-position" in err and out == ""
    rc, out, err = run("predict", path, feats, "--by-position")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "prediction"
    np.testing.assert_array_equal(lines[1:], fastgen.predict(params, X))
    # with the target column too, the file no longer matches the params
    rc, out, err = run("predict", path, iris_features_csv, "--by-position")
    assert rc == 2 and "expects 4 columns, found 5" in err


@pytest.fixture(scope="module")
def wine_csvs(tmp_path_factory):
    """Wine for fitting (target last) and the same rows with the columns shuffled."""
    from sklearn.datasets import load_wine

    data = load_wine()
    X, y = data.data, data.target
    names = [n.replace("/", "_") for n in data.feature_names]
    d = tmp_path_factory.mktemp("wine")
    train = write_csv(d / "wine.csv", [*names, "cultivar"],
                      [[*(repr(float(v)) for v in x), c] for x, c in zip(X, y, strict=True)])
    perm = np.random.default_rng(0).permutation(len(names))
    shuffled = write_csv(d / "wine_shuffled.csv", [names[j] for j in perm],
                         [[repr(float(v)) for v in x[perm]] for x in X])
    return X, y, names, perm, train, shuffled


def _read_labels(path):
    with open(path, newline="") as f:
        return [r[0] for r in list(csv.reader(f))[1:]]


def test_predict_matches_shuffled_columns_by_the_names_in_the_file(tmp_path, wine_csvs,
                                                                   capsys):
    X, y, names, perm, train, shuffled = wine_csvs
    path = tmp_path / "wine_lda.npz"
    assert cli.main(["fit", "--model", "lda", str(train), "--target", "cultivar",
                     "-o", str(path)]) == 0
    os.remove(str(path) + ".json")  # the names now travel inside the .npz
    assert fastgen.load_feature_names(path) == (tuple(names), "cultivar")
    out_csv = tmp_path / "pred.csv"
    rc, _, err = run_in_process(["predict", str(path), str(shuffled), "-o", str(out_csv)],
                                capsys)
    assert rc == 0, err
    expected = fastgen.predict(fastgen.fit_gda(X, y), X)
    np.testing.assert_array_equal(np.array(_read_labels(out_csv), dtype=int), expected)
    assert np.mean(expected == y) > 0.95
    # by position on shuffled columns would be wrong: refused unless asked for, and the
    # answer is then a different one (what the flag promises, nothing more)
    rc, _, err = run_in_process(["predict", str(path), str(shuffled), "--by-position",
                                 "-o", str(out_csv)], capsys)
    assert rc == 0, err
    assert np.mean(np.array(_read_labels(out_csv), dtype=int) == y) < 0.9


def _write_version_1(path, params):
    """The layout of format version 1: fields and a header without names."""
    import dataclasses
    import json

    arrays, kinds = {}, {}
    for f in dataclasses.fields(params):
        if f.name in ("feature_names", "n_iter", "converged",
                      "log_likelihood_history", "history_monotone"):  # added after format 1
            continue
        v = getattr(params, f.name)
        kinds[f.name] = "array" if isinstance(v, np.ndarray) else type(v).__name__
        arrays[f.name] = np.asarray(v)
    header = {"format": "fastgen-params", "version": 1, "type": type(params).__name__,
              "fields": kinds}
    np.savez(path, __fastgen__=np.asarray(json.dumps(header)), **arrays)


def test_predict_with_a_version_1_file_uses_its_sidecar(tmp_path, wine_csvs, capsys):
    import json

    X, y, names, perm, train, shuffled = wine_csvs
    params = fastgen.fit_gda(X, y)
    path = tmp_path / "old.npz"
    _write_version_1(path, params)
    assert fastgen.load_feature_names(path) == (None, None)
    rc, _, err = run_in_process(["predict", str(path), str(shuffled)], capsys)
    assert rc == 2 and "--by-position" in err
    with open(str(path) + ".json", "w") as f:
        json.dump({"model": "lda", "target": "cultivar", "features": names}, f)
    out_csv = tmp_path / "pred.csv"
    rc, _, err = run_in_process(["predict", str(path), str(shuffled), "-o", str(out_csv)],
                                capsys)
    assert rc == 0, err
    np.testing.assert_array_equal(np.array(_read_labels(out_csv), dtype=int),
                                  fastgen.predict(params, X))


def test_fit_bernoulli_on_continuous_data_names_the_threshold(tmp_path, iris_features_csv,
                                                              capsys):
    path = tmp_path / "bnb.npz"
    rc, _, err = run_in_process(["fit", "--model", "bernoulli_nb", str(iris_features_csv),
                                 "--target", "species", "-o", str(path)], capsys)
    assert rc == 0
    assert "warning: bernoulli_nb binarises" in err and "binarize=0" in err
    # binary features: no warning
    binary = write_csv(tmp_path / "b.csv", ["a", "b", "y"],
                       [[i % 2, (i // 2) % 2, i % 3] for i in range(30)])
    rc, _, err = run_in_process(["fit", "--model", "bernoulli_nb", str(binary),
                                 "--target", "y", "-o", str(path)], capsys)
    assert rc == 0 and "binarises" not in err


def test_info(tmp_path, iris_csv):
    path = tmp_path / "lda.npz"
    assert cli.main(["fit", "--model", "lda", str(iris_csv), "--target", "species",
                     "-o", str(path)]) == 0
    rc, out, err = run("info", path)
    assert rc == 0, err
    assert "type: GDAParams" in out
    assert "model: lda" in out
    assert "covariance type: pooled" in out
    assert "classes (3): setosa, versicolor, virginica" in out
    assert "n_features: 4" in out
    assert "features: sepal_length, sepal_width, petal_length, petal_width" in out
    assert "covariance: array float64 (4, 4)" in out


@pytest.mark.parametrize("model, cls", [
    ("lda", "GDAParams"), ("qda", "GDAParams"), ("gda", "GDAParams"),
    ("nb", "GaussianNBParams"), ("gaussian_nb", "GaussianNBParams"),
    ("logistic", "LogisticParams"),
])
def test_fit_every_model_in_process(tmp_path, iris_csv, capsys, model, cls):
    path = tmp_path / "p"
    assert cli.main(["fit", "--model", model, str(iris_csv), "--target", "species",
                     "-o", str(path), "--l2", "1"]) == 0
    params = fastgen.load_params(str(path) + ".npz")
    assert type(params).__name__ == cls
    if model == "gda":
        assert params.covariance_type == "pooled_diagonal"
    assert cli.main(["predict", str(path) + ".npz", str(iris_csv)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-151] == "species" and len(lines[-150:]) == 150


@pytest.mark.parametrize("model, cls", [("nb", "BernoulliNBParams"),
                                        ("bernoulli_nb", "BernoulliNBParams"),
                                        ("multinomial_nb", "MultinomialNBParams")])
def test_fit_discrete_nb_in_process(tmp_path, capsys, model, cls):
    rng = np.random.default_rng(1)
    X = (rng.random((40, 5)) < 0.3).astype(int)
    y = np.arange(40) % 2
    data = write_csv(tmp_path / "b.csv", ["y", *"abcde"],
                     [[t, *x] for t, x in zip(y, X, strict=True)])
    path = tmp_path / "nb.npz"
    assert cli.main(["fit", "--model", model, str(data), "--target", "y",
                     "-o", str(path)]) == 0
    params = fastgen.load_params(path)
    assert type(params).__name__ == cls
    assert params.classes.tolist() == ["0", "1"]  # the text of the cells
    assert cli.main(["fit", "--model", model, str(data), "--target", "y",
                     "-o", str(path), "--numeric-labels"]) == 0
    params = fastgen.load_params(path)
    assert params.classes.dtype.kind == "i" and params.classes.tolist() == [0, 1]


# --------------------------------------------------------------------------- errors


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    write_csv(d / "text.csv", ["a", "b", "y"], [[1, 2, 0], [3, "x7", 1]])
    write_csv(d / "empty_cell.csv", ["a", "b", "y"], [[1, 2, 0], [3, "", 1]])
    write_csv(d / "ragged.csv", ["a", "b", "y"], [[1, 2, 0], [3, 1]])
    write_csv(d / "one_class.csv", ["a", "y"], [[1, 0], [2, 0], [3, 0], [4, 0]])
    write_csv(d / "ok.csv", ["a", "b", "y"],
              [[1, 2, 0], [3, 1, 1], [2, 5, 0], [4, 1, 1], [0, 3, 0], [5, 0, 1]])
    write_csv(d / "line.csv", ["a", "b", "y"],  # class 0 on a line: singular covariance
              [[1, 2, 0], [2, 4, 0], [3, 6, 0], [1, 1, 1], [2, 5, 1], [4, 0, 1]])
    (d / "empty.csv").write_text("")
    (d / "junk.npz").write_text("not a zip file")
    return d


ERRORS = [
    (["curve", "--csv", "{d}/missing.csv", "--target", "y"],
     "file '{d}/missing.csv' does not exist"),
    (["curve", "--csv", "{d}/ok.csv", "--target", "label"],
     "column 'label' not found in '{d}/ok.csv' (columns: a, b, y)"),
    (["curve", "--csv", "{d}/text.csv", "--target", "y"],
     "'{d}/text.csv', line 3, column 'b': non-numeric value 'x7' (features must be numbers)"),
    (["curve", "--csv", "{d}/empty_cell.csv", "--target", "y"],
     "'{d}/empty_cell.csv', line 3, column 'b': an empty value"),
    (["curve", "--csv", "{d}/ragged.csv", "--target", "y"],
     "'{d}/ragged.csv', line 3: 2 fields, but the header has 3"),
    (["curve", "--csv", "{d}/empty.csv", "--target", "y"], "'{d}/empty.csv' is empty"),
    (["curve", "--csv", "{d}/one_class.csv", "--target", "y"],
     "the target has a single class"),
    (["curve", "--csv", "{d}/ok.csv"], "--csv needs --target COL"),
    (["curve", "--dataset", "mnist"], "unknown data set 'mnist'"),
    (["curve", "--dataset", "digits:3v11"], "cannot read the class pair '3v11'"),
    (["curve", "--dataset", "iris", "--models", "nb,svm"], "unknown model 'svm' in --models"),
    (["curve", "--dataset", "iris", "--sizes", "5,500"], "--sizes: 500 is outside [1, 105]"),
    (["curve", "--dataset", "iris", "--sizes", "few"], "--sizes must be 'geometric'"),
    (["curve", "--dataset", "iris", "--test-size", "1.5"], "--test-size must be a fraction"),
    (["curve", "--dataset", "iris", "--jobs", "0"], "--jobs must be at least 1"),
    (["curve", "--dataset", "iris", "--plot", "{d}/no/such/dir/c.png"],
     "cannot write the plot"),
    (["curve"], "one of the arguments --dataset --csv is required"),
    (["fit", "--model", "svm", "{d}/ok.csv", "--target", "y", "-o", "{d}/p.npz"],
     "argument --model: invalid choice: 'svm'"),
    (["fit", "--model", "qda", "{d}/line.csv", "--target", "y", "-o", "{d}/p.npz"],
     "pass reg>0"),  # the library's own ValueError, one line
    (["fit", "--model", "lda", "{d}/ok.csv", "--target", "y", "-o", "{d}/no/dir/p.npz"],
     "cannot write"),
    (["predict", "{d}/missing.npz", "{d}/ok.csv"], "file '{d}/missing.npz' does not exist"),
    (["predict", "{d}/junk.npz", "{d}/ok.csv"], "is not a fastgen params file"),
    (["info", "{d}/missing.npz"], "file '{d}/missing.npz' does not exist"),
    (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
]


# Run in subprocesses (the real thing, a few seconds each on a busy machine); the others
# call main() in-process, where argparse's exit is a SystemExit.
IN_SUBPROCESS = {"file '{d}/missing.csv' does not exist", "unknown data set 'mnist'",
                 "argument --model: invalid choice: 'svm'", "pass reg>0",
                 "'{d}/text.csv', line 3, column 'b': non-numeric value 'x7' (features must "
                 "be numbers)",
                 "column 'label' not found in '{d}/ok.csv' (columns: a, b, y)"}


def run_in_process(args, capsys):
    try:
        rc = cli.main(list(args))
    except SystemExit as exc:
        rc = exc.code
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.mark.parametrize("args, message", ERRORS, ids=[" ".join(a[:3]) for a, _ in ERRORS])
def test_errors_are_one_line_with_status_2(bad_files, capsys, args, message):
    d = str(bad_files)
    args = [a.replace("{d}", d) for a in args]
    if message in IN_SUBPROCESS:
        rc, out, err = run(*args)
    else:
        rc, out, err = run_in_process(args, capsys)
    assert rc == 2
    assert out == ""
    assert err.startswith("fastgen: error: ")
    assert err.count("\n") == 1, err          # one line: no traceback
    assert message.replace("{d}", d) in err


def test_predict_reports_a_missing_feature_column(tmp_path, bad_files, capsys):
    path = tmp_path / "p.npz"
    assert cli.main(["fit", "--model", "lda", str(bad_files / "ok.csv"), "--target", "y",
                     "-o", str(path)]) == 0
    other = write_csv(tmp_path / "other.csv", ["a", "c"], [[1, 2]])
    assert cli.main(["predict", str(path), str(other)]) == 2
    assert "column 'b' not found in" in capsys.readouterr().err


# --------------------------------------------------------------------------- helpers


def test_feature_kind():
    assert cli.feature_kind(np.array([[0.0, 1.0], [1.0, 1.0]])) == "binary"
    assert cli.feature_kind(np.array([[0.0, 3.0], [1.0, 7.0]])) == "counts"
    assert cli.feature_kind(np.array([[0.0, 3.5], [1.0, 7.0]])) == "continuous"
    assert cli.feature_kind(np.array([[-1.0, 3.0], [1.0, 7.0]])) == "continuous"


def test_nested_order_starts_with_every_class():
    y = np.array([0] * 50 + [1] * 3 + [2] * 1)
    for seed in range(5):
        order = curve.nested_order(np.random.default_rng(seed), y)
        assert sorted(order.tolist()) == list(range(54))
        assert sorted(y[order[:5]].tolist()) == [0, 0, 1, 1, 2]


def test_summarise_leaves_failures_out():
    e = np.array([[[0.1, np.nan]], [[0.3, np.nan]], [[np.nan, 0.2]]])  # (3 splits, 1, 2)
    mean, se, n_ok = curve.summarise(e)
    np.testing.assert_allclose(mean, [[0.2, 0.2]])
    np.testing.assert_allclose(se[0, 0], np.std([0.1, 0.3], ddof=1) / np.sqrt(2))
    assert np.isnan(se[0, 1])
    np.testing.assert_array_equal(n_ok, [[2, 1]])


def test_progress_bar_goes_to_stderr(capsys):
    bar = curve.progress_bar(3, True)
    for _ in range(3):
        bar.update()
    bar.close()
    cap = capsys.readouterr()
    assert cap.out == "" and "splits" in cap.err
    assert curve.progress_bar(3, False) is None


def test_demo_into_a_closed_pipe_exits_quietly():
    """`fastgen demo | head -1` where the reader has gone: no traceback, exit status 0."""
    proc = subprocess.Popen([sys.executable, "-m", "fastgen", "demo"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()  # before the child (still importing) has written anything
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=900) == 0, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err
