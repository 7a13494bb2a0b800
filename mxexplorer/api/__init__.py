"""The public Python API: open a graph or a checkpoint, infer, plan, render, diff and
export it, from a script or a notebook.

Every name a user may rely on is listed in ``mxexplorer.__all__`` (checked by
``tests/test_api.py``); the modules under ``mxexplorer.core`` may move, these names stay.
The command line prints what these objects return (``to_dict()`` is what ``--json``
prints).  Never imports Qt or pyqtgraph; MXNet only where it must answer (shapes, the
cost of a plan, an ``mx.sym.Symbol``), imported on first use.
"""
from __future__ import annotations

from mxexplorer.api.common import InferenceError, ShapeMap, ShapesMissing, as_shapes, write_text
from mxexplorer.api.graph import Graph, diff, example, load, open
from mxexplorer.api.picture import NOTEBOOK_BLOCKS_ABOVE, NOTEBOOK_DOT_SECONDS, Picture, draw
from mxexplorer.api.plan import PlanReport
from mxexplorer.api.results import Diff, Inference

__all__ = ["NOTEBOOK_BLOCKS_ABOVE", "NOTEBOOK_DOT_SECONDS", "Diff", "Graph", "Inference",
           "InferenceError", "Picture", "PlanReport", "ShapeMap", "ShapesMissing",
           "as_shapes", "diff", "draw", "example", "load", "open", "write_text"]
