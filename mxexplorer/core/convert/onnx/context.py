"""What a converter works with: :class:`OpNode` (one MXNet operator, its attributes read
by the engine's parser, its inputs' ONNX names, shapes and dtypes from the engine) and
:class:`Ctx` (the model being built: nodes, initializers, fresh names, the opset).

A converter is ``f(cx, node) -> list[str | None]``: the ONNX names of the node's outputs
in MXNet's order (None for an output inference does not make, such as BatchNorm's batch
mean).  It names its last node's outputs ``node.outputs[k]`` (MXNet's own entry names)
so the first-differing-node search finds them; anything it adds in between takes
:meth:`Ctx.fresh` names.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from mxexplorer.core.runtime.errors import UserError

Shape = tuple[int, ...]

#: numpy dtype name -> onnx.TensorProto data type
ONNX_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6,
              "int64": 7, "bool": 9, "float16": 10, "float64": 11, "uint32": 12,
              "uint64": 13, "bfloat16": 16}


def onnx_type(dtype: str | None) -> int:
    """The ONNX element type of a numpy dtype name (float32 when unknown)."""
    return ONNX_TYPES.get(dtype or "float32", 1)


class NoOnnxMeaning(UserError):
    """An operator that has no ONNX meaning, or a use of one (an attribute value) that
    ONNX cannot express: the node, its op and why, in one line."""

    def __init__(self, name: str, op: str, why: str):
        self.name, self.op, self.why = name, op, why
        super().__init__(f"'{name}' ({op}): {why}")

    def __reduce__(self) -> tuple[Any, ...]:          # crosses from the child process
        return (NoOnnxMeaning, (self.name, self.op, self.why))


@dataclass
class OpNode:
    """One MXNet operator as a converter sees it."""

    id: int
    op: str
    name: str
    attrs: dict[str, str]               # as the file wrote them
    p: dict[str, Any]                   # read by the engine's parser, defaults filled in
    inputs: list[str]                   # ONNX names of its inputs
    in_shapes: list[Shape]
    in_dtypes: list[str]
    out_shapes: list[Shape]
    out_dtypes: list[str]
    outputs: list[str]                  # the names its outputs take (MXNet's entries)
    #: names of the nodes feeding the inputs the converter does not read (a training
    #: head's label)
    unread: list[str] = field(default_factory=list)

    def refuse(self, why: str) -> NoOnnxMeaning:
        return NoOnnxMeaning(self.name, self.op, why)

    def rank(self, k: int = 0) -> int:
        return len(self.in_shapes[k])


@dataclass
class Ctx:
    """The model under construction."""

    opset: int
    nodes: list[Any] = field(default_factory=list)
    initializers: list[Any] = field(default_factory=list)
    #: values of the initializers and folded constants, by name (for converters that
    #: read a weight: PReLU's slopes, a Reshape's target)
    values: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    _consts: dict[tuple[str, str, bytes], str] = field(default_factory=dict)
    _count: int = 0
    #: put before every fresh name (a Ctx per node of another converter's graph)
    prefix: str = ""

    # ------------------------------------------------------------------ names
    def claim(self, name: str) -> str:
        """``name`` if no tensor has it yet, else ``name__2``, ``name__3`` ..."""
        out, k = name, 1
        while out in self.used:
            k += 1
            out = f"{name}__{k}"
        self.used.add(out)
        return out

    def unused(self, name: str) -> str:
        """``name``, or ``name__dup2``, ``name__dup3`` ...: a name no tensor has, not
        yet taken (a converter claims it when it names its output so)."""
        out, k = name, 1
        while out in self.used:
            k += 1
            out = f"{name}__dup{k}"
        return out

    def fresh(self, hint: str) -> str:
        self._count += 1
        return self.claim(f"{self.prefix}{hint}__{self._count}")

    # ------------------------------------------------------------------ nodes
    def add(self, op_type: str, inputs: Sequence[str], outputs: int | Sequence[str] = 1,
            hint: str | None = None, domain: str | None = None, **attrs: Any) -> list[str]:
        """One ONNX node; ``outputs`` a count (fresh names from ``hint``) or the names
        (claimed as they are). Attributes that are None are left out."""
        from onnx import helper

        if isinstance(outputs, int):
            names = [self.fresh(hint or op_type.lower()) for _ in range(outputs)]
        else:
            names = [n if n == "" else self._own(n) for n in outputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), names,
                                           name=self.fresh(f"{hint or names[0]}/{op_type}"),
                                           domain=domain, **attrs))
        return names

    def _own(self, name: str) -> str:
        if name in self.used:
            raise ValueError(f"tensor name {name} made twice")
        self.used.add(name)
        return name

    def one(self, op_type: str, inputs: Sequence[str], out: str | None = None,
            hint: str | None = None, **attrs: Any) -> str:
        """One ONNX node of one output: named ``out``, else fresh from ``hint``."""
        return self.add(op_type, inputs, [out] if out else 1, hint=hint, **attrs)[0]

    # ------------------------------------------------------------------ constants
    def const(self, value: Any, dtype: str | None = None, hint: str = "const") -> str:
        """An initializer holding ``value`` (each distinct value once)."""
        import numpy as np

        array = np.asarray(value, dtype=dtype) if dtype else np.asarray(value)
        if array.dtype == np.float64 and dtype is None:
            array = array.astype("float32")
        key = (array.dtype.str, str(array.shape), array.tobytes())
        found = self._consts.get(key)
        if found is not None:
            return found
        name = self.fresh(hint)
        self.initializer(name, array)
        self._consts[key] = name
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 constant (shapes, axes, starts and ends)."""
        return self.const(list(values), "int64", "ints")

    def scalar(self, value: float, dtype: str = "float32") -> str:
        return self.const(value, dtype, "scalar")

    def initializer(self, name: str, array: Any) -> str:
        import numpy as np
        from onnx import numpy_helper

        array = np.asarray(array)
        if not array.flags.c_contiguous:       # (ascontiguousarray makes a 0-D 1-D)
            array = array.copy(order="C")
        self.initializers.append(numpy_helper.from_array(array, name))
        self.values[name] = array
        self.used.add(name)
        return name

    def value(self, name: str) -> Any | None:
        """The value of ``name`` when it is an initializer, else None."""
        return self.values.get(name)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # ------------------------------------------------------------------ helpers
    def cast(self, name: str, dtype: str, hint: str = "cast") -> str:
        return self.one("Cast", [name], hint=hint, to=onnx_type(dtype))

    def reshape(self, name: str, shape: Sequence[int], out: str | None = None) -> str:
        return self.one("Reshape", [name, self.ints(shape)], out, hint="reshape")

    def unsqueeze(self, name: str, axes: Sequence[int], out: str | None = None) -> str:
        """Unsqueeze with axes as an input (opset 13 on)."""
        return self.one("Unsqueeze", [name, self.ints(axes)], out, hint="unsqueeze")

    def squeeze(self, name: str, axes: Sequence[int], out: str | None = None) -> str:
        return self.one("Squeeze", [name, self.ints(axes)], out, hint="squeeze")

    def identity(self, name: str, out: str) -> str:
        return self.one("Identity", [name], out)

    def reduce(self, op_type: str, name: str, axes: Sequence[int] | None, keepdims: bool,
               out: str | None = None) -> str:
        """``ReduceSum``/``ReduceMean``/... over ``axes`` (None: all): axes are an input
        from opset 13 for ReduceSum and from 18 for the others, an attribute before."""
        axes_in = op_type == "ReduceSum" or self.opset >= 18
        inputs = [name]
        attrs: dict[str, Any] = {"keepdims": int(keepdims)}
        if axes is not None:
            if axes_in:
                inputs.append(self.ints(axes))
            else:
                attrs["axes"] = list(axes)
        return self.one(op_type, inputs, out, hint=op_type.lower(), **attrs)

    def split(self, name: str, axis: int, sizes: Sequence[int],
              outs: Sequence[str] | None = None) -> list[str]:
        """``Split`` into pieces of ``sizes`` along ``axis`` (sizes an input from 13)."""
        return self.add("Split", [name, self.ints(sizes)],
                        list(outs) if outs else len(sizes), hint="split", axis=axis)
