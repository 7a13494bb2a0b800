"""Per-layer time: MXNet's own profiler, run in a child process, attributed to nodes.

The child (:mod:`mxexplorer.core.analysis.profile_trace`) times each node of MXNet's
executor graph; here the executor's nodes are tied to the document's by name (operator
nodes that share a name are renamed ``name#id`` for the run, so every name is one node),
and every operator node ends with a forward time (and a backward time when training) or
the reason it has none, in words, from what MXNet's executor graph shows:

- *merged*: MXNet's common-subexpression elimination ran one node for it and a twin
  with the same op, attributes and inputs (``MXNET_ELIMINATE_COMMON_EXPR``, on by default);
- *fused*: oneDNN fused it with its neighbours into one node (inference on the CPU);
- *removed*: oneDNN's identity pass dropped it for inference (Dropout, ``_copy``);
- *dropped*: oneDNN's fusion lost it for inference (an activation or eltwise op after a
  Convolution or FullyConnected that other nodes read too): a defect of MXNet 1.9.1,
  whose result is then wrong;
- *no backward*: MXNet's gradient graph has no node for it (no inputs, nothing it
  reads needing a gradient, an op whose gradient hands the output's gradient on
  unchanged, or one whose gradient is zero);
- *not run*: no output of the graph depends on it;
- *unexplained*: none of these (a defect to report, never expected).

The wall time of the same passes with the profiler off is measured too, so the overhead
of profiling is stated, not hidden.  Must not import Qt.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

from mxexplorer.core.analysis.profile_trace import PROFILE_ENV, ExecutorRun, run
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph import opinfo, symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.snapshot import GraphSnapshot
from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

__all__ = ["NOISE", "PASS_THROUGH", "PROFILE_ENV", "ZERO_GRADIENT", "ProfileResult", "Reason",
           "attribute", "profile", "run"]

NOISE = 0.05             # an overhead this small is not told apart from noise
#: ops whose gradient MXNet makes zero (``MakeZeroGradNodes`` and the like; checked
#: against MXNet in the tests)
ZERO_GRADIENT = frozenset({
    "BlockGrad", "zeros_like", "ones_like", "argmax", "argmin", "argsort", "_equal",
    "_not_equal", "_greater", "_greater_equal", "_lesser", "_lesser_equal",
    "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar",
    "_lesser_scalar", "_lesser_equal_scalar",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
    "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal"})
#: ops whose gradient is their output's gradient, handed on with no node
#: (``CloneGradient`` in MXNet; checked against MXNet in the tests)
PASS_THROUGH = frozenset({"elemwise_add", "add_n", "_contrib_round_ste",
                          "_contrib_sign_ste"})
#: what oneDNN's identity pass (``SgMKLDNNIdentityProperty``) removes for inference
_IDENTITY = {"Dropout": "a Dropout passes its input through at inference",
             "_copy": "the copy is not needed"}
#: short words for a reason's kind, as the tree's time column shows them
KINDS = ("merged", "fused", "removed", "dropped", "no backward", "not run", "unexplained")


@dataclass(frozen=True)
class Reason:
    """Why a node has no time of its own (``kind`` is one of :data:`KINDS`)."""

    kind: str
    text: str


@dataclass(frozen=True)
class ProfileResult:
    """Milliseconds per iteration: per node (forward, backward, recomputation of a
    mirrored node in backward), the reason for every node without a time, per op type,
    and the passes' wall time with and without the profiler."""

    ctx: str
    iterations: int
    forward_ms: dict[int, float]
    backward_ms: dict[int, float]
    by_type_ms: dict[str, float]            # every event name, forward and backward
    unplaced: tuple[str, ...]               # events matched to no executor node
    profiled_ms: float                      # the profiled passes' wall, profiler on
    plain_ms: float                         # the same, profiler off
    forward_plain_ms: float
    settings: tuple[tuple[str, str], ...] = field(default=())
    train: bool = True
    operators: tuple[int, ...] = ()         # every operator node of the document
    reasons: dict[int, Reason] = field(default_factory=dict)
    notes: dict[int, str] = field(default_factory=dict)     # what a time includes
    recompute_ms: dict[int, float] = field(default_factory=dict)
    other_ms: dict[str, float] = field(default_factory=dict)  # MXNet's own nodes, by op

    def node_ms(self, node: int) -> float | None:
        parts = [d[node] for d in (self.forward_ms, self.backward_ms, self.recompute_ms)
                 if node in d]
        return sum(parts) if parts else None

    @property
    def op_total_ms(self) -> float:
        return sum(self.by_type_ms.values())

    @property
    def overhead(self) -> float:
        """How much slower a profiled iteration is than a plain one."""
        return self.profiled_ms / self.plain_ms - 1 if self.plain_ms > 0 else 0.0

    def unexplained(self) -> list[int]:
        return [i for i, r in self.reasons.items() if r.kind == "unexplained"]

    def coverage(self) -> dict[str, Any]:
        """Operator nodes: how many have every time they can have, and how many are
        explained instead, by kind of reason."""
        explained = Counter(r.kind for r in self.reasons.values() if r.kind != "unexplained")
        return {"operators": len(self.operators),
                "timed": len(self.operators) - len(self.reasons),
                "explained": dict(sorted(explained.items())),
                "unexplained": len(self.unexplained())}

    def coverage_line(self) -> str:
        cover = self.coverage()
        parts = [f"{cover['timed']:,} timed"] + \
            [f"{n:,} {kind}" for kind, n in cover["explained"].items()] + \
            [f"{cover['unexplained']:,} unexplained"]
        return f"{cover['operators']:,} operator nodes: " + ", ".join(parts)

    def summary(self) -> str:
        cost = "within the run-to-run noise" if abs(self.overhead) < NOISE else \
            f"{self.overhead:+.0%}"
        what = "forward+backward" if self.train else "inference (forward)"
        return (f"{self.op_total_ms:.1f} ms in operators per {what} iteration "
                f"({self.iterations} profiled after warm-up, {self.ctx}); the same "
                f"iteration takes {self.plain_ms:.1f} ms without the profiler and "
                f"{self.profiled_ms:.1f} ms with it (profiling overhead {cost}); "
                "bulk execution off, NaiveEngine; " + self.coverage_line())

    def to_dict(self, names: Mapping[int, str], ops: Mapping[int, str] | None = None
                ) -> dict[str, Any]:
        def row(n: int) -> dict[str, Any]:
            out: dict[str, Any] = {"node": n, "name": names.get(n, str(n))}
            if ops is not None:
                out["op"] = ops.get(n, "")
            out.update(forward_ms=self.forward_ms.get(n), backward_ms=self.backward_ms.get(n))
            if n in self.recompute_ms:
                out["recompute_ms"] = self.recompute_ms[n]
            reason = self.reasons.get(n)
            out["reason"] = reason.text if reason else None
            if reason:
                out["reason_kind"] = reason.kind
            if n in self.notes:
                out["note"] = self.notes[n]
            return out

        nodes = self.operators or tuple(sorted(set(self.forward_ms) | set(self.backward_ms)))
        return {"ctx": self.ctx, "iterations": self.iterations, "train": self.train,
                "profiled_ms": self.profiled_ms, "plain_ms": self.plain_ms,
                "forward_plain_ms": self.forward_plain_ms, "overhead": self.overhead,
                "op_total_ms": self.op_total_ms, "coverage": self.coverage(),
                "unplaced": list(self.unplaced),
                "other_ms": dict(sorted(self.other_ms.items(), key=lambda kv: -kv[1])),
                "by_type_ms": dict(sorted(self.by_type_ms.items(), key=lambda kv: -kv[1])),
                "nodes": [row(n) for n in nodes]}


def run_names(doc: GraphDocument) -> dict[str, int]:
    """The name each operator node runs under: its own, or ``name#id`` when other
    operator nodes share it (MXNet's executor only knows nodes by name)."""
    ops = [i for i, n in enumerate(doc.nodes) if not n.is_variable]
    count = Counter(doc.nodes[i].name for i in ops)
    return {(doc.nodes[i].name if count[doc.nodes[i].name] == 1
             else f"{doc.nodes[i].name}#{i}"): i for i in ops}


def _quoted(doc: GraphDocument, nodes: list[int], most: int = 3) -> str:
    shown = ", ".join(f"'{doc.nodes[i].name}'" for i in nodes[:most])
    return shown + (f" and {len(nodes) - most} more" if len(nodes) > most else "")


def _merged(doc: GraphDocument, present: set[int]) -> dict[int, int]:
    """Nodes MXNet's common-subexpression elimination took out -> the node it kept: the
    first node, in MXNet's order, with the same op, attributes and inputs (inputs that
    were themselves merged count as the node kept for them)."""
    rep: dict[int, int] = {}
    merged: dict[int, int] = {}
    for _ in range(4):          # a merge can make later nodes equal: settle it
        kept: dict[Any, int] = {}
        changed = False
        for i in doc.order():
            node = doc.nodes[i]
            if node.is_variable:
                continue
            key = (opinfo.canonical_op(node.op), tuple(sorted(node.attrs.items())),
                   tuple((rep.get(s, s), k) for s, k, _ in node.inputs))
            if i in present:
                kept.setdefault(key, i)
            elif key in kept and merged.get(i) != kept[key]:
                merged[i] = rep[i] = kept[key]
                changed = True
        if not changed:
            break
    return merged


def attribute(doc: GraphDocument, executed: ExecutorRun,
              names: Mapping[str, int] | None = None) -> ProfileResult:
    """The profile of ``doc`` from what its executor ran; ``names``: the name each
    operator node ran under (:func:`run_names`)."""
    names = dict(names if names is not None else run_names(doc))
    forward: dict[int, float] = {}
    backward: dict[int, float] = {}
    recompute: dict[int, float] = {}
    other: dict[str, float] = {}
    by_type: dict[str, float] = {}
    silent: set[int] = set()                 # in the executor, but no event came
    tied: set[int] = set()                   # with backward nodes in the executor
    fused_time: dict[str, float] = {}

    def owner(name: str | None) -> int | None:
        while name is not None and name not in names and name.endswith("_mirror"):
            name = name[:-len("_mirror")]
        return None if name is None else names.get(name)

    for ex, ms, seen in zip(executed.nodes, executed.ms, executed.seen):
        by_type[ex.op] = by_type.get(ex.op, 0.0) + ms
        mine = owner(ex.tied_to) if not ex.forward else None
        if ex.forward and ex.name in names:
            forward[names[ex.name]] = forward.get(names[ex.name], 0.0) + ms
            if not seen:
                silent.add(names[ex.name])
        elif ex.forward and ex.name in executed.fused:
            fused_time[ex.name] = fused_time.get(ex.name, 0.0) + ms
        elif not ex.forward and ex.tied_to is None and ex.name.endswith("_mirror") \
                and (again := owner(ex.name)) is not None:
            recompute[again] = recompute.get(again, 0.0) + ms
        elif mine is not None:
            backward[mine] = backward.get(mine, 0.0) + ms
            tied.add(mine)
        elif seen:
            other[ex.op] = other.get(ex.op, 0.0) + ms
    for i in silent:
        forward.pop(i, None)

    place = {j: k for k, j in enumerate(doc.order())}
    reasons: dict[int, Reason] = {}
    notes: dict[int, str] = {}
    member_of: dict[int, str] = {}
    fused_in: dict[int, tuple[str, str]] = {}    # node -> the fused node it is in, its op
    for fname, (fop, members) in executed.fused.items():
        ids = sorted((names[m] for m in members if m in names), key=lambda j: place.get(j, -1))
        if not ids:
            continue
        fused_in.update((j, (fname, fop)) for j in ids)
        anchor, rest = ids[0], ids[1:]
        forward[anchor] = fused_time.get(fname, 0.0)
        notes[anchor] = (f"runs fused with {_quoted(doc, rest, len(rest))} as '{fname}' "
                         f"({fop}): the time is theirs together") if rest else \
            f"runs as oneDNN's '{fname}' ({fop})"
        for i in rest:
            member_of[i] = fname
            reasons[i] = Reason("fused", f"fused into '{fname}' ({fop}) with "
                                f"'{doc.nodes[anchor].name}': the fused node's time is on "
                                f"'{doc.nodes[anchor].name}'")
    present = set(forward) | set(member_of) | silent
    merged = _merged(doc, present)
    operators = tuple(names[n] for n in sorted(names, key=lambda n: names[n]))
    for i in operators:
        node = doc.nodes[i]
        if i in forward or i in member_of:
            continue
        if i not in place:
            reasons[i] = Reason("not run", "not computed: no output of the graph "
                                "depends on it")
        elif i in merged:
            kept = doc.nodes[merged[i]].name
            reasons[i] = Reason("merged", f"merged with '{kept}': same op, attributes and "
                                "inputs, so MXNet computes it once (common-subexpression "
                                f"elimination); its time is on '{kept}'")
        elif not executed.train and node.op in _IDENTITY:
            reasons[i] = Reason("removed", "removed for inference by oneDNN's identity "
                                f"pass: {_IDENTITY[node.op]}")
        elif not executed.train and (host := _fused_host(doc, i, merged, fused_in)) is not None:
            fname, fop = fused_in[host]
            src = doc.nodes[host].name
            reasons[i] = Reason("dropped", f"dropped for inference by oneDNN's fusion into "
                                f"'{fname}' ({fop}), a defect of MXNet 1.9.1: it took this "
                                f"{node.op} in with '{src}', which other nodes read too, but "
                                f"kept only the output of '{src}' and gave that to this "
                                "node's readers: they get a wrong input "
                                "(MXNET_SUBGRAPH_BACKEND=NONE avoids it)")
        elif i in silent:
            reasons[i] = Reason("unexplained", "MXNet ran it, but its profiler recorded "
                                "no event for it")
        else:
            reasons[i] = Reason("unexplained", "not in MXNet's executor graph")
    if executed.train:
        flow = _flow(doc, merged, tied, set(executed.aux))
        for i in operators:
            if i not in reasons and i not in tied:
                reasons[i] = _no_backward(doc, i, merged, flow, place)
    return ProfileResult(executed.ctx, executed.iterations, forward, backward, by_type,
                         executed.unplaced, executed.profiled_ms, executed.plain_ms,
                         executed.forward_plain_ms, tuple(sorted(PROFILE_ENV.items())),
                         executed.train, operators, reasons, notes, recompute, other)


def _fused_host(doc: GraphDocument, i: int, merged: Mapping[int, int],
                fused_in: Mapping[int, tuple[str, str]]) -> int | None:
    """The node, fused by oneDNN, whose fusion lost ``i``, which reads it.

    MXNet 1.9.1's Convolution and FullyConnected selectors (``SgMKLDNNConvSelector``,
    ``SgMKLDNNFCSelector``) take the op after a Convolution or FullyConnected in even
    when other nodes read that output too; ``CreateSubgraphNode`` then keeps only the
    subgraph's first output, and connects every outside reader to it."""
    readers = doc.consumers()
    for s, _, _ in doc.nodes[i].inputs:
        s = merged.get(s, s)
        if s in fused_in and (s in doc.head_nodes() or any(c != i for c, _ in readers[s])):
            return s
    return None


@dataclass(frozen=True)
class _Flow:
    """Where MXNet's gradients go: the nodes whose output's gradient matters (a trained
    argument lies upstream, not behind an op whose gradient is zero), the ones whose
    output's gradient is zero, and each node's readers (merged twins' readers read the
    node kept for them, as in MXNet's graph)."""

    needs: set[int]
    zero: set[int]
    readers: dict[int, list[int]]


def _flow(doc: GraphDocument, merged: Mapping[int, int], tied: set[int],
          aux: set[str]) -> _Flow:
    order = [j for j in doc.order() if j not in merged]
    needs: set[int] = set()
    readers: dict[int, list[int]] = {}
    for j in order:
        node = doc.nodes[j]
        sources = [merged.get(s, s) for s, _, _ in node.inputs]
        for s in dict.fromkeys(sources):
            readers.setdefault(s, []).append(j)
        if node.is_variable:
            if node.name not in aux:
                needs.add(j)
        elif opinfo.canonical_op(node.op) not in ZERO_GRADIENT and \
                any(s in needs for s in sources):
            needs.add(j)
    heads = {merged.get(h, h) for h in doc.head_nodes()}
    zero: set[int] = set()

    def passes_zero(c: int) -> bool:
        op = opinfo.canonical_op(doc.nodes[c].op)
        if op in PASS_THROUGH:
            return c in zero
        return op in ZERO_GRADIENT or c not in tied

    for j in reversed(order):
        users = readers.get(j, [])
        if not doc.nodes[j].is_variable and j not in heads and users and \
                all(passes_zero(c) for c in users):
            zero.add(j)
    return _Flow(needs, zero, readers)


def _no_backward(doc: GraphDocument, i: int, merged: Mapping[int, int], flow: _Flow,
                 place: Mapping[int, int]) -> Reason:
    """Why MXNet's gradient graph has no node for ``i`` (it has a forward time).

    MXNet's gradient pass (``src/nnvm/gradient.cc``) makes backward nodes for every
    operator with inputs, except where the op's gradient hands the output's gradient
    on unchanged (:data:`PASS_THROUGH`); most ops' gradients are zero nodes when their
    output's gradient is zero (``MakeNonlossGradNode``); ``AggregateGradient`` leaves
    zeros out of gradient sums, and the executor keeps only the nodes some argument's
    gradient needs.
    """
    node = doc.nodes[i]
    op = opinfo.canonical_op(node.op)
    if not node.inputs:
        return Reason("no backward", "no backward: it has no inputs to pass a gradient to")
    sources = sorted({merged.get(s, s) for s, _, _ in node.inputs},
                     key=lambda j: place.get(j, -1))
    if not any(s in flow.needs for s in sources):
        return Reason("no backward", "no backward: nothing it reads needs a gradient "
                      f"({_quoted(doc, sources)}: no trained argument lies upstream, "
                      "or only behind an op whose gradient is zero)")
    if op in PASS_THROUGH:
        return Reason("no backward", f"no backward node of its own: MXNet's gradient of "
                      f"{op} hands the output's gradient to its inputs unchanged")
    if op in ZERO_GRADIENT:
        return Reason("no backward", f"no backward: MXNet's gradient of {op} is zero, "
                      "and MXNet leaves zeros out of the gradient sums")
    if i in flow.zero:
        users = flow.readers.get(i, [])
        verb = "passes" if len(users) == 1 else "pass"
        return Reason("no backward", "no backward: no gradient comes back to it "
                      f"({_quoted(doc, users)} {verb} none back), so its own gradient is "
                      "zero, and MXNet leaves zeros out of the gradient sums")
    return Reason("unexplained", "MXNet's gradient graph has no node for it")


def profile(snap: GraphSnapshot, shapes: Mapping[str, Shape], ctx: str = "cpu",
            iterations: int = 3, progress: Progress = no_progress,
            token: CancelToken | None = None, *, train: bool = True) -> ProfileResult:
    """Profile the snapshot's graph as it is (its tags too), in a child: training
    passes, or inference (``train=False``) as a deployment binds it."""
    doc = GraphDocument.from_snapshot(snap)
    names = run_names(doc)
    data = json.loads(snap.json)
    for name, i in names.items():
        data["nodes"][i]["name"] = name
    executed: ExecutorRun = isolated.call(run, symbol_io.dumps(data), dict(shapes), ctx,
                                          iterations=iterations, train=train,
                                          progress=progress, token=token, what="profiling")
    return attribute(doc, executed, names)
