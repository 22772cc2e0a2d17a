"""Steps run at once in two threads: the same results, and the same exception, as in one."""

from __future__ import annotations

import threading
import time

import pytest

from explicit_audit._core.overlap import both, each


@pytest.mark.parametrize("threads", [1, 2])
def test_each_gives_the_results_in_the_order_of_the_items(threads):
    seen = set()

    def work(item: int) -> int:
        time.sleep(0.002 * (5 - item))  # the first items finish last
        seen.add(threading.get_ident())
        return item * item

    assert each(work, range(5), threads) == [0, 1, 4, 9, 16]
    assert len(seen) == threads


@pytest.mark.parametrize("threads", [1, 2])
def test_each_raises_the_first_failing_items_exception(threads):
    def work(item: int) -> int:
        if item in (1, 3):
            time.sleep(0.01 if item == 1 else 0)  # the later item fails first
            raise ValueError(item)
        return item

    with pytest.raises(ValueError, match="1"):
        each(work, [0, 1, 2, 3], threads)


def test_both_runs_the_second_step_in_a_second_thread_and_raises_the_first_steps_error():
    where = []

    def second() -> str:
        where.append(threading.get_ident())
        return "second"

    assert both(lambda: "first", second, 2) == ("first", "second")
    assert where[0] != threading.get_ident()
    with pytest.raises(KeyError):
        both(lambda: {}["first"], lambda: [][1], 2)
