"""How MXNet binds a graph for training, shared by the benchmark and the profile: which
arguments get a gradient."""
from __future__ import annotations

from typing import Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet, mxnet_errors


def grad_reqs(graph_json: str, shapes: Mapping[str, Shape]) -> dict[str, str]:
    """``grad_req`` for every argument: "null" for the inputs (those given a shape, and
    the data and label variables of the graph), "write" for the weights.  Training
    never needs an input's gradient, and MXNet refuses one for an ``Embedding``'s data.
    """
    inputs = set(shapes)
    try:
        doc = GraphDocument.from_json(graph_json)
        inputs.update(doc.nodes[i].name for i in doc.data_inputs())
    except UserError:
        pass                         # MXNet says what is wrong with it when it loads
    mx = import_mxnet()
    with mxnet_errors("MXNet cannot load the graph"):
        names = mx.sym.load_json(graph_json).list_arguments()
    return {name: "null" if name in inputs else "write" for name in names}
