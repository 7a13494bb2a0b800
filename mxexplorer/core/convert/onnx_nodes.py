"""Small pieces for writing ONNX converters: a node's name, inputs and attributes in
MXNet's converter calls, constants, and :class:`Nodes`, a builder that names what it
makes after the node it converts.  Must not import Qt."""
from __future__ import annotations

import ast
from typing import Any, Sequence

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


class Nodes:
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
            self._consts[key] = constant(self.kwargs, f"{self.name}__k{len(self._consts)}",
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
                    "ones", value=tensor(1.0))
        survived = self("ScatterND", [
            self("ConstantOfShape", [shape], "zeros", value=tensor(0.0)),
            self("Gather", [chosen, ints(0, 2)], "where", axis=1), ones], "survived")
        return self("Greater", [survived, const(0.5)], "alive")


def tensor(value: float) -> Any:
    from onnx import helper

    return helper.make_tensor("value", FLOAT, [1], [value])
