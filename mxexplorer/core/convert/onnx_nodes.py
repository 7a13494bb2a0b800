"""Small pieces for writing converters in MXNet's converter interface (the mx2onnx
route): a node's name, inputs and attributes in its calls, float lists, constants.
Must not import Qt."""
from __future__ import annotations

import ast
from typing import Any

FLOAT, INT64 = 1, 7             # onnx.TensorProto.FLOAT, INT64


def io(node: dict[str, Any], kwargs: dict[str, Any]) -> tuple[str, list[str], dict[str, Any]]:
    lookup = kwargs["outputs_lookup"]
    return (node["name"], [lookup[i][k].name for i, k, *_ in node["inputs"]],
            node.get("attrs", {}))


def floats(text: Any) -> list[float]:
    value = ast.literal_eval(str(text))
    return [float(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def constant(kwargs: dict[str, Any], name: str, value: Any) -> str:
    from onnx import numpy_helper

    kwargs["initializer"].append(numpy_helper.from_array(value, name))
    return name
