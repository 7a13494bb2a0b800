"""An exported ONNX model checked against MXNet's forward of the *original* graph (its
training heads and all, so every rewrite of the export is checked too), and, when an
output differs, the first node whose output differs: every intermediate output marked
on both sides and compared in graph order, as Polygraphy's ``debug reduce`` does.
Detection rows sorted by score may match with rows of scores equal within the tolerance
in another order (:mod:`onnx_rows`), in the outputs and in the search alike.

Runs in the export's child process; must not import Qt.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.convert import onnx_rows
from mxexplorer.core.graph import opinfo
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import argument_types, mxnet_errors

ONNXRUNTIME_PIN = "1.16.3"


@dataclass(frozen=True)
class OutputCheck:
    name: str
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float          # the largest difference over the output's largest magnitude
    where: tuple[int, ...]
    top1: float | None      # share of rows whose arg max agrees (2-D scores)
    #: detection rows of equal scores (within the tolerance) that came in another
    #: order and were matched row for row (:mod:`onnx_rows`)
    reordered: int = 0


@dataclass(frozen=True)
class NodeDifference:
    """The first node (in graph order) whose output differs while its inputs agree."""
    name: str
    op: str
    max_abs: float
    max_rel: float
    inputs_agree: bool
    compared: int           # intermediate outputs compared on both sides
    #: the node alone in onnxruntime, fed MXNet's own inputs: its largest difference
    #: then, and whether that agrees (None: not run, its inputs differ)
    alone_max_abs: float | None = None
    alone_agrees: bool | None = None

    def sentence(self) -> str:
        inputs = "its inputs agree" if self.inputs_agree else "one of its inputs differs too"
        said = (f"first difference at '{self.name}' ({self.op}): max abs "
                f"{self.max_abs:.3g} ({_percent(self.max_rel)} of its largest value); "
                f"{inputs}")
        if self.alone_agrees:
            said += (f"; fed MXNet's own inputs it agrees (max abs {self.alone_max_abs:.2g}):"
                     " rounding far inside the tolerance upstream changes its result "
                     "(near-equal values sorted or suppressed differently, or an exp of "
                     "large values)")
        elif self.alone_agrees is False:
            said += (f"; fed MXNet's own inputs it still differs (max abs "
                     f"{self.alone_max_abs:.3g}): its conversion is wrong")
        return said


def _percent(share: float) -> str:
    """200.0%, 12.5%, 0.02%: one decimal, or two figures below 0.1 %."""
    pct = share * 100
    return f"{pct:.1f}%" if pct >= 0.1 or pct == 0 else f"{pct:.2g}%"


@dataclass(frozen=True)
class CheckReport:
    outputs: tuple[OutputCheck, ...]
    tolerance: float
    inputs: str             # where the inputs came from
    first: NodeDifference | None = None
    #: False: no MXNet reference was available (MXNet is not installed); the model
    #: ran in onnxruntime alone and each output's max_abs is its largest magnitude
    #: (NaN when it holds a NaN or an infinity)
    compared: bool = True
    #: why nothing was compared (when ``compared`` is False)
    no_reference: str = "MXNet is not installed here"

    def _ok(self, o: OutputCheck) -> bool:
        if not self.compared:
            return o.max_abs == o.max_abs and o.max_abs != float("inf")
        return o.max_abs <= self.tolerance or o.max_rel <= self.tolerance   # NaN: False

    @property
    def agree(self) -> bool:
        return all(self._ok(o) for o in self.outputs)

    def verdict(self) -> str:
        if not self.compared:
            broken = [o.name for o in self.outputs if not self._ok(o)]
            ran = (f"the model ran in onnxruntime on {self.inputs}: "
                   f"{len(self.outputs)} output(s), "
                   + (f"NaN or infinite values in {', '.join(broken)}" if broken else
                      "every value finite"))
            return (f"{ran}; no MXNet reference was available ({self.no_reference}), "
                    "so nothing was compared with MXNet")
        if self.agree:
            worst = max((o.max_abs for o in self.outputs), default=0.0)
            rel = max((o.max_rel for o in self.outputs), default=0.0)
            moved = "".join(f"; {o.reordered} rows of equal scores in another order "
                            f"({o.name})" for o in self.outputs if o.reordered)
            return (f"outputs agree within {self.tolerance:g} (largest difference "
                    f"{worst:.2g}, {rel:.2g} of the output's largest value; "
                    f"{self.inputs}{moved})")
        bad = next(o for o in self.outputs if not self._ok(o))
        k = self.outputs.index(bad)
        if bad.max_abs != bad.max_abs:
            said = (f"output {k} ({bad.name}) is NaN at {tuple(bad.where)} in one runtime "
                    "and not the other")
        else:
            said = (f"output {k} ({bad.name}) differs by {bad.max_abs:.3g} at "
                    f"{tuple(bad.where)} ({bad.max_rel:.1%} of its largest value)")
        return f"{said}; {self.first.sentence()}" if self.first else said

    def to_dict(self) -> dict[str, Any]:
        first = self.first
        return {"agree": self.agree, "verdict": self.verdict(), "tolerance": self.tolerance,
                "inputs": self.inputs, "compared_with_mxnet": self.compared,
                "first_difference": None if first is None else {
                    "name": first.name, "op": first.op, "max_abs": first.max_abs,
                    "max_rel": first.max_rel, "inputs_agree": first.inputs_agree,
                    "alone_max_abs": first.alone_max_abs,
                    "alone_agrees": first.alone_agrees},
                "outputs": [{"name": o.name, "shape": list(o.shape), "max_abs": o.max_abs,
                             "max_rel": o.max_rel, "where": list(o.where), "top1": o.top1,
                             "reordered": o.reordered}
                            for o in self.outputs]}


#: ops whose input 1 is a sequence length (per batch entry, along ``axis``)
SEQUENCE_OPS = frozenset({"SequenceLast", "SequenceMask", "SequenceReverse"})


def index_inputs(graph_json: str, data_shape: Callable[[str], Shape | None]
                 ) -> dict[str, tuple[int, int]]:
    """Inputs read as indices, with the range of values that means something: token ids
    (``[0, input_dim - 1]``) for an ``Embedding``'s data, lengths (``[1, T]``) for a
    sequence op's ``sequence_length`` (``data_shape(node name)``: the shape of that
    node's data).  Uniform values in [-1, 1] make every id 0 and every length 0 there."""
    import json

    nodes = json.loads(graph_json).get("nodes", [])
    variables = {i: n["name"] for i, n in enumerate(nodes) if n.get("op") == "null"}
    out: dict[str, tuple[int, int]] = {}
    for node in nodes:
        attrs = opinfo.node_attrs(node)
        inputs = node.get("inputs", [])
        if node.get("op") == "Embedding" and inputs and inputs[0][0] in variables:
            dim = int(attrs.get("input_dim", 1))
            out.setdefault(variables[inputs[0][0]], (0, max(dim - 1, 0)))
        elif node.get("op") in SEQUENCE_OPS and len(inputs) > 1 and \
                inputs[1][0] in variables:
            data, axis = data_shape(node["name"]), int(attrs.get("axis", 0))
            if data and len(data) > axis:
                out.setdefault(variables[inputs[1][0]], (1, int(data[axis])))
    return out


def make_inputs(mx: Any, shapes: Mapping[str, Shape], given: str | None,
                labels: Sequence[str] = (),
                indices: Mapping[str, tuple[int, int]] | None = None
                ) -> tuple[dict[str, Any], str]:
    """The check's inputs: uniform in [-1, 1], zeros for ``labels`` (an index that
    stays valid wherever it is used), whole numbers in the range ``indices`` gives
    an input read as indices (:func:`index_inputs`), the first input from ``given`` (a
    ``.npy`` or an image) when asked."""
    import numpy as np

    rng = np.random.default_rng(11)
    indices = {k: v for k, v in (indices or {}).items() if k in shapes and k not in labels}
    out = {k: (np.zeros(v, "float32") if k in labels else
               rng.integers(indices[k][0], indices[k][1], v, endpoint=True).astype("float32")
               if k in indices else
               rng.uniform(-1, 1, v).astype("float32")) for k, v in shapes.items()}
    said = [f"{'token ids below' if low == 0 else f'lengths {low} to'} "
            f"{high + 1 if low == 0 else high} for '{name}'"
            for name, (low, high) in indices.items()]
    where = "random inputs" + (f" ({', '.join(said)})" if said else "")
    if not given:
        return out, where
    first = next(k for k in shapes if k not in labels)
    want = tuple(shapes[first])
    if given.endswith(".npy"):
        value = np.load(given).astype("float32")
    else:
        try:
            image = mx.image.imread(given).asnumpy()            # H, W, C
        except Exception as exc:  # noqa: BLE001
            raise UserError(f"{given}: not an image MXNet can read ({exc})") from None
        if len(want) != 4:
            raise UserError(f"an image fills an NCHW input; {first} is {want}")
        image = mx.image.imresize(mx.nd.array(image), want[3], want[2]).asnumpy()
        value = np.broadcast_to(image.transpose(2, 0, 1)[None].astype("float32"), want)
    if value.shape != want:
        raise UserError(f"{given} holds shape {value.shape}, but {first} is {want}")
    out[first] = np.ascontiguousarray(value)
    return out, f"inputs from {os.path.basename(given)}"


def difference(ref: Any, got: Any) -> tuple[float, float, tuple[int, ...]]:
    """Largest absolute difference, it over ``ref``'s largest magnitude, and where (the
    same NaN on both sides is agreement)."""
    import numpy as np

    diff = np.abs(got.astype("float64") - ref.astype("float64"))
    diff[np.isnan(got) & np.isnan(ref)] = 0.0
    if not diff.size:
        return 0.0, 0.0, ()
    where = np.unravel_index(int(np.argmax(np.nan_to_num(diff, nan=np.inf))), diff.shape)
    finite = ref[~np.isnan(ref)] if ref.dtype.kind == "f" else ref
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    max_abs = float(diff[where])
    return max_abs, (max_abs / scale if scale else max_abs), tuple(int(w) for w in where)


def compare(names: list[str], mx_out: list[Any], ort_out: dict[str, Any],
            tolerance: float, inputs: str,
            rows: Mapping[str, onnx_rows.Rows] | None = None) -> CheckReport:
    """Every output of MXNet (``names``, ``mx_out``) against onnxruntime's of the same
    name; outputs that hold detection rows (``rows``, by name) may match with rows of
    equal scores in another order (:func:`onnx_rows.reordered`)."""
    import numpy as np

    checks = []
    pairs = []
    pool = sorted(ort_out)
    for name, ref in zip(names, mx_out):
        stem = name[:-len("_output")] if name.endswith("_output") else name
        candidates = [n for n in pool if n in (onnx_name(name), stem, name)] or \
            [n for n in pool if n.startswith(stem) and ort_out[n].shape == ref.shape]
        if not candidates:
            raise UserError(f"the ONNX model has no output for {name} "
                            f"(it has {', '.join(pool)})")
        got = ort_out[candidates[0]]
        pool.remove(candidates[0])
        if got.shape != ref.shape:
            raise UserError(f"output {name}: ONNX gives shape {got.shape}, MXNet {ref.shape}")
        pairs.append((name, ref, got))
    moved = onnx_rows.reordered(pairs, rows or {}, tolerance)
    for name, ref, got in pairs:
        got, count = moved.get(name, (got, 0))
        max_abs, max_rel, where = difference(ref, got)
        top1 = None
        if ref.ndim == 2 and ref.shape[1] > 1:
            top1 = float(np.mean(np.argmax(ref, 1) == np.argmax(got, 1)))
        checks.append(OutputCheck(name, tuple(ref.shape), max_abs, max_rel, where, top1,
                                  count))
    return CheckReport(tuple(checks), tolerance, inputs)


def onnx_name(entry: str) -> str:
    """The ONNX tensor MXNet's converter names for an MXNet output entry: ``x_output``
    is ``x``, ``x_output1`` is ``x1``."""
    stem, _, index = entry.rpartition("_output")
    return stem + index if stem else entry


@contextlib.contextmanager
def unfused() -> Iterator[None]:
    """MXNet's CPU build fuses Convolution and BatchNorm into ``sg_mkldnn_conv_bn_0``
    when it binds; unfused, every node's output keeps its name."""
    before = os.environ.get("MXNET_SUBGRAPH_BACKEND")
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MXNET_SUBGRAPH_BACKEND", None)
        else:
            os.environ["MXNET_SUBGRAPH_BACKEND"] = before


def forward_entries(mx: Any, original: Any, names: Sequence[str],
                    shapes: Mapping[str, Shape], feed: Mapping[str, Any],
                    params: Mapping[str, Any]) -> dict[str, Any]:
    """MXNet's inference forward of ``original``: the output entries ``names`` (heads
    or intermediate) as arrays.  Each is bound as an output beside the graph's own: an
    entry no op reads (a slice only ``zeros_like`` reads, for its shape) is never
    computed otherwise (MXNet's memory plan gives it kNullOp), and an executor monitor
    showed whatever its memory held.  When the whole graph cannot bind (a loss's label
    of unknown shape), the entries alone are bound."""
    internals = original.get_internals()
    place: dict[str, int] = {}
    for k, entry in enumerate(internals.list_outputs()):
        place.setdefault(entry, k)
    heads = set(original.list_outputs())
    wanted = list(dict.fromkeys(names))
    with unfused():
        try:
            sym = mx.sym.Group([original] + [internals[place[n]] for n in wanted
                                             if n not in heads])
            exe = bind(mx, sym, shapes)
        except Exception:  # noqa: BLE001 - the part that the entries need, below
            sym = mx.sym.Group([internals[place[n]] for n in wanted])
            exe = bind(mx, sym, shapes)
    for name, arr in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
        if name in feed:
            arr[:] = feed[name]
        elif name in params:
            arr[:] = params[name].astype(arr.dtype)
        else:
            arr[:] = 0                  # a label only a training head reads
    values = dict(zip(sym.list_outputs(), exe.forward(is_train=False)))
    missing = [n for n in names if n not in values]
    if missing:
        raise UserError(f"MXNet gave no value for {', '.join(missing[:3])}")
    return {n: values[n].asnumpy() for n in names}


def bind(mx: Any, sym: Any, shapes: Mapping[str, Shape]) -> Any:
    wanted = {k: tuple(v) for k, v in shapes.items() if k in sym.list_arguments()}
    return sym.simple_bind(mx.cpu(), grad_req="null", type_dict=argument_types(sym),
                           **wanted)


def run_onnx(blob: bytes, feed: Mapping[str, Any]) -> dict[str, Any]:
    try:
        import onnxruntime as ort
    except ImportError:
        raise UserError("--check needs onnxruntime: pip install 'mxexplorer[onnx]' (on "
                        "Python 3.9-3.11 beside MXNet: pip install --no-deps "
                        f"onnxruntime=={ONNXRUNTIME_PIN}; see the README)") from None
    with mxnet_errors("onnxruntime cannot run the exported model"):
        options = ort.SessionOptions()
        options.log_severity_level = 3          # its warnings are not the user's business
        # weights shared by many nodes (a seq2seq's 2,712 Gemms) are copied per node when
        # prepacked: ParaBank's check was killed at 23 GB; 5 GB without
        options.add_session_config_entry("session.disable_prepacking", "1")
        session = ort.InferenceSession(blob, options, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(None, {i.name: feed[i.name]
                                                  for i in session.get_inputs()})))


#: the most bytes of intermediate outputs marked at once on each side (Mask R-CNN's
#: thousands of outputs, all marked at once, had its search killed for lack of memory
#: on a 23 GB machine)
SEARCH_BYTES = 512 * 2**20


def first_difference(mx: Any, onnx: Any, model: Any, original: Any,
                     shapes: Mapping[str, Shape], feed: Mapping[str, Any],
                     onnx_feed: Mapping[str, Any], params: Mapping[str, Any],
                     ops: Mapping[str, str], tolerance: float,
                     naming: Callable[[str], str | None] = onnx_name,
                     graph_json: str | None = None) -> NodeDifference | None:
    """Every operator output of ``original`` that the ONNX model names too, computed on
    both sides in parts of at most :data:`SEARCH_BYTES` (graph order); the first beyond
    ``tolerance`` is returned, with whether its own inputs agree, and the search stops
    at the part that holds it.  None when no intermediate output differs (or none
    maps).  ``naming``: the ONNX tensor of an MXNet entry (None: not in the model)."""
    internals = original.get_internals()
    listed = internals.list_outputs()
    entries = [e for e in listed if "_output" in e and e.rpartition("_output")[0] in ops]
    inferred = onnx.shape_inference.infer_shapes(model)
    typed = {v.name: v for v in list(inferred.graph.value_info) +
             list(inferred.graph.output)}
    pairs = [(e, n) for e, n in ((e, naming(e)) for e in entries)
             if n is not None and n in typed]
    rows = onnx_rows.sorted_rows(graph_json or original.tojson())
    perms: dict[str, Any] = {}              # detection nodes' rows matched: as moved
    same: set[str] = set()
    compared = 0
    marked = onnx.ModelProto()          # one copy, its extra outputs changed per part
    marked.CopyFrom(model)
    heads = len(marked.graph.output)
    outputs = {o.name for o in marked.graph.output}
    for part in _parts(pairs, _entry_bytes(internals, shapes)):
        del marked.graph.output[heads:]
        marked.graph.output.extend(typed[t] for _, t in part if t not in outputs)
        got = run_onnx(marked.SerializeToString(), onnx_feed)
        want = forward_entries(mx, original, [e for e, _ in part], shapes, feed, params)
        bad: dict[str, tuple[float, float]] = {}
        for entry, tensor in part:
            ref, out = want.pop(entry), got.pop(tensor, None)
            if out is None or out.shape != ref.shape:
                continue
            compared += 1
            max_abs, max_rel, _ = difference(ref, out)
            if not (max_abs <= tolerance or max_rel <= tolerance):
                matched = onnx_rows.entry_matched(rows.get(entry), ref, out, tolerance,
                                                  perms)
                if matched is not None:
                    max_abs, max_rel, _ = difference(ref, matched)
            if max_abs <= tolerance or max_rel <= tolerance:
                same.add(entry)
            else:
                bad.setdefault(entry, (max_abs, max_rel))
        for entry in bad:                 # graph order
            node = internals[listed.index(entry)]
            inputs = node.get_children()
            children = [c.list_outputs()[0] for c in inputs] if inputs is not None else []
            name = entry.rpartition("_output")[0]
            agree = all(c in same or c.rpartition("_output")[0] not in ops
                        for c in children)
            alone = _alone(mx, onnx, inferred, original, entry, children, shapes, feed,
                           onnx_feed, params, ops, tolerance, naming) if agree else None
            return NodeDifference(name, ops[name], *bad[entry], agree, compared,
                                  *(alone or (None, None)))
    return None


def _alone(mx: Any, onnx: Any, model: Any, original: Any, entry: str,
           children: list[str], shapes: Mapping[str, Shape], feed: Mapping[str, Any],
           onnx_feed: Mapping[str, Any], params: Mapping[str, Any],
           ops: Mapping[str, str], tolerance: float,
           naming: Callable[[str], str | None] = onnx_name) -> tuple[float, bool] | None:
    """The ONNX nodes between ``entry``'s inputs and ``entry`` (``model`` with its
    inferred shapes) run alone, fed MXNet's own values of those inputs: the largest
    difference from MXNet's ``entry`` then, and whether it agrees.  A sort or an NMS
    amplifies rounding far inside the tolerance into whole rows; run alone, a right
    conversion agrees.  None: it cannot be cut out."""
    def name_of(entry: str) -> str:
        return naming(entry) or entry

    weights = {i.name for i in model.graph.initializer}   # they come along inside
    graph_inputs = {i.name for i in model.graph.input} - weights
    made = [c for c in children if c.rpartition("_output")[0] in ops and
            name_of(c) not in weights]                  # not folded to a constant
    fed = [c for c in children if c in graph_inputs]
    try:
        values = forward_entries(mx, original, made + [entry], shapes, feed, params)
        typed = onnx.ModelProto()
        typed.CopyFrom(model)
        known = {v.name for v in typed.graph.value_info}
        typed.graph.value_info.extend(o for o in typed.graph.output if o.name not in known)
        part = onnx.utils.Extractor(typed).extract_model(
            [name_of(c) for c in made] + fed, [name_of(entry)])
        alone_feed = {name_of(c): values[c] for c in made}
        alone_feed.update({c: onnx_feed[c] for c in fed})
        got = run_onnx(part.SerializeToString(), alone_feed).get(name_of(entry))
    except Exception:  # noqa: BLE001 - the verdict goes without it
        return None
    if got is None or got.shape != values[entry].shape:
        return None
    max_abs, max_rel, _ = difference(values[entry], got)
    if not (max_abs <= tolerance or max_rel <= tolerance):
        rows = onnx_rows.sorted_rows(original.tojson()).get(entry)
        matched = onnx_rows.entry_matched(rows, values[entry], got, tolerance, {})
        if matched is not None:
            max_abs, max_rel, _ = difference(values[entry], matched)
    return max_abs, bool(max_abs <= tolerance or max_rel <= tolerance)


def _entry_bytes(internals: Any, shapes: Mapping[str, Shape]) -> dict[str, int]:
    """Each output entry's size at ``shapes`` (4 bytes an element; 0: unknown)."""
    try:
        _, out, _ = internals.infer_shape_partial(**shapes)
    except Exception:  # noqa: BLE001 - unknown sizes: one output a part
        return {}
    sizes = {}
    for entry, shape in zip(internals.list_outputs(), out):
        count = 1
        for d in shape or ():
            count *= max(int(d), 0)
        sizes[entry] = 4 * count if shape else 0
    return sizes


def _parts(pairs: list[tuple[str, str]], sizes: Mapping[str, int]
           ) -> Iterator[list[tuple[str, str]]]:
    """``pairs`` in graph order, cut where the next would pass :data:`SEARCH_BYTES`
    (a part holds one output at least)."""
    part: list[tuple[str, str]] = []
    held = 0
    for pair in pairs:
        size = sizes.get(pair[0], SEARCH_BYTES)
        if part and held + size > SEARCH_BYTES:
            yield part
            part, held = [], 0
        part.append(pair)
        held += size
    if part:
        yield part
