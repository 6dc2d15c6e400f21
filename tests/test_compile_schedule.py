"""``fastgen compile``'s task order: longest first, and never two tasks of one
kernel-sharing group at once while another task can run (so that their shared kernels
compile once); a worker never waits."""

from fastgen._compile import _GROUP, _ORDER, DTYPES, FAMILIES, _next_task


def _simulate(jobs):
    """Start and finish tasks as ``compile`` does, the oldest running task finishing
    first; returns the pairs of tasks that ran at once."""
    pending = [(f, d) for f in _ORDER for d in DTYPES]
    running, started, overlaps = [], [], []
    while pending or running:
        while pending and len(running) < jobs:
            task = _next_task(pending, running)
            overlaps += [(r, task) for r in running]
            running.append(task)
            started.append(task)
        running.pop(0)
    return started, overlaps


def test_every_family_is_grouped_and_ordered():
    assert set(_GROUP) == set(FAMILIES) == set(_ORDER)


def test_every_task_starts_once_longest_first():
    started, _ = _simulate(2)
    assert sorted(started) == sorted((f, d) for f in _ORDER for d in DTYPES)
    assert started[0] == ("logistic", "float64")


def test_no_two_tasks_of_a_group_run_together_while_others_wait():
    _, overlaps = _simulate(2)
    same = [(a, b) for a, b in overlaps if _GROUP[a[0]] == _GROUP[b[0]]]
    # the logistic float32 task waits for float64 instead of running beside it
    assert (("logistic", "float64"), ("logistic", "float32")) not in same
    assert (("logistic", "float64"), ("firth", "float64")) not in same


def test_a_worker_never_waits_when_only_one_group_is_left():
    pending = [("firth", "float64"), ("firth", "float32")]
    assert _next_task(pending, [("logistic", "float32")]) == ("firth", "float64")
    assert pending == [("firth", "float32")]
