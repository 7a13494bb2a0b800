"""The converters: MXNet 1.9.1's own (``mxnet.onnx``), with ``onnx.mapping`` provided
where the onnx package lost it, weights written as raw bytes, and converters of our own
for ops MXNet's lack, registered beside its own (each checked against MXNet's forward in
tests/core/convert/test_onnx_heads.py, test_onnx_seqops.py, test_onnx_multibox.py and
test_onnx_boxnms.py):

* ``SoftmaxActivation``: ``channel`` is Softmax over axis 1, ``instance`` over the last;
* ``softmax`` marked by the graph pass as a SoftmaxOutput over every axis but the
  first: Flatten, Softmax, Reshape back (otherwise MXNet's own converter);
* ``_image_to_tensor``: HWC (or NHWC) to CHW, as float divided by 255;
* ``_image_normalize``: ``(x - mean) / std`` per channel, CHW or NCHW;
* ``erf``: ONNX's Erf (BERT's GELU);
* ``SequenceLast``: the last step (Gather at -1), or each batch entry's step at its
  length less one (GatherND over the batch, the sequence axis moved second);
* ``L2Normalization``: ``x / sqrt(sum(x^2) + eps)`` over every axis but the batch
  (``instance``), the channels (``channel``) or the spatial axes (``spatial``); MXNet's
  own converts only ``channel``, and without eps;
* ``_contrib_MultiBoxDetection``: SSD's box decoding, sort and NMS, row for row as
  MXNet's CPU kernel writes them (TopK, NonMaxSuppression, ScatterND);
* ``_contrib_box_nms``: filter, sort, NMS (per class too) and format as MXNet's CPU
  kernel does; MXNet's own suppresses across classes, refuses ``background_id``, and
  is replaced at every opset.

Ops the graph passes of :mod:`onnx_fixes` rewrite before conversion (training heads,
constants) are listed in ``REWRITTEN``.  Must not import Qt.
"""
from __future__ import annotations

import ast
import contextlib
import types
from typing import Any, Callable, Iterator, Sequence

from mxexplorer.core.convert.onnx_fixes import FLATTENED
from mxexplorer.core.graph import opinfo
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
FLOAT, INT64 = 1, 7             # onnx.TensorProto.FLOAT, INT64


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


def _bilinear(mxnet_own: Callable[..., Any]) -> Callable[..., Any]:
    """MXNet's BilinearResize2D converter, which writes ``align_corners`` sampling
    whatever the attribute says; with ``align_corners=False`` MXNet samples at
    ``(dst + 0.5) * scale - 0.5``, clamped at 0: ONNX's ``pytorch_half_pixel``."""
    def convert(node: dict[str, Any], **kwargs: Any) -> Any:
        from onnx import helper

        nodes = mxnet_own(node, **kwargs)
        if str(node.get("attrs", {}).get("align_corners", "True")).lower() in ("false", "0"):
            for made in nodes:
                if getattr(made, "op_type", None) == "Resize":
                    for attr in made.attribute:
                        if attr.name == "coordinate_transformation_mode":
                            attr.CopyFrom(helper.make_attribute(attr.name,
                                                                "pytorch_half_pixel"))
        return nodes

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


def _erf(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    from onnx import helper

    name, inputs, _ = _io(node, kwargs)
    return [helper.make_node("Erf", inputs[:1], [name], name=name)]


def _sequence_last(rank: Rank) -> Callable[..., list[Any]]:
    """``data[len[b] - 1, b]`` (axis 0) or ``data[b, len[b] - 1]`` (axis 1), the
    length truncated to an integer as MXNet casts it; without lengths, the last step."""
    def convert(node: dict[str, Any], **kwargs: Any) -> list[Any]:
        import numpy as np
        from onnx import helper

        name, inputs, attrs = _io(node, kwargs)
        axis = opinfo.int_attr(attrs, "axis", 0)
        if axis not in (0, 1):
            raise UserError(f"SequenceLast '{name}': axis {axis} (MXNet takes 0 or 1)")
        if not opinfo.flag(attrs, "use_sequence_length"):
            last = _constant(kwargs, f"{name}__last", np.array(-1, "int64"))
            return [helper.make_node("Gather", [inputs[0], last], [name], axis=axis,
                                     name=name)]
        nodes, data = [], inputs[0]
        if axis == 0:                  # batch first, then the steps
            ndim = rank(name)
            if ndim is None:
                raise UserError(f"SequenceLast '{name}': the rank of its data is unknown")
            data = f"{name}__batch_first"
            nodes.append(helper.make_node("Transpose", inputs[:1], [data],
                                          perm=[1, 0, *range(2, ndim)], name=data))
        length, step, index = f"{name}__length", f"{name}__step", f"{name}__index"
        one = _constant(kwargs, f"{name}__one", np.array(1, "int64"))
        column = _constant(kwargs, f"{name}__column", np.array([-1, 1], "int64"))
        return nodes + [
            helper.make_node("Cast", inputs[1:2], [length], to=INT64, name=length),
            helper.make_node("Sub", [length, one], [step], name=step),
            helper.make_node("Reshape", [step, column], [index], name=index),
            helper.make_node("GatherND", [data, index], [name], batch_dims=1, name=name)]
    return convert


def _l2_normalization(rank: Rank) -> Callable[..., list[Any]]:
    """``x / sqrt(sum(x^2) + eps)``, the sum over the mode's axes (kept), as MXNet
    computes it in every mode."""
    def convert(node: dict[str, Any], **kwargs: Any) -> list[Any]:
        import numpy as np
        from onnx import helper

        name, inputs, attrs = _io(node, kwargs)
        mode, ndim = str(attrs.get("mode", "instance")), rank(name)
        if ndim is None:
            raise UserError(f"L2Normalization '{name}': the rank of its data is unknown")
        axes = {"instance": list(range(1, ndim)), "channel": [1],
                "spatial": list(range(2, ndim))}.get(mode)
        if axes is None:
            raise UserError(f"L2Normalization '{name}': unknown mode '{mode}'")
        eps = _constant(kwargs, f"{name}__eps",
                        np.array(_floats(attrs.get("eps", "1e-10"))[0], "float32"))
        squares, padded, norm = f"{name}__squares", f"{name}__padded", f"{name}__norm"
        return [helper.make_node("ReduceSumSquare", inputs[:1], [squares], axes=axes,
                                 keepdims=1, name=squares),
                helper.make_node("Add", [squares, eps], [padded], name=padded),
                helper.make_node("Sqrt", [padded], [norm], name=norm),
                helper.make_node("Div", [inputs[0], norm], [name], name=name)]
    return convert


def _flag(attrs: dict[str, Any], key: str, default: bool) -> bool:
    return str(attrs.get(key, default)).lower() in ("true", "1")


class _Nodes:
    """ONNX nodes named ``{name}__{what}`` (the last one ``name``), and constants named
    in turn, each value once."""

    def __init__(self, name: str, kwargs: dict[str, Any]):
        self.name, self.kwargs = name, kwargs
        self.nodes: list[Any] = []
        self._consts: dict[tuple[str, str], str] = {}

    def __call__(self, op: str, inputs: Sequence[str], what: str, **attrs: Any) -> str:
        from onnx import helper

        out = f"{self.name}__{what}" if what else self.name
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=out, **attrs))
        return out

    def last(self, op: str, inputs: Sequence[str]) -> list[Any]:
        """The nodes, the last one ``op`` of output ``{name}0``: the first output of an op
        that has hidden ones (MXNet's graph names it so)."""
        from onnx import helper

        self.nodes.append(helper.make_node(op, list(inputs), [f"{self.name}0"],
                                           name=self.name))
        return self.nodes

    def const(self, value: Any, dtype: str = "float32") -> str:
        import numpy as np

        array = np.array(value, dtype)
        key = (dtype, repr(array.tolist()) + str(array.shape))
        if key not in self._consts:
            self._consts[key] = _constant(self.kwargs, f"{self.name}__k{len(self._consts)}",
                                          array)
        return self._consts[key]

    def ints(self, *values: int) -> str:
        return self.const(list(values), "int64")

    def columns(self, data: str, start: int, stop: int, what: str) -> str:
        """``data[..., start:stop]``."""
        return self("Slice", [data, self.ints(start), self.ints(stop), self.ints(-1)], what)

    def outputs(self, op: str, inputs: Sequence[str], what: str, count: int,
                **attrs: Any) -> list[str]:
        """A node of ``count`` outputs, named ``{name}__{what}0``, ``...1``, ..."""
        from onnx import helper

        outs = [f"{self.name}__{what}{k}" for k in range(count)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=f"{self.name}__{what}",
                                           **attrs))
        return outs

    def topk(self, key: str, count: str, what: str) -> tuple[str, str]:
        """The ``count`` largest of ``key`` down its axis 1 and their indices (equal
        values in index order)."""
        values, indices = self.outputs("TopK", [key, count], what, 2, axis=1)
        return values, indices

    def split(self, data: str, what: str) -> list[str]:
        """The last axis (of 4) in 4 pieces, each keeping the axis."""
        return self.outputs("Split", [data], what, 4, axis=-1)

    def nms(self, boxes: str, kept: str, threshold: Any, groups: str | None = None) -> str:
        """(N, A) booleans: the rows of ``boxes`` (N, A, 4), sorted by score, that a
        greedy NMS of the ``kept`` (N, A) ones keeps, suppressing a box that overlaps a
        better one by more than ``threshold``; among the rows of each group only when
        ``groups`` (N, G, A) marks them.  NonMaxSuppression is given scores falling by
        place (its own sort ignores ties), zero (left out) for the others; it also
        orders each box's corners."""
        const, ints = self.const, self.ints
        shape = self("Shape", [kept], "nmsshape")
        count = self("Reshape", [self("Slice", [shape, ints(1), ints(2)], "nmscount1"),
                                 ints()], "nmscount")
        count_f = self("Cast", [count], "nmscountf", to=FLOAT)
        place = self("Range", [const(0.0), count_f, const(1.0)], "nmsplace")
        falling = self("Where", [self("Reshape", [kept, ints(0, 1, -1)], "nmskept"),
                                 self("Sub", [count_f, place], "nmsrank"), const(0.0)],
                       "falling")                                               # (N, 1, A)
        if groups is not None:
            falling = self("Where", [groups, falling, const(0.0)], "pergroup")
        chosen = self("NonMaxSuppression", [boxes, falling, count, const(threshold),
                                            const(0.5)], "nms")                # (K, 3)
        ones = self("ConstantOfShape", [self("Slice", [self("Shape", [chosen], "kshape"),
                                                       ints(0), ints(1)], "k")],
                    "ones", value=_tensor(1.0))
        survived = self("ScatterND", [
            self("ConstantOfShape", [shape], "zeros", value=_tensor(0.0)),
            self("Gather", [chosen, ints(0, 2)], "where", axis=1), ones], "survived")
        return self("Greater", [survived, const(0.5)], "alive")


def _multibox_detection(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """MXNet 1.9.1's CPU kernel, row for row: (N, A, 6) rows [class, score, xmin, ymin,
    xmax, ymax].  Per anchor: the best foreground class (the first of equal ones), its
    score (valid from ``threshold``), the box decoded from the anchor.  Out come the
    valid rows sorted by score (equal scores in anchor order: TopK's tiebreak), the first
    ``nms_topk`` of them through a greedy NMS (per class, or across classes with
    ``force_suppress``) that sets a suppressed row's class to -1; the valid rows past
    ``nms_topk`` are the valid rows at those places in anchor order, class -1 (the
    kernel marks them before it sorts); then rows of -1.  Without NMS (``nms_threshold``
    outside (0, 1]) the valid rows stay in anchor order.  NonMaxSuppression is given the
    sorted boxes with scores falling by place (its own order ignores ties) and the
    threshold one float below MXNet's (it suppresses above the IoU, MXNet from it; it
    also orders each box's corners, which decoded boxes of ordered anchors already are).
    ``background_id`` is ignored, as the kernel ignores it (class 0 is the background)."""
    import numpy as np

    name, (prob, loc, anchors), attrs = _io(node, kwargs)
    make = _Nodes(name, kwargs)
    const, ints = make.const, make.ints
    var = _floats(attrs.get("variances", "(0.1, 0.1, 0.2, 0.2)"))
    nms = np.float32(attrs.get("nms_threshold", 0.5))             # MXNet's float
    topk = int(attrs.get("nms_topk", -1))

    # per anchor: the best foreground class and its score, valid from the threshold
    fore = make("Slice", [prob, ints(1), ints(2 ** 62), ints(1)], "fore")
    score = make("ReduceMax", [fore], "score", axes=[1], keepdims=0)            # (N, A)
    cls = make("Cast", [make("ArgMax", [fore], "argmax", axis=1, keepdims=0)], "cls",
               to=FLOAT)
    valid = make("And", [make("Greater", [score, const(-1.0)], "above"),
                         make("GreaterOrEqual", [score, const(
                             float(attrs.get("threshold", 0.01)))], "enough")], "valid")
    ident = make("Where", [valid, cls, const(-1.0)], "id")

    # the box: the anchor's centre moved, its size scaled, by the prediction
    al, at, ar, ab = make.split(make("Gather", [anchors, const(0, "int64")], "anchor",
                                     axis=0), "a")                               # (A, 1)
    px, py, pw, ph = make.split(make("Reshape", [loc, ints(0, -1, 4)], "deltas"), "p")
    edges = []
    for lo, hi, p, s, k, axis in ((al, ar, px, pw, 0, "x"), (at, ab, py, ph, 1, "y")):
        size = make("Sub", [hi, lo], f"{axis}size")
        mid = make("Div", [make("Add", [lo, hi], f"{axis}sum"), const(2.0)], f"{axis}mid")
        moved = make("Mul", [make("Mul", [p, const(var[k])], f"{axis}var"), size],
                     f"{axis}moved")
        centre = make("Add", [moved, mid], f"{axis}centre")
        scale = make("Exp", [make("Mul", [s, const(var[k + 2])], f"{axis}svar")],
                     f"{axis}scale")
        extent = make("Div", [make("Mul", [scale, size], f"{axis}ext2"), const(2.0)],
                      f"{axis}ext")
        edges.append((make("Sub", [centre, extent], f"{axis}min"),
                      make("Add", [centre, extent], f"{axis}max")))
    box = [edges[0][0], edges[1][0], edges[0][1], edges[1][1]]
    if _flag(attrs, "clip", True):
        box = [make("Clip", [b, const(0.0), const(1.0)], f"clip{k}") for k, b in enumerate(box)]
    rows = make("Concat", [make("Reshape", [c, ints(0, -1, 1)], f"col{k}")
                           for k, c in enumerate([ident, score])] + box, "rows", axis=2)

    # the valid rows in anchor order, and all rows by score (the invalid ones last)
    shape = make("Shape", [score], "shape")
    count = make("Slice", [shape, ints(1), ints(2)], "count")                   # [A]
    count_f = make("Cast", [make("Reshape", [count, ints()], "count0")], "countf", to=FLOAT)
    place = make("Range", [const(0.0), count_f, const(1.0)], "place")          # (A,)
    neg = make("Neg", [place], "neg")
    first = make("Where", [valid, neg, make("Sub", [neg, count_f], "later")], "firstkey")
    skey = make("Where", [valid, score, const(-np.inf)], "scorekey")
    order, ranking = make.topk(first, count, "order")[1], make.topk(skey, count, "ranking")[1]
    in_order, ranked = (make("GatherND", [rows, make("Reshape", [idx, ints(0, -1, 1)],
                                                     f"{what}3")], what, batch_dims=1)
                        for idx, what in ((order, "inorder"), (ranking, "ranked")))
    valid_place = make("GreaterOrEqual", [make.columns(in_order, 0, 1, "ocls"),
                                          const(0.0)], "validplace")            # (N, A, 1)
    if not 0 < nms <= 1:
        make("Where", [valid_place, in_order, const(-1.0)], "")
        return make.nodes
    unmarked = make("Concat", [make("Expand", [const([[[-1.0]]]), make(
        "Shape", [valid_place], "vshape")], "minus1"), make.columns(in_order, 1, 6, "ovals")],
        "unmarked", axis=2)
    passed = make("Where", [valid_place, unmarked, const(-1.0)], "passed")
    kept = valid_place
    if topk > 0:
        kept = make("And", [valid_place, make("Less", [make("Reshape", [place, ints(-1, 1)],
                                                            "placecol"), const(float(topk))],
                                              "intopk")], "kept")

    # NMS of the first rows, per class unless forced
    mine = None
    if not _flag(attrs, "force_suppress", False):
        classes = make("Sub", [make("Slice", [make("Shape", [prob], "pshape"), ints(1),
                                              ints(2)], "classes1"), ints(1)], "fg")
        mine = make("Equal", [
            make("Reshape", [make.columns(ranked, 0, 1, "rcls"), ints(0, 1, -1)], "rcls3"),
            make("Reshape", [make("Range", [const(0.0), make("Cast", [make(
                "Reshape", [classes, ints()], "fg0")], "fgf", to=FLOAT), const(1.0)],
                "classes"), ints(1, -1, 1)], "classes3")], "mine")            # (N, C, A)
    alive = make.nms(make.columns(ranked, 2, 6, "boxes"),
                     make("Reshape", [kept, ints(0, -1)], "kept2"),
                     np.nextafter(nms, np.float32(0)), mine)                   # (N, A)
    marked = make("Concat", [make("Where", [make("Reshape", [alive, ints(0, -1, 1)],
                                                 "alive3"),
                                            make.columns(ranked, 0, 1, "rcls2"),
                                            const(-1.0)], "newcls"),
                             make.columns(ranked, 1, 6, "rvals")], "marked", axis=2)
    make("Where", [make("Reshape", [kept, ints(0, -1, 1)], "kept3b"), marked, passed], "")
    return make.nodes


def _box_nms(node: dict[str, Any], **kwargs: Any) -> list[Any]:
    """MXNet 1.9.1's CPU kernel, row for row, over the last two axes (N rows of K
    values; the axes before them are batches).  The valid rows (score above
    ``valid_thresh``; with ``id_index``, class not ``background_id``) sorted by score,
    equal scores in row order (TopK's tiebreak); the first ``topk`` of them through a
    greedy NMS (per class, classes compared as whole numbers, when ``id_index`` is given
    and ``force_suppress`` is not: NonMaxSuppression's class axis over the distinct
    classes); the survivors, whole rows, first and in that order, then rows of -1.  MXNet
    suppresses above the IoU threshold, as NonMaxSuppression does; a box with a negative
    side has area 0 and overlaps nothing for MXNet, so its far corner is moved onto the
    near one before NonMaxSuppression (which would swap them).  An ``out_format`` other
    than ``in_format`` converts the output rows whose first coordinate is not negative
    (the kernel's test for a row of -1); ``topk=0`` returns the rows unchanged."""
    import numpy as np

    name, (data,), attrs = _io(node, kwargs)
    make = _Nodes(name, kwargs)
    const, ints = make.const, make.ints
    topk = int(attrs.get("topk", -1))
    if topk == 0:
        return make.last("Identity", [data])
    threshold = np.float32(attrs.get("overlap_thresh", 0.5))          # MXNet's float
    if threshold < 0:
        raise UserError(f"box_nms '{name}': overlap_thresh {threshold} below 0 suppresses "
                        "boxes that do not overlap, which ONNX's NonMaxSuppression cannot")
    first, score_at, id_at = (int(attrs.get(k, d)) for k, d in (
        ("coord_start", 2), ("score_index", 1), ("id_index", -1)))
    centre = attrs.get("in_format", "corner") == "center"

    # the rows as (B, N, K), the valid ones by score, the first topk of them
    shape = make("Shape", [data], "shape")
    rows = make("Reshape", [data, make("Concat", [ints(-1), make(
        "Slice", [shape, ints(-2), ints(2 ** 62)], "last2")], "shape3", axis=0)], "rows")
    score = make("Reshape", [make.columns(rows, score_at, score_at + 1, "score3"),
                             ints(0, -1)], "score")                            # (B, N)
    valid = make("Greater", [score, const(float(attrs.get("valid_thresh", 0)))], "enough")
    if id_at >= 0:
        ident = make("Reshape", [make.columns(rows, id_at, id_at + 1, "id3"), ints(0, -1)],
                     "id")
        valid = make("And", [valid, make("Not", [make("Equal", [ident, const(float(
            attrs.get("background_id", -1)))], "background")], "foreground")], "valid")
    count = make("Slice", [make("Shape", [score], "bn"), ints(1), ints(2)], "n")   # [N]
    if topk > 0:
        count = make("Min", [count, ints(topk)], "topk")
    best, order = make.topk(make("Where", [valid, score, const(-np.inf)], "key"), count,
                            "order")                                           # (B, T)
    ranked = make("GatherND", [rows, make("Reshape", [order, ints(0, -1, 1)], "order3")],
                  "ranked", batch_dims=1)                                      # (B, T, K)
    kept = make("Greater", [best, const(-np.inf)], "kept")

    # their boxes as corners, a negative side made 0, and each row's class group
    a, b, c, d = make.split(make.columns(ranked, first, first + 4, "box"), "c")
    if centre:
        half_w = make("Div", [c, const(2.0)], "halfw")
        half_h = make("Div", [d, const(2.0)], "halfh")
        a, b, c, d = (make("Sub", [a, half_w], "left"), make("Sub", [b, half_h], "top"),
                      make("Add", [a, half_w], "right"), make("Add", [b, half_h], "bottom"))
    boxes = make("Concat", [a, b, make("Max", [a, c], "right0"),
                            make("Max", [b, d], "bottom0")], "boxes", axis=2)
    groups = None
    if id_at >= 0 and not _flag(attrs, "force_suppress", False):
        whole = make("Cast", [make.columns(ranked, id_at, id_at + 1, "rid")], "whole",
                     to=INT64)                                                 # (B, T, 1)
        distinct, _, group, _ = make.outputs("Unique", [make("Reshape", [
            whole, ints(-1)], "flat")], "unique", 4, sorted=1)
        group = make("Reshape", [group, make("Shape", [make(
            "Transpose", [whole], "across", perm=[0, 2, 1])], "gshape")], "group")
        classes = make("Range", [const(0, "int64"), make("Reshape", [make(
            "Shape", [distinct], "nclasses1"), ints()], "nclasses"), const(1, "int64")],
            "classes")
        groups = make("Equal", [group, make("Reshape", [classes, ints(1, -1, 1)],
                                            "classes3")], "groups")           # (B, G, T)
    alive = make.nms(boxes, kept, threshold, groups)                          # (B, T)

    # the survivors first, then -1 up to N rows
    tcount = make("Slice", [make("Shape", [alive], "bt"), ints(1), ints(2)], "t")  # [T]
    tcount_f = make("Cast", [make("Reshape", [tcount, ints()], "t0")], "tf", to=FLOAT)
    place = make("Range", [const(0.0), tcount_f, const(1.0)], "place")
    filled, compact = make.topk(make("Where", [alive, make("Sub", [tcount_f, place], "rank"),
                                               const(0.0)], "alivekey"), tcount, "compact")
    out = make("GatherND", [ranked, make("Reshape", [compact, ints(0, -1, 1)], "compact3")],
               "survivors", batch_dims=1)
    out = make("Where", [make("Reshape", [make("Greater", [filled, const(0.5)], "filled"),
                                          ints(0, -1, 1)], "filled3"), out, const(-1.0)],
               "out")
    pads = make("Concat", [ints(0, 0, 0, 0), make("Sub", [make(
        "Slice", [make("Shape", [score], "bn2"), ints(1), ints(2)], "n2"), tcount], "rest"),
        ints(0)], "pads", axis=0)
    out = make("Pad", [out, pads, const(-1.0)], "padded")
    if attrs.get("out_format", "corner") != attrs.get("in_format", "corner"):
        a, b, c, d = make.split(make.columns(out, first, first + 4, "obox"), "o")
        if centre:
            half_w = make("Div", [c, const(2.0)], "ohalfw")
            half_h = make("Div", [d, const(2.0)], "ohalfh")
            new = [make("Sub", [a, half_w], "oleft"), make("Sub", [b, half_h], "otop"),
                   make("Add", [a, half_w], "oright"), make("Add", [b, half_h], "obottom")]
        else:
            new = [make("Div", [make("Add", [a, c], "xsum"), const(2.0)], "x"),
                   make("Div", [make("Add", [b, d], "ysum"), const(2.0)], "y"),
                   make("Sub", [c, a], "w"), make("Sub", [d, b], "h")]
        head = [make.columns(out, 0, first, "head")] if first > 0 else []
        converted = make("Concat", head + new + [make.columns(out, first + 4, 2 ** 62, "tail")],
                         "converted", axis=2)
        out = make("Where", [make("Not", [make("Less", [a, const(0.0)], "negative")], "row"),
                             converted, out], "formatted")
    return make.last("Reshape", [out, shape])


def _tensor(value: float) -> Any:
    from onnx import helper

    return helper.make_tensor("value", FLOAT, [1], [value])


def install(rank: Rank) -> None:
    """Our converters into MXNet's registry (at its lowest opset: the fallback for every
    opset; and in place of MXNet's own at every opset it has one);  ``rank(node name)``
    is the rank of that node's first input."""
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    ours = converters(rank)
    for ops in MXNetGraph.registry_.values():                # MXNet's own at 12 and 13
        for op, wrap in (("softmax", _softmax), ("_contrib_BilinearResize2D", _bilinear)):
            if op in ops and not getattr(ops[op], "_mxexplorer", False):
                ops[op] = wrap(ops[op])
        ops.update({op: convert for op, convert in ours.items() if op in ops})
    MXNetGraph.registry_.setdefault(MIN_OPSET, {}).update(ours)


def converters(rank: Rank) -> dict[str, Callable[..., list[Any]]]:
    """Our converters by op name."""
    return {"SoftmaxActivation": _softmax_activation, "_image_to_tensor": _image_to_tensor(rank),
            "_image_normalize": _image_normalize, "erf": _erf,
            "SequenceLast": _sequence_last(rank), "L2Normalization": _l2_normalization(rank),
            "_contrib_MultiBoxDetection": _multibox_detection, "_contrib_box_nms": _box_nms}
