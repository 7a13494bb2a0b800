"""Shared by the ONNX tests: a graph exported with the check, its agreement asserted,
and MXNet's own inference forward of it."""
from __future__ import annotations

import mxnet as mx

from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph.document import GraphDocument


def export_checked(net, shapes, tmp_path, name: str = "m.onnx",
                   **kwargs) -> onnx_export.ExportReport:
    """``net`` exported to ``tmp_path/name`` and checked against MXNet."""
    doc = GraphDocument.from_json(net.tojson())
    return onnx_export.export(net.tojson(), shapes, str(tmp_path / name), doc.operators(),
                              check=True, **kwargs)


def agrees_with_mxnet(net, shapes, tmp_path, fix: str, **kwargs) -> onnx_export.ExportReport:
    """The export agrees with MXNet, and a fix saying ``fix`` was made (when given)."""
    report = export_checked(net, shapes, tmp_path, **kwargs)
    assert report.check is not None and report.check.agree, report.lines()
    assert [f for f in report.fixes if fix in f] or not fix, report.fixes
    return report


def mxnet_forward(net, feed):
    """MXNet's inference output 0 of ``net`` on ``feed``."""
    exe = net.simple_bind(mx.cpu(), grad_req="null", **{k: v.shape for k, v in feed.items()})
    for k, v in feed.items():
        exe.arg_dict[k][:] = v
    return exe.forward(is_train=False)[0].asnumpy()
