"""mxexplorer: see inside, fix and fit MXNet 1.x symbol graphs.

The public API (every name in ``__all__``; ``tests/test_api.py`` holds the list)::

    import mxexplorer
    g = mxexplorer.open("resnet-symbol.json")        # or a .params: the checkpoint pair
    g.infer(data=(32, 3, 224, 224)).macs
    plan = g.plan(data=(32, 3, 224, 224))             # MXNet's own MB, with and without
    plan.symbol()                                     # the planned mx.sym.Symbol
    g.render("net.svg"); g.to_onnx("net.onnx", data=(1, 3, 224, 224))
    mxexplorer.diff("a-symbol.json", "b-symbol.json")

``mxexplorer.memonger`` is a drop-in for dmlc's memonger (``search_plan``,
``get_cost``, ``make_mirror_plan``); ``mxexplorer.plan_block`` plans a Gluon
``HybridBlock``.  The names load on first use, so ``import mxexplorer`` (and the
command line and the window, which import it) stay fast; none imports Qt.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:       # what a type checker sees; at run time __getattr__ loads them
    from mxexplorer import memonger as memonger
    from mxexplorer.api import Diff as Diff
    from mxexplorer.api import Graph as Graph
    from mxexplorer.api import Inference as Inference
    from mxexplorer.api import InferenceError as InferenceError
    from mxexplorer.api import Picture as Picture
    from mxexplorer.api import PlanReport as PlanReport
    from mxexplorer.api import ShapesMissing as ShapesMissing
    from mxexplorer.api import diff as diff
    from mxexplorer.api import example as example
    from mxexplorer.api import load as load
    from mxexplorer.api import open as open
    from mxexplorer.core.convert.onnx_export import ExportReport as ExportReport
    from mxexplorer.core.convert.onnx_export import UnsupportedOps as UnsupportedOps
    from mxexplorer.core.runtime.errors import UserError as UserError
    from mxexplorer.gluon import BlockPlan as BlockPlan
    from mxexplorer.gluon import plan_block as plan_block

#: the public names and the module each comes from
_PUBLIC = {
    "open": "mxexplorer.api", "load": "mxexplorer.api", "diff": "mxexplorer.api",
    "example": "mxexplorer.api", "Graph": "mxexplorer.api",
    "Inference": "mxexplorer.api", "InferenceError": "mxexplorer.api",
    "ShapesMissing": "mxexplorer.api",
    "PlanReport": "mxexplorer.api", "Picture": "mxexplorer.api", "Diff": "mxexplorer.api",
    "plan_block": "mxexplorer.gluon", "BlockPlan": "mxexplorer.gluon",
    "UserError": "mxexplorer.core.runtime.errors",
    "ExportReport": "mxexplorer.core.convert.onnx_export",
    "UnsupportedOps": "mxexplorer.core.convert.onnx_export",
}

__all__ = sorted(_PUBLIC) + ["memonger", "__version__"]


def __getattr__(name: str) -> Any:
    """Load a public name (or the ``memonger`` module) on first use (PEP 562)."""
    import importlib

    if name == "memonger":
        return importlib.import_module("mxexplorer.memonger")
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mxexplorer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
