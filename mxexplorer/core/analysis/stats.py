"""Per-node and total statistics: parameters, activation memory, MACs and FLOPs.

Conventions (also in the README): MACs are multiply-accumulates for the whole batch
of the inferred shapes; FLOPs = 2 x MACs.  Convolution counts
``out_elements * in_channels / groups * kernel_taps`` (dilation changes the output
size, not the taps), Deconvolution ``in_elements * out_channels / groups * taps``,
FullyConnected ``out_elements * in_features``; a bias adds one per output element.
BatchNorm and the other normalisations, activations, elementwise and broadcast ops
count one per output element, Pooling one per kernel tap per output element, softmax
three per element.  Data-movement ops (reshape, concat, slice ...) cost nothing and
are listed as free; every other op counts 0 and is listed as uncounted.
Must not import Qt or MXNet.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from mxexplorer.core.analysis import shapes as shape_infer
from mxexplorer.core.analysis.shapes import Shape, ShapeResult, known
from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.graph.snapshot import GraphSnapshot

DTYPE_BYTES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "uint8": 1,
               "int8": 1, "int32": 4, "int64": 8, "bool": 1, "int16": 2}

_ELEMENTWISE_PREFIXES = ("elemwise_", "broadcast_", "_plus", "_minus", "_mul", "_div",
                         "_rminus", "_rdiv", "_power", "_maximum", "_minimum", "_mod",
                         "_rmod", "_hypot", "_equal", "_not_equal", "_greater", "_lesser",
                         "_logical_")
_UNARY = {"Activation", "LeakyReLU", "relu", "sigmoid", "tanh", "softsign", "exp", "log",
          "sqrt", "rsqrt", "square", "abs", "negative", "reciprocal", "clip", "erf",
          "_contrib_gelu", "hard_sigmoid", "log_sigmoid", "mish", "sign", "floor", "ceil",
          "round", "cos", "sin", "_copyto", "smooth_l1", "gamma", "expm1", "log1p",
          "cbrt", "rcbrt"}
_NORMS = {"BatchNorm", "BatchNorm_v1", "CuDNNBatchNorm", "_contrib_SyncBatchNorm",
          "InstanceNorm", "LayerNorm", "GroupNorm", "L2Normalization", "LRN",
          "_contrib_BatchNormWithReLU"}
_SOFTMAX = {"softmax", "log_softmax", "SoftmaxOutput", "SoftmaxActivation", "softmin",
            "masked_softmax", "masked_log_softmax"}
_FREE = {"Reshape", "Flatten", "transpose", "expand_dims", "squeeze", "SwapAxis",
         "Concat", "stack", "SliceChannel", "_split_v2", "slice", "slice_axis",
         "slice_like", "Crop", "_copy", "BlockGrad", "MakeLoss", "Dropout", "Cast",
         "reshape_like", "identity", "tile", "repeat", "zeros_like", "ones_like",
         "_zeros", "_ones", "_full", "_arange", "shape_array", "size_array", "flip",
         "reverse", "SequenceReverse", "SequenceLast", "SequenceMask", "take", "pick",
         "gather_nd", "where", "Embedding", "_contrib_arange_like", "depth_to_space",
         "space_to_depth", "broadcast_to", "broadcast_like", "broadcast_axis",
         "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
         "_CrossDeviceCopy", "amp_cast", "amp_multicast"}


@dataclass(frozen=True)
class NodeStats:
    params: int = 0
    activation_bytes: int = 0
    macs: int = 0
    counted: bool = True


@dataclass(frozen=True)
class GraphStats:
    """Totals and per-node figures for one shape result."""

    per_node: dict[int, NodeStats]
    per_entry_bytes: dict[tuple[int, int], int]
    params: int
    aux_values: int
    activation_bytes: int
    macs: int
    uncounted_ops: tuple[str, ...]
    free_ops: tuple[str, ...] = field(default=())

    @property
    def flops(self) -> int:
        return 2 * self.macs

    @property
    def param_bytes(self) -> int:
        """The learned parameters' bytes (float32); their gradients take as much again."""
        return 4 * self.params

    @property
    def aux_bytes(self) -> int:
        return 4 * self.aux_values


def _size(shape: Shape | None) -> int:
    """Elements of a known shape; 0 when the shape or one of its sizes is unknown."""
    if not shape or min(shape) <= 0:
        return 0
    return math.prod(shape)


def float32_bytes(shape: Shape | None) -> int:
    """Bytes of a float32 tensor of ``shape`` (0 when the shape is not known)."""
    return _size(shape) * 4


def _channel_axis(attrs: Mapping[str, str], ndim: int) -> int:
    layout = str(attrs.get("layout", "")).strip().strip("'\"")
    if layout and layout.upper() not in ("NONE",) and layout.endswith("C"):
        return ndim - 1
    return 1


def node_macs(op: str, attrs: Mapping[str, str], in_shapes: list[Shape | None],
              out_shapes: list[Shape | None], n_inputs: int, slots: list[str]) -> int | None:
    """MACs of one node, or None when the op is not modelled (see module docstring)."""
    canon = opinfo.canonical_op(op)
    out = out_shapes[0] if out_shapes else None
    if canon in _FREE:
        return 0
    if not known(out):
        return 0 if _is_modelled(canon) else None
    out_elems = _size(out)
    has_bias = "bias" in slots
    if canon in ("Convolution", "Convolution_v1", "_contrib_DeformableConvolution",
                 "Deconvolution"):
        data = in_shapes[0] if in_shapes else None
        if not known(data):
            return 0
        groups = max(opinfo.int_attr(attrs, "num_group", 1), 1)
        taps = 1
        for k in opinfo.tuple_attr(attrs, "kernel") or ():
            taps *= k or 1
        bias = out_elems if has_bias else 0
        if canon == "Deconvolution":      # each input element spreads over the kernel
            cout = out[_channel_axis(attrs, len(out))]  # type: ignore[index,arg-type]
            return _size(data) * (cout // groups) * taps + bias
        cin = data[_channel_axis(attrs, len(data))]  # type: ignore[index,arg-type]
        return out_elems * (cin // groups) * taps + bias
    if canon == "FullyConnected":
        weight = in_shapes[1] if len(in_shapes) > 1 else None
        if known(weight):
            in_features = weight[1]  # type: ignore[index]
        else:
            data = in_shapes[0] if in_shapes else None
            if not known(data):
                return 0
            in_features = _size(data) // max(data[0], 1)  # type: ignore[index]
        return out_elems * in_features + (out_elems if has_bias else 0)
    if canon == "Pooling":
        data = in_shapes[0] if in_shapes else None
        if opinfo.flag(attrs, "global_pool"):
            if not known(data):
                return 0
            taps = _size(data) // max(_size(out), 1)
        else:
            taps = 1
            for k in opinfo.tuple_attr(attrs, "kernel") or ():
                taps *= k or 1
        return out_elems * taps
    if canon in _NORMS or canon in _UNARY:
        return out_elems
    if canon in _SOFTMAX:
        return 3 * out_elems
    if canon == "add_n" or canon == "ElementWiseSum":
        return out_elems * max(n_inputs - 1, 1)
    if canon.startswith(_ELEMENTWISE_PREFIXES):
        return out_elems
    return None


def _is_modelled(canon: str) -> bool:
    """Whether :func:`node_macs` has a rule for the op (0 then means "shape unknown")."""
    return (canon in ("Convolution", "Convolution_v1", "Deconvolution", "FullyConnected",
                      "Pooling", "add_n", "ElementWiseSum", "_contrib_DeformableConvolution")
            or canon in _NORMS or canon in _UNARY or canon in _SOFTMAX
            or canon.startswith(_ELEMENTWISE_PREFIXES))


def compute(doc: GraphDocument, result: ShapeResult) -> GraphStats:
    """Statistics of a document for one inference result (same revision)."""
    kinds = doc.kinds()
    shape_of = result.by_entry
    dtype_of: dict[tuple[int, int], str | None] = {}
    for entry, dt in zip(doc.internals(), result.internal_dtypes):
        dtype_of[(entry.node, entry.index)] = dt
    per_node: dict[int, NodeStats] = {}
    per_entry_bytes: dict[tuple[int, int], int] = {}
    uncounted: set[str] = set()
    free: set[str] = set()
    total_macs = 0
    act_bytes = 0
    outputs: dict[int, int] = {}
    for entry in doc.internals():
        key = (entry.node, entry.index)
        width = DTYPE_BYTES.get(dtype_of.get(key) or "float32", 4)
        per_entry_bytes[key] = _size(shape_of.get(key)) * width
        outputs[entry.node] = entry.index + 1
    nodes = doc.nodes
    for i in doc.order():
        node = nodes[i]
        if node.op == "null":
            continue
        slots = doc.input_slots(i)
        in_shapes = [shape_of.get((s, k)) for s, k, _ in node.inputs]
        outs = range(outputs.get(i, 0))
        out_shapes = [shape_of.get((i, k)) for k in outs]
        macs = node_macs(node.op, node.attrs, in_shapes, out_shapes, len(node.inputs), slots)
        canon = opinfo.canonical_op(node.op)
        if macs is None:
            uncounted.add(canon)
        elif macs == 0 and canon in _FREE:
            free.add(canon)
        params = sum(_size(shape_of.get((s, k))) for s, k, _ in node.inputs
                     if kinds[s] == NodeKind.PARAM)
        abytes = sum(per_entry_bytes.get((i, k), 0) for k in outs)
        per_node[i] = NodeStats(params, abytes, macs or 0, macs is not None)
        total_macs += macs or 0
        act_bytes += abytes
    params_total = sum(_size(shape_of.get((i, 0))) for i in doc.parameters())
    aux_total = sum(_size(shape_of.get((i, 0))) for i in doc.aux_states())
    return GraphStats(per_node, per_entry_bytes, params_total, aux_total, act_bytes,
                      total_macs, tuple(sorted(uncounted)), tuple(sorted(free)))


@dataclass(frozen=True)
class AnalysisResult:
    """Shapes and the statistics that go with them, for one document revision."""

    shapes: ShapeResult
    stats: GraphStats


def analyze(snap: GraphSnapshot, given: Mapping[str, Shape],
            dtypes: Mapping[str, str] | None = None,
            use_mxnet: bool | None = None) -> AnalysisResult:
    """Shape inference plus statistics on a snapshot: the whole job of a worker
    (``use_mxnet``: see :func:`~mxexplorer.core.analysis.shapes.infer_document`)."""
    return analyze_document(GraphDocument.from_snapshot(snap), given, dtypes, use_mxnet,
                            snap.param_shapes)


def analyze_document(doc: GraphDocument, given: Mapping[str, Shape],
                     dtypes: Mapping[str, str] | None = None, use_mxnet: bool | None = None,
                     param_shapes: Mapping[str, Shape] | None = None) -> AnalysisResult:
    """:func:`analyze` on a document only the caller holds (no copy is made)."""
    if param_shapes is None:
        param_shapes = doc.param_shapes()
    result = shape_infer.infer_document(doc, given, dtypes, param_shapes, doc.revision,
                                        use_mxnet)
    return AnalysisResult(result, compute(doc, result))


def human_count(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n:.0f}"


def human_bytes(n: float) -> str:
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n:.0f} B"
