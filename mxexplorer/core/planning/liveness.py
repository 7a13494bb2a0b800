"""Memory over a training step, from the graph and its shapes alone (no MXNet).

A liveness model of the forward and backward passes as MXNet runs them: operators in
order, each output allocated when it is computed and freed after its last use; an
output is kept from forward to backward when the backward of an operator needs it
(a convolution needs its input, an activation its output, an addition nothing...);
a node tagged ``__force_mirroring__ = True`` keeps nothing and is computed again
(a ``_mirror`` copy) just before the first backward step that needs it.  Gradients of
outputs are allocated as they are produced and summed where a tensor has several
consumers.  Arguments, their gradients and auxiliary states are outside, as in MXNet's
``Total N MB allocated``.

What it leaves out: MXNet's static allocator shares buffers between tensors of close
sizes (some waste, never less than the live peak), runs some operators in place (less),
and keeps each storage block at the largest size it served; :mod:`benchmarks`
``liveness.py`` prints the model's peak against MXNet's figure.  No Qt, no MXNet.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.analysis.stats import float32_bytes
from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument

MB = 1 << 20
EntryKey = tuple[int, int]

#: what an operator's backward reads of its forward pass: ("in", slot) / ("out", k);
#: operators not listed read every input and output
_BACKWARD_NEEDS: dict[str, tuple[tuple[str, int], ...]] = {
    "Convolution": (("in", 0),), "Deconvolution": (("in", 0),),
    "FullyConnected": (("in", 0),), "Embedding": (("in", 0),),
    "BatchNorm": (("in", 0), ("out", 1), ("out", 2)),
    "Activation": (("out", 0),), "LeakyReLU": (("in", 0), ("out", 0)),
    "Pooling": (("in", 0), ("out", 0), ("out", 1)), "Dropout": (("out", 1),),
    "SoftmaxOutput": (("out", 0),), "softmax": (("out", 0),),
    "log_softmax": (("out", 0),), "SoftmaxActivation": (("out", 0),),
    "LRN": (("in", 0), ("out", 0), ("out", 1)), "clip": (("in", 0),),
    "elemwise_mul": (("in", 0), ("in", 1)),
    "broadcast_mul": (("in", 0), ("in", 1)), "_mul": (("in", 0), ("in", 1)),
}
for _op in ("elemwise_add", "_Plus", "_plus", "_add", "broadcast_add", "ElementWiseSum",
            "add_n", "elemwise_sub", "_Minus", "_minus", "_sub", "broadcast_sub", "Flatten",
            "flatten", "Reshape", "reshape", "transpose", "expand_dims",
            "squeeze", "SliceChannel", "split", "slice", "slice_axis", "Crop", "identity",
            "_copy", "Cast", "BlockGrad", "stop_gradient", "_mul_scalar", "_plus_scalar",
            "_minus_scalar", "_div_scalar", "mean", "sum", "MakeLoss", "make_loss"):
    _BACKWARD_NEEDS[_op] = ()


#: operators whose inputs' gradient is the output's, with no backward node
#: (MXNet's CloneGradient; read in MXNet 1.9's bind reports)
_CLONE_GRAD = {"elemwise_add", "_Plus", "_plus", "_add", "ElementWiseSum", "add_n"}
#: operators whose backward reads every input (MXNet 1.9's oneDNN Concat does)
_READS_INPUTS = {"Concat", "concat"}
#: operators whose output may take an input's buffer (MXNet's FInplaceOption):
#: (input slot, output)
_FWD_INPLACE: dict[str, tuple[tuple[int, int], ...]] = {
    op: ((0, 0),) for op in ("Activation", "Flatten", "flatten", "Reshape", "reshape",
                             "identity", "_copy", "BlockGrad", "stop_gradient", "Dropout",
                             "SoftmaxOutput", "expand_dims", "squeeze", "_mul_scalar",
                             "_plus_scalar", "_minus_scalar", "_div_scalar", "MakeLoss",
                             "make_loss", "Cast", "clip")}
for _op in ("elemwise_add", "_Plus", "_plus", "_add", "ElementWiseSum", "add_n",
            "elemwise_sub", "_Minus", "_minus", "_sub"):
    _FWD_INPLACE[_op] = ((0, 0), (1, 0))
#: operators whose backward may write an input's gradient over the output's gradient
_BWD_INPLACE = {"Activation", "Flatten", "flatten", "Reshape", "reshape", "identity",
                "_copy", "expand_dims", "squeeze", "elemwise_add", "_Plus", "_plus",
                "_add", "ElementWiseSum", "add_n", "_mul_scalar", "_plus_scalar",
                "_minus_scalar", "_div_scalar", "Dropout", "LeakyReLU", "clip"}


def _hidden_output(op: str, attrs: Mapping[str, Any]) -> bool:
    """An output the size of the first that MXNet 1.9 (oneDNN) allocates and the
    backward reads: Dropout's mask, max pooling's and LRN's workspace (measured on
    one-operator graphs against MXNet's report)."""
    if op in ("Dropout", "LRN"):
        return True
    return op == "Pooling" and str(attrs.get("pool_type", "max")) == "max" \
        and str(attrs.get("global_pool", "False")).lower() not in ("true", "1")


_NONE: set[int] = set()     # never added to: the pairs loop below does not run


@dataclass(frozen=True)
class Step:
    phase: str                 # "forward", "recompute" or "backward"
    node: int
    live_bytes: int            # after the step's outputs are made, before it frees


@dataclass
class Timeline:
    steps: list[Step] = field(default_factory=list)
    peak_bytes: int = 0
    peak_step: int = -1
    #: the tensors alive at the peak: (node, output, phase of the copy, bytes)
    peak_tensors: list[tuple[int, int, str, int]] = field(default_factory=list)

    @property
    def peak_mb(self) -> float:
        return self.peak_bytes / MB


#: (phase, node, tensors made, tensors read, in-place pairs); tensors are numbers
Event = tuple[str, int, list[int], list[int], list[tuple[int, int]]]


def simulate(doc: GraphDocument, by_entry: Mapping[EntryKey, Shape],
             tags: Mapping[int, str] | None = None) -> Timeline:
    """The live bytes at every step of one training iteration with ``tags``."""
    return Model(doc, by_entry).simulate(tags or {})


def mxnet_total_mb(doc: GraphDocument, by_entry: Mapping[EntryKey, Shape],
                   tags: Mapping[int, str] | None = None) -> float:
    """What MXNet's ``Total N MB allocated`` should say for training with ``tags``
    (see :meth:`Model.total_mb`)."""
    return Model(doc, by_entry).total_mb(tags or {})


class Model:
    """One graph with its shapes; what does not depend on the tags is worked out once
    (the forward steps, what each backward reads), so a plan costs milliseconds."""

    def __init__(self, doc: GraphDocument, by_entry: Mapping[EntryKey, Shape]):
        nodes = doc.nodes
        self.order = order = [i for i in doc.order() if not nodes[i].is_variable]
        on = set(order)
        out_keys: dict[int, list[int]] = {i: [] for i in order}
        for (n, k) in by_entry:
            if n in out_keys:
                out_keys[n].append(k)
        for i in order:
            out_keys[i] = sorted(out_keys[i]) or [0]
        self.out_keys = out_keys
        self.size = size = {(i, k): float32_bytes(by_entry.get((i, k)))
                            for i in order for k in out_keys[i]}
        ops = {i: opinfo.canonical_op(nodes[i].op) for i in order}
        for i in order:      # outputs MXNet makes and shape inference does not show
            if len(out_keys[i]) == 1 and _hidden_output(ops[i], nodes[i].attrs):
                out_keys[i] = [0, 1]
                size[(i, 1)] = size[(i, 0)]
        self.dropout = {i for i in order if ops[i] == "Dropout"}
        self.clone_grad = {i for i in order if ops[i] in _CLONE_GRAD}
        self.fc = {i for i in order if ops[i] == "FullyConnected"}
        self.inputs = {i: [(src, idx) for src, idx, _ in nodes[i].inputs if src in on]
                       for i in order}
        self.needs: dict[int, list[EntryKey]] = {}
        for i in order:
            spec = _BACKWARD_NEEDS.get(ops[i])
            if ops[i] == "Activation" and str(nodes[i].attrs.get("act_type", "relu")) \
                    not in ("relu", "softsign"):
                spec = (("in", 0), ("out", 0))      # MXNet 1.9 with oneDNN or cuDNN
            elif ops[i] in _READS_INPUTS:
                spec = tuple(("in", s) for s in range(len(nodes[i].inputs)))
            elif spec is None:
                spec = tuple(("in", s) for s in range(len(nodes[i].inputs))) + \
                    tuple(("out", k) for k in out_keys[i])
            got = []
            for kind, k in spec:
                if kind == "in" and k < len(nodes[i].inputs):
                    src, idx, _ = nodes[i].inputs[k]
                    if src in on:
                        got.append((src, idx))
                elif kind == "out" and (i, k) in size:
                    got.append((i, k))
            self.needs[i] = got
        self.bwd_inplace = {i for i in order if ops[i] in _BWD_INPLACE}
        # every tensor a step can make, numbered once: (kind, node, output) and bytes
        self.info: list[tuple[str, int, int]] = []
        self.nbytes: list[int] = []
        ids: dict[tuple[str, int, int], int] = {}
        for kind in ("fwd", "mirror", "gsum"):
            for e, b in size.items():
                ids[(kind, e[0], e[1])] = len(self.info)
                self.info.append((kind, e[0], e[1]))
                self.nbytes.append(b)
        self.fid = {e: ids[("fwd",) + e] for e in size}
        self.mid = {e: ids[("mirror",) + e] for e in size}
        self.sid = {e: ids[("gsum",) + e] for e in size}
        self.gid: dict[int, list[int]] = {}     # the gradient each backward writes, per input
        for i in order:
            self.gid[i] = []
            for e in self.inputs[i]:
                self.gid[i].append(len(self.info))
                self.info.append(("grad", e[0], e[1]))
                self.nbytes.append(size[e])
        self.forward: list[Event] = []
        for i in order:
            reads = [self.fid[e] for e in self.inputs[i]]
            slots = [slot for slot, (src, _, _) in enumerate(nodes[i].inputs) if src in on]
            pairs = [(k, slots.index(slot)) for slot, k in _FWD_INPLACE.get(ops[i], ())
                     if slot in slots and k < len(out_keys[i])]
            self.forward.append(("forward", i, [self.fid[(i, k)] for k in out_keys[i]],
                                 reads, pairs))
        self.heads = [self.fid[(s, k)] for s, k, _ in doc.heads if s in on and (s, k) in size]

    def recomputed_by(self, tags: Mapping[int, str]) -> set[int]:
        """The operators ``tags`` has MXNet recompute (Dropout never is)."""
        return {i for i, v in tags.items() if v == "True" and i in self.inputs
                and i not in self.dropout}

    def events(self, tags: Mapping[int, str], mirrored: set[int] | None = None
               ) -> list[Event]:
        """The steps of one iteration in MXNet's order: (phase, node, tensors made,
        tensors read, in-place candidates as (made index, read index)); tensors are
        numbers, :attr:`info` and :attr:`nbytes` say what each is.  ``mirrored``: the
        recomputed operators when already known (``tags`` is then not read)."""
        out_keys, inputs, fid, mid = self.out_keys, self.inputs, self.fid, self.mid
        if mirrored is None:
            mirrored = self.recomputed_by(tags)
        events = list(self.forward)
        recomputed: set[int] = set()

        def tensor(e: EntryKey) -> int:
            return mid[e] if e[0] in mirrored else fid[e]

        def copy_of(e: EntryKey) -> int:
            """The tensor backward reads for ``e``: a recomputed copy, made first (its
            recomputed inputs before it, depth first, without recursion: a chain of
            thousands of recomputed operators is common)."""
            if e[0] in mirrored and e[0] not in recomputed:
                stack = [(e[0], False)]
                while stack:
                    p, ready = stack.pop()
                    if p in recomputed:
                        continue
                    if ready:
                        recomputed.add(p)
                        events.append(("recompute", p, [mid[(p, k)] for k in out_keys[p]],
                                       [tensor(x) for x in inputs[p]], []))
                        continue
                    stack.append((p, True))
                    stack.extend((x[0], False) for x in reversed(inputs[p])
                                 if x[0] in mirrored and x[0] not in recomputed)
            return tensor(e)

        contributions: dict[EntryKey, list[int]] = {}
        needs, gid, sid, clone_grad = self.needs, self.gid, self.sid, self.clone_grad
        fc, bwd_inplace = self.fc, self.bwd_inplace
        for i in reversed(self.order):
            reads: list[int] = []
            for k in out_keys[i]:                   # the gradient of each output first
                parts = contributions.pop((i, k), [])
                if len(parts) > 1:      # gradients from several consumers: summed first
                    events.append(("backward", i, [sid[(i, k)]], parts, [(0, 0)]))
                    reads.append(sid[(i, k)])
                else:
                    reads.extend(parts)
                ograds = len(reads)
            if i in clone_grad:
                # an addition's inputs take its output's gradient as it is: MXNet's
                # gradient pass makes no node for it, so nothing is recomputed either
                for e in inputs[i]:
                    contributions.setdefault(e, []).extend(reads[:1])
                continue
            if i not in mirrored:
                # a kept operator's backward reads the forward tensors of its inputs,
                # which stay alive until then, mirrored or not: MXNet's gradient pass
                # gives the backward of a node it does not mirror that node's own
                # inputs (read in MXNet 1.9's bind reports)
                reads += [fid[e] for e in needs[i]]
            else:
                for e in needs[i]:
                    if e[0] not in mirrored:
                        reads.append(fid[e])
                    elif e[0] in recomputed:
                        reads.append(mid[e])
                    else:
                        reads.append(copy_of(e))
                # the backward of a recomputed node waits for its copy (a control
                # dependency in MXNet's gradient graph), needed or not: the copy and
                # its recomputed inputs are made before the gradients it writes
                if i not in recomputed:
                    copy_of((i, out_keys[i][0]))
            makes = gid[i]
            for e, t in zip(inputs[i], makes):
                if e in contributions:
                    contributions[e].append(t)
                else:
                    contributions[e] = [t]
            pairs = [(j, 0) for j in range(len(makes))] \
                if ograds and i in bwd_inplace else []
            if i in fc and makes and len(reads) > ograds:
                # FullyConnected's backward may write the data's gradient over the
                # data (its weight gradient is taken first)
                pairs = [(0, ograds)]
            events.append(("backward", i, makes, reads, pairs))
        if self.order:                      # the outputs stay until the step ends
            events.append(("backward", self.order[0], [], self.heads, []))
        return events

    def simulate(self, tags: Mapping[int, str]) -> Timeline:
        """The live bytes at every step of one training iteration with ``tags``."""
        events = self.events(tags)
        nbytes, info = self.nbytes, self.info
        last: dict[int, int] = {}
        for at, (_, _, _, reads, _) in enumerate(events):
            for t in reads:
                last[t] = at
        timeline = Timeline()
        live: dict[int, int] = {}
        total = 0
        for at, (phase, node, makes, reads, _) in enumerate(events):
            for t in makes:
                live[t] = nbytes[t]
                total += nbytes[t]
            timeline.steps.append(Step(phase, node, total))
            if total > timeline.peak_bytes:
                timeline.peak_bytes, timeline.peak_step = total, at
                timeline.peak_tensors = [(info[t][1], info[t][2], info[t][0], b)
                                         for t, b in live.items()]
            for t in list(reads) + list(makes):
                if last.get(t, -1) <= at and t in live:
                    total -= live.pop(t)
        return timeline

    def total_mb(self, tags: Mapping[int, str], match_range: int = 16,
                 mirrored: set[int] | None = None) -> float:
        """What MXNet's ``Total N MB allocated`` should say for training with ``tags``:
        NNVM's static memory planner replayed on the steps of :meth:`simulate` -- in place
        where an operator allows it and the input is at its last use, otherwise a free
        block within ``match_range`` of the size (the smallest larger one, else the
        largest smaller one, grown), otherwise a new block; the total is the sum of the
        blocks' largest sizes."""
        import bisect

        events = self.events(tags, mirrored)
        nbytes = self.nbytes
        refs_of = [0] * len(nbytes)
        for _, _, _, reads, _ in events:
            for t in reads:
                refs_of[t] += 1
        blocks: list[int] = []            # each block's largest size
        refs: list[int] = []              # readers left per block
        free: list[tuple[int, int, int]] = []      # (size, order released, block)
        storage = [-1] * len(nbytes)
        released = 0

        def release(sid: int) -> None:
            nonlocal released
            released += 1
            bisect.insort(free, (blocks[sid], released, sid))

        def request(size: int) -> int:
            mid = bisect.bisect_left(free, (size, -1, -1))
            end = bisect.bisect_right(free, (size * match_range, 1 << 62, 1 << 62))
            if mid < end:
                at = mid
            else:
                begin = bisect.bisect_left(free, (size // match_range, -1, -1))
                if begin >= mid:
                    blocks.append(size)
                    refs.append(0)
                    return len(blocks) - 1
                at = mid - 1
            _, _, sid = free.pop(at)
            blocks[sid] = max(blocks[sid], size)
            return sid

        for _, _, makes, reads, pairs in events:
            taken: set[int] = set() if pairs else _NONE
            for made, read in pairs:
                t = makes[made]
                if read >= len(reads):
                    continue
                src = reads[read]
                sid = storage[src]
                if storage[t] >= 0 or sid < 0 or read in taken or refs[sid] != 1 \
                        or refs_of[t] == 0 or nbytes[t] != nbytes[src]:
                    continue
                taken.add(read)
                storage[t] = sid
                refs[sid] += refs_of[t]
            for t in (sorted(makes, key=lambda m: -nbytes[m]) if len(makes) > 1 else makes):
                if storage[t] < 0 and nbytes[t] > 0:
                    sid = request(nbytes[t])
                    storage[t] = sid
                    refs[sid] = refs_of[t]
            for t in reads:
                sid = storage[t]
                if sid >= 0 and refs[sid] > 0:
                    refs[sid] -= 1
                    if refs[sid] == 0:
                        release(sid)
            for t in makes:
                sid = storage[t]
                if sid >= 0 and refs[sid] == 0 and refs_of[t] == 0:
                    release(sid)
        return sum(blocks) / MB
