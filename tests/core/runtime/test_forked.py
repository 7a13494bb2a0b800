"""Work run beside the caller in a forked copy of the process (the planner's "best"
runs its fast half there): results, streamed values, errors, crashes and cancel."""
from __future__ import annotations

import os
import signal
import time

import pytest

from mxexplorer.core.runtime import forked
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken

pytestmark = pytest.mark.skipif(not forked.available(),
                                reason="forking beside needs Linux and two cores")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_copy_returns_its_result_and_streams_values_in_order() -> None:
    seen: list[int] = []

    def work(send) -> dict[str, object]:
        for k in range(50):
            send(k)
        return {"pid": os.getpid(), "big": list(range(200_000))}

    job = forked.Beside(work)
    pid = job.pid
    result = job.result(CancelToken(), seen.append)
    assert seen == list(range(50))
    assert result["pid"] == pid != os.getpid()       # it ran in the copy
    assert result["big"] == list(range(200_000))     # larger than a pipe's buffer
    assert job.pid == 0 and _gone(pid)               # reaped


def test_values_can_be_taken_without_waiting() -> None:
    def work(send) -> str:
        send("first")
        time.sleep(0.5)
        send("second")
        return "done"

    job = forked.Beside(work)
    deadline = time.monotonic() + 5
    got: list[str] = []
    while not got and time.monotonic() < deadline:
        got += job.messages()
    assert got == ["first"]                          # not blocked by the sleep
    rest: list[str] = []
    assert job.result(CancelToken(), rest.append) == "done"
    assert rest == ["second"]


def test_errors_in_the_copy_come_back_as_one_line() -> None:
    def user_error(send) -> None:
        raise UserError("the graph has no cut vertex to use as a stage")

    def bug(send) -> None:
        raise KeyError("stage")

    with pytest.raises(UserError, match="^the graph has no cut vertex"):
        forked.Beside(user_error).result(CancelToken(), print)
    with pytest.raises(UserError, match="failed: KeyError: 'stage'"):
        forked.Beside(bug).result(CancelToken(), print)


def test_a_copy_that_dies_is_an_error_that_says_how() -> None:
    def crash(send) -> None:
        send("about to die")
        os.kill(os.getpid(), signal.SIGKILL)

    seen: list[str] = []
    with pytest.raises(UserError, match="stopped without an answer.*SIGKILL"):
        forked.Beside(crash).result(CancelToken(), seen.append)
    assert seen == ["about to die"]


def test_cancel_kills_the_copy_and_stop_is_idempotent() -> None:
    def forever(send) -> None:
        while True:
            time.sleep(0.05)

    job = forked.Beside(forever)
    pid = job.pid
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        job.result(token, print)
    assert _gone(pid)
    job.stop()                                       # again: nothing
    other = forked.Beside(forever)
    pid = other.pid
    other.stop()                                     # the caller failed: stop it
    assert _gone(pid)


def test_the_copy_never_runs_the_callers_exit_handlers(tmp_path) -> None:
    """``os._exit`` in the copy: pytest's own teardown (or an atexit handler of the
    caller) must not run twice, once per process."""
    marker = tmp_path / "ran"
    import atexit

    def handler() -> None:          # registered in this process; must not run in the copy
        marker.write_text("x")

    atexit.register(handler)
    try:
        assert forked.Beside(lambda send: 42).result(CancelToken(), print) == 42
        assert not marker.exists()
    finally:
        atexit.unregister(handler)
