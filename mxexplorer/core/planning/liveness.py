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
from typing import Any, Callable, Mapping

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
    # a max pooling with the workspace output (opinfo: where MKL-DNN pools), not global
    return op == "Pooling" and opinfo.outputs(op, attrs)[0] == 2 \
        and str(attrs.get("global_pool", "False")).lower() not in ("true", "1")

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
        # what :meth:`events` reads for every plan, as numbers (tuple keys cost most of a
        # call): per node its inputs as (source node, forward tensor, recomputed copy),
        # what its backward needs likewise, the copies it makes when recomputed, the
        # gradient of each output as (forward tensor: the key of its parts, summed one)
        fid, mid, sid = self.fid, self.mid, self.sid
        self._ins = {i: [(e[0], fid[e], mid[e]) for e in self.inputs[i]] for i in order}
        self._in_keys = {i: [fid[e] for e in self.inputs[i]] for i in order}
        #: each operator's input operators, last first (the order a recompute expands)
        self._sources = {i: [e[0] for e in reversed(self.inputs[i])] for i in order}
        self._needs = {i: [(e[0], fid[e], mid[e]) for e in self.needs[i]] for i in order}
        self._needs_fwd = {i: [fid[e] for e in self.needs[i]] for i in order}
        self._copies = {i: [mid[(i, k)] for k in out_keys[i]] for i in order}
        self._grads = {i: [(fid[(i, k)], sid[(i, k)]) for k in out_keys[i]] for i in order}
        self._bwd_pairs = {i: [(j, 0) for j in range(len(self.gid[i]))] for i in order}
        self._backward = self._fixed_backward()
        #: how often the forward steps read each tensor: the same for every plan
        self._forward_refs = [0] * len(self.nbytes)
        for _, _, _, reads, _ in self.forward:
            for t in reads:
                self._forward_refs[t] += 1

    def _fixed_backward(self) -> list[tuple[int, list[Event], list[int], list[int],
                                            list[tuple[int, int]], Event | None]]:
        """The backward pass's parts that no plan changes, worked out once, operator by
        operator last first: the steps summing its outputs' gradients, the gradients its
        own step reads, what the step makes, its in-place pairs, and the whole step as
        it is when the operator is kept (None: no step, an addition passes its gradient
        on; only a recomputed operator's reads depend on the plan)."""
        out: list[tuple[int, list[Event], list[int], list[int],
                        list[tuple[int, int]], Event | None]] = []
        contributions: dict[int, list[int]] = {}      # by the forward tensor's number
        for i in reversed(self.order):
            sums: list[Event] = []
            ograds: list[int] = []
            for key, summed in self._grads[i]:        # the gradient of each output first
                parts = contributions.pop(key, None)
                if parts is None:
                    continue
                if len(parts) > 1:      # gradients from several consumers: summed first
                    sums.append(("backward", i, [summed], parts, [(0, 0)]))
                    ograds.append(summed)
                else:
                    ograds.extend(parts)
            if i in self.clone_grad:
                # an addition's inputs take its output's gradient as it is: MXNet's
                # gradient pass makes no node for it, so nothing is recomputed either
                for key in self._in_keys[i]:
                    contributions.setdefault(key, []).extend(ograds[:1])
                out.append((i, sums, ograds, [], [], None))
                continue
            makes = self.gid[i]
            for key, t in zip(self._in_keys[i], makes):
                contributions.setdefault(key, []).append(t)
            pairs = self._bwd_pairs[i] if ograds and i in self.bwd_inplace else []
            if i in self.fc and makes and self.needs[i]:
                # FullyConnected's backward may write the data's gradient over the
                # data (its weight gradient is taken first)
                pairs = [(0, len(ograds))]
            kept: Event = ("backward", i, makes, ograds + self._needs_fwd[i], pairs)
            out.append((i, sums, ograds, makes, pairs, kept))
        return out

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
        if mirrored is None:
            mirrored = self.recomputed_by(tags)
        events = list(self.forward)
        append = events.append
        recomputed: set[int] = set()
        ins, copies = self._ins, self._copies

        sources = self._sources

        def recompute(node: int) -> None:
            """Make the recomputed copy of ``node`` (mirrored, not yet made), its
            recomputed inputs before it, depth first, without recursion: a chain of
            thousands of recomputed operators is common.  The stack holds a node to
            expand as itself and one whose inputs are made as ``~node`` (negative)."""
            stack = [node]
            pop, push, extend = stack.pop, stack.append, stack.extend
            while stack:
                p = pop()
                if p < 0:
                    p = ~p
                    if p in recomputed:
                        continue
                    recomputed.add(p)
                    append(("recompute", p, copies[p],
                            [m if src in mirrored else f for src, f, m in ins[p]], []))
                    continue
                if p in recomputed:
                    continue
                push(~p)
                extend([src for src in sources[p]
                        if src in mirrored and src not in recomputed])

        needs = self._needs
        for i, sums, ograd_reads, makes, pairs, kept in self._backward:
            if sums:
                events.extend(sums)
            if kept is None:
                continue
            if i not in mirrored:
                # a kept operator's backward reads the forward tensors of its inputs,
                # which stay alive until then, mirrored or not: MXNet's gradient pass
                # gives the backward of a node it does not mirror that node's own
                # inputs (read in MXNet 1.9's bind reports)
                append(kept)
                continue
            reads = list(ograd_reads)
            for src, f, m in needs[i]:
                if src not in mirrored:
                    reads.append(f)
                else:
                    if src not in recomputed:
                        recompute(src)
                    reads.append(m)
            # the backward of a recomputed node waits for its copy (a control
            # dependency in MXNet's gradient graph), needed or not: the copy and its
            # recomputed inputs are made before the gradients it writes
            if i not in recomputed:
                recompute(i)
            append(("backward", i, makes, reads, pairs))
        if self.order:                      # the outputs stay until the step ends
            events.append(("backward", self.order[0], [], self.heads, []))
        return events

    def simulate(self, tags: Mapping[int, str],
                 check: Callable[[], None] | None = None) -> Timeline:
        """The live bytes at every step of one training iteration with ``tags``;
        ``check`` is called every few thousand steps (it raises to stop)."""
        events = self.events(tags)
        nbytes, info = self.nbytes, self.info
        last: dict[int, int] = {}
        for at, (_, _, _, reads, _) in enumerate(events):
            for t in reads:
                last[t] = at
        timeline = Timeline()

        def run(until: int) -> dict[int, int]:
            """Replay the steps, recording them (``until`` -1), or up to step ``until``
            without recording: the tensors live there."""
            live: dict[int, int] = {}
            total = 0
            for at, (phase, node, makes, reads, _) in enumerate(events):
                if check is not None and at % 4096 == 0:
                    check()
                for t in makes:
                    live[t] = nbytes[t]
                    total += nbytes[t]
                if at == until:
                    break
                if until < 0:
                    timeline.steps.append(Step(phase, node, total))
                    if total > timeline.peak_bytes:
                        timeline.peak_bytes, timeline.peak_step = total, at
                for t in list(reads) + list(makes):
                    if last.get(t, -1) <= at and t in live:
                        total -= live.pop(t)
            return live
        run(-1)
        if timeline.peak_step >= 0:
            # the tensors at the peak, from a second replay that stops there (listing
            # them at every new peak made a long chain's forward quadratic)
            timeline.peak_tensors = [(info[t][1], info[t][2], info[t][0], b)
                                     for t, b in run(timeline.peak_step).items()]
        return timeline

    def total_mb(self, tags: Mapping[int, str], match_range: int = 16,
                 mirrored: set[int] | None = None) -> float:
        """What MXNet's ``Total N MB allocated`` should say for training with ``tags``:
        NNVM's static memory planner replayed on the steps of :meth:`simulate` -- in place
        where an operator allows it and the input is at its last use, otherwise a free
        block within ``match_range`` of the size (the smallest larger one, else the
        largest smaller one, grown), otherwise a new block; the total is the sum of the
        blocks' largest sizes."""
        from bisect import bisect_left, bisect_right, insort

        events = self.events(tags, mirrored)
        nbytes = self.nbytes
        refs_of = list(self._forward_refs)      # the forward steps' reads, then the rest
        for _, _, _, reads, _ in events[len(self.forward):]:
            for t in reads:
                refs_of[t] += 1
        blocks: list[int] = []            # each block's largest size
        refs: list[int] = []              # readers left per block
        # the free blocks by (size, order released, block), each as one int: size above
        # the order above the block, ``bits`` bits each (ints compare 3x faster than
        # tuples; a tensor is made once, so neither count reaches ``len(nbytes)``)
        free: list[int] = []
        bits = len(nbytes).bit_length() + 1
        shift, mask = 2 * bits, (1 << bits) - 1
        storage = [-1] * len(nbytes)
        released = 0
        # NNVM's planner, inlined (a call per tensor was a fifth of the time): a made
        # tensor takes an input's block in place, else the smallest free block from its
        # size up to match_range times it, else the largest below down to a
        # match_range-th (grown), else a new block; a block is free when its last
        # reader has read
        for _, _, makes, reads, pairs in events:
            if pairs:
                taken: set[int] = set()
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
                size = nbytes[t]
                if storage[t] >= 0 or size <= 0:
                    continue
                at = bisect_left(free, size << shift)
                if at >= bisect_right(free, ((size * match_range + 1) << shift) - 1):
                    if bisect_left(free, (size // match_range) << shift) >= at:
                        storage[t] = len(blocks)
                        blocks.append(size)
                        refs.append(refs_of[t])
                        continue
                    at -= 1
                sid = free.pop(at) & mask
                if blocks[sid] < size:
                    blocks[sid] = size
                storage[t] = sid
                refs[sid] = refs_of[t]
            for t in reads:
                sid = storage[t]
                if sid >= 0 and refs[sid] > 0:
                    refs[sid] -= 1
                    if refs[sid] == 0:
                        released += 1
                        insort(free, (blocks[sid] << shift) | (released << bits) | sid)
            for t in makes:
                sid = storage[t]
                if sid >= 0 and refs[sid] == 0 and refs_of[t] == 0:
                    released += 1
                    insort(free, (blocks[sid] << shift) | (released << bits) | sid)
        return sum(blocks) / MB
