"""Work that can crash MXNet runs in a child process: results, progress and callbacks
come back; a real native crash (a graph MXNet segfaults on) is one error line and this
process goes on; cancel kills the child at once."""
from __future__ import annotations

import json
import time

import pytest

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import benchmark, memplan
from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken
from tests.conftest import EXAMPLES

MLP = {"data": (8, 784)}


def _segfaulting_json() -> str:
    """A graph MXNet loads but segfaults on in simple_bind: a node input naming an
    output index its producer lacks (the loader of this program refuses it)."""
    import mxnet as mx

    net = mx.sym.relu(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4))
    graph = json.loads(net.tojson())
    graph["nodes"][-1]["inputs"][0][1] = 2_000_000_000   # far out: a sure segfault
    return json.dumps(graph)


def test_a_plan_runs_in_a_child_with_its_probes_and_progress() -> None:
    snap = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json")).snapshot()
    probes, steps = [], []
    result = isolated.call(memplan.plan, snap, {"data": (2, 3, 64, 64)}, "cpu", "auto",
                           what="planning",
                           mode="original", progress=lambda *a: steps.append(a),
                           callbacks={"on_probe": probes.append})
    assert isinstance(result, memplan.PlanResult)
    assert result.baseline_mb > 0
    assert [p.cost_mb for p in probes] == [p.cost_mb for p in result.probes]
    assert steps and steps[-1][2] == "done"


def test_a_user_error_in_the_child_is_raised_as_such() -> None:
    snap = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json")).snapshot()
    with pytest.raises(memplan.NoStagesError):
        isolated.call(memplan.plan, snap, MLP, "cpu", "file", what="planning")


def test_a_native_crash_is_one_line_and_this_process_goes_on() -> None:
    bad = _segfaulting_json()
    with pytest.raises(isolated.NativeCrash) as info:
        isolated.call(benchmark.run, bad, {"data": (1, 4)}, "cpu", what="the benchmark")
    text = str(info.value)
    assert "MXNet crashed" in text and "Segmentation fault" in text
    assert "\n" not in text
    # and this process still binds graphs
    good = (EXAMPLES / "mlp-symbol.json").read_text()
    assert memplan.CostOracle(MLP)(good) >= 0                  # bound, reported


def _forever(progress=None, token=None) -> None:
    """Says it started, then works for good (a cancel must kill it)."""
    progress(0, 1, "started")
    while True:
        time.sleep(1)


def test_cancel_kills_the_child_whatever_it_is_doing() -> None:
    """State, not time: the child never ends on its own, so a call that returns at all
    was cut by the cancel, and no child is left (a busy machine only delays it)."""
    token = CancelToken()
    seen: list[str] = []

    def progress(done: int, total: int, message: str) -> None:
        seen.append(message)
        token.cancel()

    with pytest.raises(Cancelled):
        isolated.call(_forever, what="the endless job", progress=progress, token=token)
    assert seen == ["started"] and not isolated.live_children()
    # a search cancelled at its first probe reports no second one
    snap = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json")).snapshot()
    probes: list[object] = []
    token = CancelToken()

    def on_probe(probe) -> None:
        probes.append(probe)
        token.cancel()

    with pytest.raises(Cancelled):
        isolated.call(memplan.plan, snap, {"data": (4, 3, 224, 224)}, "cpu", "auto",
                      what="planning", token=token, callbacks={"on_probe": on_probe})
    assert len(probes) == 1 and not isolated.live_children()


def _divide(a: int, b: int, progress=None, token=None) -> float:
    return a / b


def test_any_other_failure_in_the_child_is_one_user_error_line() -> None:
    assert isolated.call(_divide, 6, 3, what="dividing") == 2.0
    with pytest.raises(UserError) as info:
        isolated.call(_divide, 1, 0, what="dividing")
    assert str(info.value) == "dividing failed: ZeroDivisionError: division by zero"
    assert not isinstance(info.value, isolated.NativeCrash)


def test_the_child_dies_with_a_killed_parent(tmp_path) -> None:
    """A CLI export killed with SIGKILL (or `kill`) left its child computing for good: a
    Mask R-CNN check went on at 4 GB after the corpus script timed it out."""
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    pid_file = tmp_path / "child.pid"
    script = ("import os, sys, time\n"
              "from mxexplorer.core.runtime import isolated\n"
              "from tests.core.runtime.test_isolated import _write_pid_forever\n"
              f"isolated.call(_write_pid_forever, {str(pid_file)!r}, what='the job')\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=REPO,
                              env=dict(os.environ, PYTHONPATH=str(REPO)))
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    child = int(pid_file.read_text())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the child outlived its killed parent")


def _write_pid_forever(path: str, progress=None, token=None) -> None:
    import os

    with open(path + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.replace(path + ".tmp", path)
    while True:
        time.sleep(1)
