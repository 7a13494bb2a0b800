"""What MXNet's executor ran, and how long each of its nodes took: the child-process side
of :mod:`mxexplorer.core.analysis.profile`.  Must not import Qt.

MXNet 1.9.1 names a profiler event by the op type alone (``graph_executor.cc`` gives the
engine operator ``op()->name``), and the executor does not run the graph as written: it
merges identical nodes (common-subexpression elimination), adds the gradient nodes
(``<node>_backward``, tied to their forward node by a control dependency), sums
gradients in place (``_grad_add`` nodes with no run of their own), and for inference on
the CPU lets oneDNN fuse nodes (``sg_mkldnn_conv_bn_act_0``).  So the events are not
counted per op type: the child lists the executor's own nodes in the order it runs them
(its ``debug_str``), and with bulk execution off and the synchronous ``NaiveEngine``
every executor node is one event, in that order.  Matching the two sequences gives each
executor node its time; the executor nodes' names tie them to the graph's nodes.

Profiling is symbolic only: with imperative profiling on, every executor node gave two
nested events of one name (the engine's push and its inner run), which a reader had to
pair up by time -- and two back-to-back runs of one op within a microsecond looked nested.
"""
from __future__ import annotations

import json
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Mapping

from mxexplorer.core.analysis.binding import grad_reqs
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import context, fill_for_timing, import_mxnet, mxnet_errors
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

PROFILE_ENV = {"MXNET_EXEC_BULK_EXEC_TRAIN": "0", "MXNET_EXEC_BULK_EXEC_INFERENCE": "0",
               "MXNET_ENGINE_TYPE": "NaiveEngine"}
#: how far the matching looks ahead for a node without a run or a run of no node
WINDOW = 64


@dataclass(frozen=True)
class ExecNode:
    """An operator node of MXNet's executor graph."""

    name: str
    op: str
    forward: bool              # runs in the forward pass (else in backward)
    tied_to: str | None        # the node named by its first control dependency


@dataclass(frozen=True)
class ExecutorRun:
    """The executor's operator nodes in run order with their ms per iteration, and what
    else the child learnt of MXNet's graph."""

    nodes: tuple[ExecNode, ...]
    ms: tuple[float, ...]
    seen: tuple[int, ...]                          # events matched to each node
    fused: dict[str, tuple[str, tuple[str, ...]]]  # fused node -> (op, member names)
    aux: tuple[str, ...]                           # auxiliary states (get no gradient)
    unplaced: tuple[str, ...]                      # events matched to no node
    train: bool
    ctx: str
    iterations: int
    profiled_ms: float
    plain_ms: float
    forward_plain_ms: float


def operator_runs(trace: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(op name, ms) of each operator run of a chrome trace, in the order they started
    (ties in the order MXNet wrote them, which is the order they ended)."""
    open_at: dict[tuple[Any, Any, str], list[float]] = {}
    runs: list[tuple[float, int, str, float]] = []
    for k, ev in enumerate(trace.get("traceEvents", [])):
        if ev.get("cat") != "operator" or ev.get("ph") not in ("B", "E"):
            continue
        key = (ev.get("pid"), ev.get("tid"), str(ev.get("name", "")))
        if ev["ph"] == "B":
            open_at.setdefault(key, []).append(float(ev["ts"]))
        elif open_at.get(key):
            start = open_at[key].pop()
            runs.append((start, k, key[2], (float(ev["ts"]) - start) / 1000.0))
    runs.sort()
    return [(name, ms) for _, _, name, ms in runs]


def align(runs: list[tuple[str, float]], ops: list[str], repeats: int
          ) -> tuple[list[float], list[int], list[str]]:
    """Match ``runs`` to ``repeats`` rounds of executor nodes of op types ``ops``.

    A node may have no run (MXNet skips a ``_grad_add`` it turned into an in-place sum)
    and a run may belong to no node; at a mismatch the shorter skip of the two wins.
    Returns the total ms and the number of runs of each node, and the unmatched runs.
    """
    total = [0.0] * len(ops)
    seen = [0] * len(ops)
    unplaced: list[str] = []
    n = len(ops) * repeats
    i = k = 0
    while i < n and k < len(runs):
        j = i % len(ops)
        name, ms = runs[k]
        if name == ops[j]:
            total[j] += ms
            seen[j] += 1
            i += 1
            k += 1
            continue
        skip_nodes = next((d for d in range(1, WINDOW)
                           if i + d < n and ops[(i + d) % len(ops)] == name), None)
        skip_runs = next((d for d in range(1, WINDOW)
                          if k + d < len(runs) and runs[k + d][0] == ops[j]), None)
        if skip_nodes is not None and (skip_runs is None or skip_nodes <= skip_runs):
            i += skip_nodes
        else:
            unplaced.append(name)
            k += 1
    unplaced += [name for name, _ in runs[k:]]
    return total, seen, unplaced


_OP = re.compile(r"Op:(.*?), Name=(.*)")
_OUTPUT = re.compile(r"\toutput\[\d+\]=(.*)\(\d+\)")
_CDEP = re.compile(r"\tcdep\[\d+\]=(.*)")


def executor_nodes(text: str, forward_outputs: int) -> list[ExecNode]:
    """The operator nodes of an executor's ``debug_str()`` in its order (the order it
    runs them); those up to the last producer of the first ``forward_outputs`` outputs
    run in the forward pass (``GraphExecutor::num_forward_nodes_``)."""
    heads: list[str] = []
    names: list[str] = []                       # variables too: they set the positions
    ops: list[tuple[int, str, str, list[str]]] = []
    section = ""
    for line in text.splitlines():
        if not line.startswith("\t"):
            section = line
            if line.startswith("Variable:"):
                names.append(line[len("Variable:"):])
            elif (m := _OP.fullmatch(line)) is not None:
                ops.append((len(names), m.group(1), m.group(2), []))
                names.append(m.group(2))
        elif section == "Symbol Outputs:" and (m := _OUTPUT.fullmatch(line)) is not None:
            heads.append(m.group(1))
        elif section == "Control deps:" and ops and (m := _CDEP.fullmatch(line)) is not None:
            ops[-1][3].append(m.group(1))
    first: dict[str, int] = {}
    for pos, name in enumerate(names):
        first.setdefault(name, pos)
    forward_end = max((first.get(h, -1) for h in heads[:forward_outputs]), default=-1) + 1
    return [ExecNode(name, op, pos < forward_end, deps[0] if deps else None)
            for pos, op, name, deps in ops]


def fused_nodes(optimized: Mapping[str, Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Subgraph nodes of an executor's optimized symbol (JSON): name -> (op, the names
    of the operator nodes inside)."""
    found = {}
    for node in optimized.get("nodes", []):
        members = tuple(m["name"] for sub in node.get("subgraphs", []) or []
                        for m in sub.get("nodes", []) if m.get("op") != "null")
        if members:
            found[node["name"]] = (node["op"], members)
    return found


def run(graph_json: str, shapes: Mapping[str, Shape], ctx: str = "cpu", warmup: int = 2,
        iterations: int = 3, progress: Progress = no_progress,
        token: CancelToken | None = None, *, train: bool = True) -> ExecutorRun:
    """Profile ``iterations`` passes of ``graph_json`` after ``warmup``: training
    (forward and backward, every argument getting a gradient) or inference (forward
    only, bound without gradients as a deployment binds it: oneDNN fuses there).  Run it
    in a child (:func:`mxexplorer.core.runtime.isolated.call`): it sets MXNet's
    environment before importing MXNet, which only a fresh process allows."""
    token = token or CancelToken()
    if iterations < 1 or warmup < 0:
        raise UserError(f"profile at least one iteration (asked {iterations}, warm-up "
                        f"{warmup})")
    for key, value in PROFILE_ENV.items():
        os.environ[key] = value
    mx = import_mxnet()
    dev = context(ctx, False)
    with mxnet_errors("MXNet cannot bind the graph for profiling"):
        sym = mx.sym.load_json(graph_json)
        exe = sym.simple_bind(dev, grad_req=grad_reqs(graph_json, shapes) if train else "null",
                              **{k: tuple(v) for k, v in shapes.items()})
    heads = fill_for_timing(mx, exe, shapes, dev)
    total = warmup + 3 * iterations

    def step(backward: bool, k: int) -> float:
        token.check()
        progress(k, total, "profiling: warm-up" if k < warmup else "profiling")
        start = time.perf_counter()
        exe.forward(is_train=backward)
        if backward:
            exe.backward(heads)
        mx.nd.waitall()
        return (time.perf_counter() - start) * 1000.0

    with mxnet_errors("profiling failed"):
        for k in range(warmup):
            step(train, k)
        plain = [step(train, warmup + k) for k in range(iterations)]
        forward_plain = [step(False, warmup + iterations + k) for k in range(iterations)]
        with tempfile.TemporaryDirectory(prefix="mxexplorer-profile-") as folder:
            trace_path = os.path.join(folder, "trace.json")
            mx.profiler.set_config(profile_symbolic=True, profile_imperative=False,
                                   profile_memory=False, profile_api=False,
                                   aggregate_stats=False, filename=trace_path)
            mx.profiler.set_state("run")
            profiled = [step(train, warmup + 2 * iterations + k) for k in range(iterations)]
            mx.profiler.set_state("stop")
            mx.profiler.dump()
            with open(trace_path, encoding="utf-8") as fh:
                trace = json.load(fh)
        nodes = executor_nodes(exe.debug_str(), len(exe.outputs))
        aux = tuple(sym.list_auxiliary_states())
    try:
        fused = fused_nodes(json.loads(exe.get_optimized_symbol().tojson()))
    except Exception:  # noqa: BLE001 - without it, fused nodes are said unexplained
        fused = {}
    ms, seen, unplaced = align(operator_runs(trace), [n.op for n in nodes], iterations)
    return ExecutorRun(tuple(nodes), tuple(m / iterations for m in ms), tuple(seen), fused,
                       aux, tuple(unplaced), train, ctx, iterations,
                       statistics.median(profiled), statistics.median(plain),
                       statistics.median(forward_plain))
