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
* ``_contrib_MultiBoxDetection`` (in :mod:`onnx_detection`): SSD's box decoding, sort
  and NMS, row for row as MXNet's CPU kernel writes them (TopK, NonMaxSuppression, ScatterND);
* ``_contrib_box_nms``: filter, sort, NMS (per class too) and format as MXNet's CPU
  kernel does; MXNet's own suppresses across classes, refuses ``background_id``, and
  is replaced at every opset.

Ops the graph passes of :mod:`onnx_fixes` rewrite before conversion (training heads,
constants) are listed in ``REWRITTEN``.  Must not import Qt.
"""
from __future__ import annotations

import contextlib
import types
from typing import Any, Callable, Iterator, Sequence

from mxexplorer.core.convert.onnx_detection import box_nms, multibox_detection
from mxexplorer.core.convert.onnx_fixes import FLATTENED
from mxexplorer.core.convert.onnx_nodes import FLOAT, INT64
from mxexplorer.core.convert.onnx_nodes import constant as _constant
from mxexplorer.core.convert.onnx_nodes import floats as _floats
from mxexplorer.core.convert.onnx_nodes import io as _io
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
            "_contrib_MultiBoxDetection": multibox_detection, "_contrib_box_nms": box_nms}
