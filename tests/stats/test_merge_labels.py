"""issue 42b: merging chunk statistics keeps every label exact (or refuses), whatever
the label dtypes of the chunks."""

import numpy as np
import pytest

import fastgen

BIG = 2**53


def _X(n, seed):
    return np.abs(np.random.default_rng(seed).normal(size=(n, 3)))


def _merged(ya, yb, kind):
    Xa, Xb = _X(ya.shape[0], 1), _X(yb.shape[0], 2)
    if kind == "moments":
        return fastgen.merge_moments(fastgen.class_moments(Xa, ya),
                                     fastgen.class_moments(Xb, yb))
    if kind == "gaussian":
        return fastgen.merge_counts(fastgen.nb_counts(Xa, ya, model="gaussian"),
                                    fastgen.nb_counts(Xb, yb, model="gaussian"))
    return fastgen.merge_counts(fastgen.nb_counts(Xa, ya), fastgen.nb_counts(Xb, yb))


KINDS = ["moments", "multinomial", "gaussian"]


@pytest.mark.parametrize("kind", KINDS)
def test_int64_and_uint64_labels_stay_exact(kind):
    ya = np.repeat(np.array([0, BIG + 1], dtype=np.int64), 5)
    yb = np.repeat(np.array([0, BIG], dtype=np.uint64), 5)
    before = ya.copy(), yb.copy()
    m = _merged(ya, yb, kind)
    assert m.classes.dtype == np.int64
    assert m.classes.tolist() == [0, BIG, BIG + 1]
    assert np.array_equal(ya, before[0]) and np.array_equal(yb, before[1])
    # small labels keep an integer dtype too
    m = _merged(ya % 2, (yb % 2).astype(np.uint64), kind)
    assert m.classes.dtype == np.int64 and m.classes.tolist() == [0, 1]
    # beyond int64: uint64, where no label is negative
    m = _merged(np.array([1, 2], dtype=np.int64), np.array([2**63 + 5, 2], dtype=np.uint64),
                kind)
    assert m.classes.dtype == np.uint64 and m.classes.tolist() == [1, 2, 2**63 + 5]


@pytest.mark.parametrize("kind", KINDS)
def test_labels_without_one_exact_dtype_are_refused(kind):
    with pytest.raises(ValueError, match=r"label 9007199254740993 has no exact float64"):
        _merged(np.array([0, BIG + 1], dtype=np.int64), np.array([0.0, 1.0]), kind)
    with pytest.raises(ValueError, match="no common integer dtype"):
        _merged(np.array([-1, 2], dtype=np.int64), np.array([2**63 + 5, 2], dtype=np.uint64),
                kind)
    # exact in float64: merged there
    m = _merged(np.array([0, 3], dtype=np.int64), np.array([0.0, 1.5]), kind)
    assert m.classes.tolist() == [0.0, 1.5, 3.0]
