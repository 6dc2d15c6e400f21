"""Shared fixtures: small seeded data sets."""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from reference import make_blobs  # noqa: E402


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def blobs3():
    """n=150, d=4, K=3 well-separated correlated classes (float64, int labels)."""
    return make_blobs(150, 4, 3, seed=1)


@pytest.fixture(scope="session")
def blobs2():
    """n=80, d=3, K=2 (binary)."""
    return make_blobs(80, 3, 2, seed=2)
