"""``fastgen compile``'s task order: longest first, and never two tasks of one
kernel-sharing group at once (so that their shared kernels compile once): a worker takes
another task or waits, and every task runs."""

import pytest

from fastgen._compile import _GROUP, _TASKS, DTYPES, FAMILIES, _next_task


def _simulate(jobs):
    """Start and finish tasks as ``compile`` does, the oldest running task finishing
    first; returns the tasks in the order they started and the pairs that ran at once."""
    pending = list(_TASKS)
    running, started, overlaps = [], [], []
    while pending or running:
        while pending and len(running) < jobs:
            task = _next_task(pending, running)
            if task is None:
                assert running  # a worker waits only while another task runs
                break
            overlaps += [(r, task) for r in running]
            running.append(task)
            started.append(task)
        running.pop(0)
    return started, overlaps


def test_every_family_is_grouped_and_ordered():
    assert set(_GROUP) == set(FAMILIES) == {f for f, _ in _TASKS}
    assert sorted(_TASKS) == sorted((f, d) for f in FAMILIES for d in DTYPES)


@pytest.mark.parametrize("jobs", [1, 2, 3, 4, 16])
def test_every_task_starts_once_longest_first(jobs):
    started, _ = _simulate(jobs)
    assert sorted(started) == sorted((f, d) for f in FAMILIES for d in DTYPES)
    assert started[0] == ("logistic", "float64")


@pytest.mark.parametrize("jobs", [2, 3, 4, 16])
def test_no_two_tasks_of_a_group_ever_run_together(jobs):
    _, overlaps = _simulate(jobs)
    assert [(a, b) for a, b in overlaps if _GROUP[a[0]] == _GROUP[b[0]]] == []


def test_a_worker_waits_when_only_a_busy_group_is_left():
    pending = [("firth", "float64"), ("firth", "float32")]
    assert _next_task(pending, [("logistic", "float32")]) is None
    assert pending == [("firth", "float64"), ("firth", "float32")]
    assert _next_task(pending, []) == ("firth", "float64")
    assert pending == [("firth", "float32")]


def test_a_worker_takes_another_group_before_waiting():
    pending = [("multinomial_nb", "float32"), ("gaussian_nb", "float64")]
    assert _next_task(pending, [("multinomial_nb", "float64")]) == ("gaussian_nb", "float64")
