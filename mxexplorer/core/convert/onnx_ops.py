"""The converters: MXNet 1.9.1's own (``mxnet.onnx``), with ``onnx.mapping`` provided
where the onnx package lost it, weights written as raw bytes, and converters of our own
for ops MXNet's lack, registered beside its own (each checked against MXNet's forward in
tests/core/convert/test_onnx_heads.py):

* ``SoftmaxActivation``: ``channel`` is Softmax over axis 1, ``instance`` over the last;
* ``softmax`` marked by the graph pass as a SoftmaxOutput over every axis but the
  first: Flatten, Softmax, Reshape back (otherwise MXNet's own converter);
* ``_image_to_tensor``: HWC (or NHWC) to CHW, as float divided by 255;
* ``_image_normalize``: ``(x - mean) / std`` per channel, CHW or NCHW;
* ``_contrib_box_nms`` (in place of MXNet's, which suppresses across classes and
  applies ``topk`` after suppression): MXNet's semantics, NonMaxSuppression per class.

Ops the graph passes of :mod:`onnx_fixes` rewrite before conversion (training heads,
constants) are listed in ``REWRITTEN``.  Must not import Qt.
"""
from __future__ import annotations

import ast
import contextlib
import types
from typing import Any, Callable, Iterator, Sequence

from mxexplorer.core.convert.onnx_fixes import FLATTENED
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet

ONNX_PINS = {"onnx": "1.14.1", "onnxruntime": "1.16.3"}
DEFAULT_OPSET = 13
MIN_OPSET = 12
#: ops that never reach a converter: the graph passes give them their inference meaning
REWRITTEN = frozenset({
    "LinearRegressionOutput", "MAERegressionOutput",
    "LogisticRegressionOutput", "SVMOutput", "_contrib_MultiBoxPrior",
    "CTCLoss", "_contrib_CTCLoss", "ctc_loss", "_contrib_ctc_loss"})

Rank = Callable[[str], "int | None"]
FLOAT = 1                       # onnx.TensorProto.FLOAT


def load_onnx() -> Any:
    """``onnx``, with the ``onnx.mapping`` MXNet's converter calls (ONNX 1.19 removed
    it) made from ``onnx.helper`` when missing."""
    import importlib

    try:
        onnx: Any = importlib.import_module("onnx")
        importlib.import_module("onnx.helper")
    except ImportError:
        raise UserError("ONNX export needs the onnx extra: pip install "
                        f"onnx=={ONNX_PINS['onnx']} (see the README)") from None
    if not hasattr(onnx, "mapping"):
        import numpy as np

        codes = [v for v in onnx.TensorProto.DataType.values() if v]
        to_np = {}
        for code in codes:
            try:
                to_np[code] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
            except Exception:  # noqa: BLE001 - types numpy lacks (bfloat16, float8)
                continue
        onnx.mapping = types.SimpleNamespace(
            TENSOR_TYPE_TO_NP_TYPE=to_np,
            NP_TYPE_TO_TENSOR_TYPE={v: k for k, v in reversed(list(to_np.items()))})
    return onnx


def supported_ops(opset: int = DEFAULT_OPSET) -> set[str]:
    """Op names MXNet's converters and ours handle at ``opset`` (MXNet and onnx
    imported)."""
    load_onnx()
    import_mxnet()
    import mxnet.onnx  # noqa: F401 - registers the converters
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    ops: set[str] = set(REWRITTEN) | set(converters(lambda name: None))
    for version in range(opset, MIN_OPSET - 1, -1):
        ops.update(MXNetGraph.registry_.get(version, {}))
    return ops


def fast_weights() -> None:
    """Weights written as raw bytes instead of MXNet's ``make_tensor(vals=...tolist())``:
    protobuf extending a repeated field one Python float at a time took 20 of the 37
    seconds of an ArcFace export (65 M weights); the tensors are the same."""
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    for table in MXNetGraph.registry_.values():
        original = table.get("null")
        if original is None or getattr(original, "_mxexplorer_raw", False):
            continue

        def convert(node: Any, _original: Any = original, **kwargs: Any) -> Any:
            if kwargs.get("is_input") is not False:
                return _original(node, **kwargs)
            import numpy as np
            from onnx import helper, numpy_helper

            name = node["name"]
            array = np.ascontiguousarray(kwargs["weights"][name])
            tensor = numpy_helper.from_array(array, name)
            kwargs["initializer"].append(tensor)
            info = helper.make_tensor_value_info(name, tensor.data_type, array.shape)
            return [info], (array.dtype,)

        convert._mxexplorer_raw = True  # type: ignore[attr-defined]
        table["null"] = convert


class ConverterFailure(Exception):
    """A converter's own exception, with the node it was converting."""

    def __init__(self, name: str, op: str, cause: Exception):
        super().__init__(name, op, cause)
        self.name, self.op, self.cause = name, op, cause


@contextlib.contextmanager
def named_failures() -> Iterator[None]:
    """While MXNet's converter runs, an exception of any converter (MXNet's raise bare
    ones: ``IndexError: list index out of range``) comes out as a
    :class:`ConverterFailure` naming the node and its op; our own UserErrors (which
    name their node) pass as they are."""
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    saved = MXNetGraph.__dict__["convert_layer"]
    inner = MXNetGraph.convert_layer

    def convert_layer(node: Any, **kwargs: Any) -> Any:
        try:
            return inner(node, **kwargs)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - named below, by the caller
            raise ConverterFailure(str(node.get("name", "?")), str(node.get("op", "?")),
                                   exc) from exc

    MXNetGraph.convert_layer = staticmethod(convert_layer)
    try:
        yield
    finally:
        MXNetGraph.convert_layer = saved


def unsupported(op_nodes: Sequence[tuple[int, str, str]], opset: int = DEFAULT_OPSET
                ) -> list[tuple[int, str, str]]:
    """The (node, name, op) of ``op_nodes`` whose op has no converter."""
    have = supported_ops(opset)
    return [n for n in op_nodes if n[2] not in have]


def _io(node: dict[str, Any], kwargs: dict[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    lookup = kwargs["outputs_lookup"]
    return (node["name"], [lookup[i][k].name for i, k, *_ in node["inputs"]],
            node.get("attrs", {}))


def _floats(text: Any) -> list[float]:
    value = ast.literal_eval(str(text))
    return [float(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def _constant(kwargs: dict[str, Any], name: str, value: Any) -> str:
    from onnx import numpy_helper

    kwargs["initializer"].append(numpy_helper.from_array(value, name))
    return name


def _softmax_activation(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """``instance``: over the last axis (MXNet flattens all but the last); ``channel``:
    over axis 1."""
    from onnx import helper

    name, inputs, attrs = _io(node, kwargs)
    if str(attrs.get("mode", "instance")) == "channel":
        if kwargs.get("opset_version", DEFAULT_OPSET) < 13:
            raise UserError(f"SoftmaxActivation '{name}' (mode channel) needs opset 13 or "
                            "more (Softmax over one axis)")
        return [helper.make_node("Softmax", inputs[:1], [name], axis=1, name=name)]
    return [helper.make_node("Softmax", inputs[:1], [name], axis=-1, name=name)]


def _softmax(mxnet_own: Callable[..., Any]) -> Callable[..., Any]:
    """MXNet's softmax converter, except for a SoftmaxOutput the graph pass marked as
    taken over every axis but the first: Flatten, Softmax, Reshape back."""
    def convert(node: dict[str, Any], **kwargs: Any) -> Any:
        from onnx import helper

        name, inputs, attrs = _io(node, kwargs)
        if FLATTENED not in attrs:
            return mxnet_own(node, **kwargs)
        shape, flat, soft = f"{name}__shape", f"{name}__flat", f"{name}__softmax"
        return [helper.make_node("Shape", inputs[:1], [shape], name=shape),
                helper.make_node("Flatten", inputs[:1], [flat], axis=1, name=flat),
                helper.make_node("Softmax", [flat], [soft], axis=1, name=soft),
                helper.make_node("Reshape", [soft, shape], [name], name=name)]

    convert._mxexplorer = True  # type: ignore[attr-defined]
    return convert


def _image_to_tensor(rank: Rank) -> Callable[..., list[Any]]:
    def convert(node: dict[str, Any], **kwargs: Any) -> list[Any]:
        import numpy as np
        from onnx import helper

        name, inputs, _ = _io(node, kwargs)
        perm = [0, 3, 1, 2] if rank(name) == 4 else [2, 0, 1]
        cast, scale = f"{name}__float", _constant(kwargs, f"{name}__255",
                                                  np.array(255.0, "float32"))
        div = f"{name}__scaled"
        return [helper.make_node("Cast", inputs[:1], [cast], to=FLOAT, name=cast),
                helper.make_node("Div", [cast, scale], [div], name=div),
                helper.make_node("Transpose", [div], [name], perm=perm, name=name)]
    return convert


def _image_normalize(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    import numpy as np
    from onnx import helper

    name, inputs, attrs = _io(node, kwargs)
    mean = np.array(_floats(attrs.get("mean", "0")), "float32").reshape(-1, 1, 1)
    std = np.array(_floats(attrs.get("std", "1")), "float32").reshape(-1, 1, 1)
    centred = f"{name}__centred"
    return [helper.make_node("Sub", [inputs[0], _constant(kwargs, f"{name}__mean", mean)],
                             [centred], name=centred),
            helper.make_node("Div", [centred, _constant(kwargs, f"{name}__std", std)],
                             [name], name=name)]


def _box_nms(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """MXNet's ``box_nms`` (src/operator/contrib/bounding_box-inl.h): rows whose score
    is above ``valid_thresh`` (and whose class is not ``background_id``), the ``topk``
    best of them taken *before* suppression, suppressed greedily by IoU above
    ``overlap_thresh`` within a class (``id_index``, unless ``force_suppress``); the
    kept rows first in score order, every other row -1.  ONNX NonMaxSuppression does
    the suppression, one ONNX class per distinct MXNet class id among the candidates,
    on corners made to overlap nothing where MXNet finds no area."""
    import numpy as np
    from onnx import helper

    from mxexplorer.core.graph import opinfo

    name, inputs, attrs = _io(node, kwargs)
    fmt = str(attrs.get("in_format", "corner"))
    if fmt != str(attrs.get("out_format", "corner")):
        raise UserError(f"box_nms '{name}': in_format {fmt} and out_format "
                        f"{attrs.get('out_format')} differ (not converted)")
    score, start = opinfo.int_attr(attrs, "score_index", 1), \
        opinfo.int_attr(attrs, "coord_start", 2)
    cls, topk = opinfo.int_attr(attrs, "id_index", -1), opinfo.int_attr(attrs, "topk", -1)
    per_class = cls >= 0 and not opinfo.flag(attrs, "force_suppress")
    nodes: list[Any] = []
    made: set[str] = set()

    def op(kind: str, ins: list[str], out: str, **at: Any) -> str:
        nodes.append(helper.make_node(kind, ins, [f"{name}__{out}"], name=f"{name}__{out}",
                                      **at))
        return f"{name}__{out}"

    def const(key: str, value: Any, dtype: str = "int64") -> str:
        if f"{name}__c_{key}" not in made:
            made.add(_constant(kwargs, f"{name}__c_{key}", np.array(value, dtype)))
        return f"{name}__c_{key}"

    def unsqueeze(x: str, axis: int, out: str) -> str:
        if kwargs.get("opset_version", DEFAULT_OPSET) >= 13:
            return op("Unsqueeze", [x, const(f"axis{axis}", [axis])], out)
        return op("Unsqueeze", [x], out, axes=[axis])

    def column(table: str, k: int, out: str) -> str:           # [B, n, W] -> [B, n]
        return op("Gather", [table, const(f"col{k}", k)], out, axis=2)

    shape = op("Shape", inputs[:1], "shape")
    last2 = op("Slice", [shape, const("m2", [-2]), const("big", [2 ** 62])], "last2")
    data = op("Reshape", [inputs[0], op("Concat", [const("m1", [-1]), last2], "shape3",
                                        axis=0)], "data")
    scores = column(data, score, "scores")
    valid = op("Greater", [scores, const("valid", float(attrs.get("valid_thresh", 0)),
                                         "float32")], "valid")
    if cls >= 0:                              # compared as floats, as MXNet does
        background = const("bg", float(opinfo.int_attr(attrs, "background_id", -1)),
                           "float32")
        valid = op("And", [valid, op("Not", [op("Equal", [column(data, cls, "ids"),
                                                          background], "is_bg")],
                                     "not_bg")], "valid_class")
    inf = const("inf", -np.inf, "float32")
    ranked = op("Where", [valid, scores, inf], "ranked")
    count = op("Gather", [shape, const("m2s", -2)], "n")
    k = unsqueeze(count, 0, "k_all") if topk < 0 else \
        op("Min", [unsqueeze(count, 0, "n1"), const("topk", [topk])], "k_top")
    nodes.append(helper.make_node("TopK", [ranked, k], [f"{name}__best", f"{name}__order"],
                                  axis=1, largest=1, sorted=1, name=f"{name}__topk"))
    best, order = f"{name}__best", f"{name}__order"
    rows = op("GatherElements", [data, op("Expand", [
        unsqueeze(order, 2, "order3"),
        op("Concat", [op("Shape", [order], "order_shape"), op("Slice", [
            shape, const("m1b", [-1]), const("big2", [2 ** 62])], "width")], "rows_shape",
            axis=0)], "index")], "rows", axis=1)                      # [B, k, W] best first
    boxes = op("Slice", [rows, const("b0", [start]), const("b1", [start + 4]),
                         const("ax2", [2])], "boxes")
    if fmt == "corner":       # x2 < x1 or y2 < y1: no area for MXNet, so no overlap;
        low = op("Slice", [boxes, const("c0", [0]), const("c2", [2]), const("ax2", [2])],
                 "corner1")   # onnxruntime would swap them: no area for it either
        high = op("Max", [low, op("Slice", [boxes, const("c2", [2]), const("c4", [4]),
                                            const("ax2", [2])], "corner2_given")], "corner2")
        boxes = op("Concat", [low, high], "areas_as_mxnet", axis=2)
    if per_class:               # classes compared as ints (MXNet casts), numbered 0..C-1
        ids = op("Cast", [column(rows, cls, "row_ids_f")], "row_ids", to=7)
        flat = op("Reshape", [ids, const("m1c", [-1])], "row_ids_flat")
        nodes.append(helper.make_node(
            "Unique", [flat], [f"{name}__{x}" for x in ("distinct", "first", "class", "counts")],
            name=f"{name}__unique", sorted=1))
        numbered = op("Reshape", [f"{name}__class", op("Shape", [ids], "ids_shape")],
                      "classes")
        labels = op("Reshape", [op("Range", [const("zero", 0), op("Gather", [op(
            "Shape", [f"{name}__distinct"], "distinct_shape"), const("zero_s", 0)], "span"),
            const("one_s", 1)], "range"), const("col_shape", [1, -1, 1])], "labels")
        mine = op("Equal", [unsqueeze(numbered, 1, "classes3"), labels],
                  "mine")                                             # [B, C, k]
        per = op("Where", [mine, unsqueeze(best, 1, "best3"), inf], "per")
    else:
        per = unsqueeze(best, 1, "per")                   # [B, 1, k]
    kept = op("NonMaxSuppression", [
        boxes, per, op("Cast", [k], "k_max", to=7),
        const("iou", [float(attrs.get("overlap_thresh", 0.5))], "float32"),
        const("min_score", [-3.0e38], "float32")], "kept",
        center_point_box=int(fmt == "center"))                        # [S, (b, c, j)]
    where = op("Gather", [kept, const("bj", [0, 2])], "where", axis=1)   # [S, 2]
    zeros = op("ConstantOfShape", [op("Shape", [best], "best_shape")], "zeros",
               value=helper.make_tensor("zero", 7, [1], [0]))
    ones = op("Expand", [const("one_v", [1]), op("Slice", [
        op("Shape", [kept], "kept_shape"), const("zero_v", [0]), const("one_e", [1])],
        "s")], "ones")
    keep = op("ScatterND", [zeros, where, ones], "keep")             # [B, k]: 1 if kept
    place = op("Sub", [op("CumSum", [keep, const("one_ax", 1)], "cum"), const("one_b", 1)],
               "place")                                               # rank among kept
    target = op("Concat", [op("Gather", [where, const("b_col", [0])], "b", axis=1),
                           unsqueeze(op("GatherND", [place, where], "slot"), 1, "slot2")],
                "target", axis=1)
    out = op("ScatterND", [op("Expand", [const("minus", -1.0, "float32"), op(
        "Shape", [data], "data_shape")], "blank"), target,
        op("GatherND", [rows, where], "picked")], "out")
    nodes.append(helper.make_node("Reshape", [out, shape], [f"{name}0"], name=name))
    return nodes


def install(rank: Rank) -> None:
    """Our converters into MXNet's registry (at its lowest opset: the fallback for every
    opset); ``rank(node name)`` is the rank of that node's first input."""
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    for version in range(MIN_OPSET, DEFAULT_OPSET + 1):       # MXNet's own at 12 and 13
        ops = MXNetGraph.registry_.get(version, {})
        if "softmax" in ops and not getattr(ops["softmax"], "_mxexplorer", False):
            ops["softmax"] = _softmax(ops["softmax"])
        if "_contrib_box_nms" in ops:                         # MXNet's, replaced
            ops["_contrib_box_nms"] = _box_nms
    MXNetGraph.registry_.setdefault(MIN_OPSET, {}).update(converters(rank))


def converters(rank: Rank) -> dict[str, Callable[..., list[Any]]]:
    """Our converters by op name."""
    return {"SoftmaxActivation": _softmax_activation, "_image_to_tensor": _image_to_tensor(rank),
            "_image_normalize": _image_normalize, "_contrib_box_nms": _box_nms}
