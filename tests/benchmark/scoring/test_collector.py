"""benchmark.scoring.collector: the cyclic collector paused around bulk loads, then restored."""

import gc
import threading

import pytest

from benchmark.scoring.collector import collector_paused

pytestmark = pytest.mark.unit


def nested_load_that_fails():
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block is still loading
        raise RuntimeError


def test_paused_inside_and_running_again_after_even_on_an_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        nested_load_that_fails()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_off_while_any_thread_is_inside():
    entered, leave = threading.Event(), threading.Event()

    def load():
        with collector_paused():
            entered.set()
            leave.wait(10)

    other = threading.Thread(target=load)
    other.start()
    entered.wait(10)
    with collector_paused():
        pass
    assert not gc.isenabled()  # the other thread's block has not ended
    leave.set()
    other.join(10)
    assert gc.isenabled()
