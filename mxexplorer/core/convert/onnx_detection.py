"""SSD's and YOLO's detection outputs on the mx2onnx route: ``_contrib_MultiBoxDetection``
and ``_contrib_box_nms`` are converted by *our* converters (:mod:`onnx.detection_nms`,
row for row as MXNet 1.9.1's CPU kernels write them), called from MXNet's converter
interface: its node and kwargs become an :class:`OpNode` and a :class:`Ctx`, and what
they build comes back as MXNet's converter expects (nodes returned, constants added to
its initializers, the last output named as MXNet names it).  Must not import Qt."""
from __future__ import annotations

from typing import Any, Callable

from mxexplorer.core.convert.onnx import detection_nms
from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx_nodes import io
from mxexplorer.core.ops import engine
from mxexplorer.core.runtime.errors import UserError


def _through_ours(convert: Callable[[Ctx, OpNode], list[str | None]], last: str
                  ) -> Callable[..., list[Any]]:
    """MXNet's converter signature over one of ours; ``last``: the name MXNet's graph
    gives the converted output (``{name}`` or ``{name}0``)."""
    def run(node: dict[str, Any], **kwargs: Any) -> list[Any]:
        name, inputs, attrs = io(node, kwargs)
        try:
            p = engine.parsed(node["op"], attrs)
        except ValueError as exc:
            raise UserError(f"'{name}' ({node['op']}): {exc}") from None
        opset = int(kwargs.get("opset_version", 13))
        if opset < 13:
            raise UserError(f"'{name}' ({node['op']}): its converter writes opset 13 or "
                            "newer (ask for --opset 13)")
        cx = Ctx(opset, prefix=f"{name}/")
        cx.used.update(inputs)
        out = last.format(name=name)
        convert(cx, OpNode(-1, node["op"], name, dict(attrs), p, list(inputs), [], [], [],
                           [], [out, f"{out}__hidden"]))
        kwargs["initializer"].extend(cx.initializers)
        return cx.nodes
    return run


multibox_detection = _through_ours(detection_nms.multibox_detection, "{name}")
box_nms = _through_ours(detection_nms.box_nms, "{name}0")
