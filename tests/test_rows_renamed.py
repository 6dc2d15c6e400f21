"""Errors on a subset of X's rows name X's rows (row blocks of Dask arrays, the
incomplete or complete rows of marginal scoring)."""

import numpy as np
import pytest

from fastgen._validation.rows import rows_renamed


class _TwoArgs(ValueError):
    def __init__(self, a, b):
        super().__init__(f"{a} {b}")


@pytest.mark.parametrize("rows, expected", [
    (100, "X contains NaN at row 103, column 1; X[104, 2] too"),
    (np.array([5, 9, 11, 40, 41]), "X contains NaN at row 40, column 1; X[41, 2] too"),
])
def test_rows_are_named_in_x(rows, expected):
    with pytest.raises(ValueError) as info:
        with rows_renamed(rows):
            raise ValueError("X contains NaN at row 3, column 1; X[4, 2] too")
    assert str(info.value) == expected


@pytest.mark.parametrize("rows", [0, slice(None), np.arange(3)])
def test_unchanged_where_nothing_to_rename(rows):
    err = ValueError("X contains NaN at row 2, column 0")
    with pytest.raises(ValueError) as info:
        with rows_renamed(rows):
            raise err
    assert info.value is err


def test_message_without_a_row_is_raised_as_is():
    err = ValueError("y has one class")
    with pytest.raises(ValueError) as info:
        with rows_renamed(7):
            raise err
    assert info.value is err


def test_exception_type_with_its_own_arguments_becomes_value_error():
    with pytest.raises(ValueError, match="row 12") as info:
        with rows_renamed(10):
            raise _TwoArgs("bad value at", "row 2")
    assert type(info.value) is ValueError


def test_other_exceptions_pass_through():
    with pytest.raises(KeyError):
        with rows_renamed(10):
            raise KeyError("row 2")
