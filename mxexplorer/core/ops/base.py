"""What every rule is made of: shapes with unknown parts, the call a rule receives, and
the plain-words error it raises.

A shape is a tuple of dimensions in which ``-1`` is an unknown dimension; ``None`` is a
shape whose rank is unknown too (MXNet's numpy-style convention, which its operators use
internally; the driver converts at the edges).  A rule receives a :class:`Call`: the
node's typed parameters and the shapes (or dtypes) of its inputs and outputs as known so
far, and fills in what the op determines, in either direction, as MXNet's
``FInferShape``/``FInferType`` functions do.  A value that contradicts what is known
raises :class:`RuleError`, which names the input, output or attribute and what would
fit.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

Shape = tuple[int, ...]
MaybeShape = Optional[Shape]
#: an unknown dimension
UNKNOWN = -1

#: MXNet's dtype codes (``__dtype__`` attributes, ``Cast``'s numbers)
DTYPE_CODES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8",
               6: "int64", 7: "bool", 8: "int16", 9: "uint16", 10: "uint32", 11: "uint64",
               12: "bfloat16"}
DTYPE_NUMBERS = {v: k for k, v in DTYPE_CODES.items()}


class RuleError(Exception):
    """Why a node's attributes and shapes cannot go together, in plain words.

    ``attr`` names the attribute at fault, ``input``/``output`` the position of the
    entry; ``provided``/``expected`` the shapes in conflict, when there are two.
    """

    def __init__(self, message: str, *, attr: str | None = None, input: int | None = None,
                 output: int | None = None, provided: Any = None, expected: Any = None):
        super().__init__(message)
        self.message = message
        self.attr = attr
        self.input = input
        self.output = output
        self.provided = provided
        self.expected = expected


class Conflict(Exception):
    """Two descriptions of one entry disagree (turned into a :class:`RuleError`)."""


def fmt(shape: MaybeShape) -> str:
    """``(1, 3, ?, ?)``; ``?`` for a shape of unknown rank."""
    if shape is None:
        return "?"
    if len(shape) == 1:
        return "(?,)" if shape[0] < 0 else f"({shape[0]},)"
    return "(" + ", ".join("?" if d < 0 else str(d) for d in shape) + ")"


def known(shape: MaybeShape) -> bool:
    """Rank and every dimension known."""
    return shape is not None and all(d >= 0 for d in shape)


def ndim_known(shape: MaybeShape) -> bool:
    return shape is not None


def size(shape: Shape) -> int:
    """Number of elements, -1 when a dimension is unknown."""
    n = 1
    for d in shape:
        if d < 0:
            return -1
        n *= d
    return n


def merge(a: MaybeShape, b: MaybeShape) -> MaybeShape:
    """The shape both describe (MXNet's ``shape_assign``): unknown parts of one filled
    from the other.  Raises :class:`Conflict` when they disagree."""
    if b is None:
        return a
    if a is None:
        return b
    if a == b:
        return a
    if len(a) != len(b):
        raise Conflict()
    out = list(a)
    for i, (x, y) in enumerate(zip(a, b)):
        if x < 0:
            out[i] = y
        elif y >= 0 and x != y:
            raise Conflict()
    return tuple(out)


def unknown_shape(ndim: int) -> Shape:
    return (UNKNOWN,) * ndim


class Call:
    """One node as a rule sees it: its op, typed parameters and the values (shapes, or
    dtype names) of its inputs and outputs, which the rule may fill in.

    ``ins`` and ``outs`` are lists the rule updates through :meth:`set_in` and
    :meth:`set_out`; ``p`` holds the parameters (:func:`mxexplorer.core.ops.params.parse`);
    ``slots`` names the inputs (``data``, ``weight`` ...) for messages; ``extra`` holds
    the node's other JSON fields (``subgraphs`` of a fused ``_sg_mkldnn_*`` node);
    ``oracle`` is the pass's :class:`~mxexplorer.core.ops.engine.Oracle` (or None), for a
    rule that infers through other ops (a fused op's inner graph).
    """

    __slots__ = ("op", "p", "attrs", "ins", "outs", "slots", "kind", "extra", "_sources",
                 "oracle")

    def __init__(self, op: str, p: dict[str, Any], attrs: dict[str, str], ins: list[Any],
                 outs: list[Any], slots: Sequence[str], kind: str = "shape",
                 extra: dict[str, Any] | None = None,
                 sources: Callable[[], Sequence[str]] | None = None, oracle: Any = None):
        self.op = op
        self.p = p
        self.attrs = attrs
        self.ins = ins
        self.outs = outs
        self.slots = slots
        self.kind = kind
        self.extra = extra if extra is not None else {}
        self._sources = sources
        self.oracle = oracle

    # ------------------------------------------------------------- naming
    def slot(self, i: int) -> str:
        return self.slots[i] if i < len(self.slots) else f"input {i}"

    def input_label(self, i: int) -> str:
        """``input 'fc1_weight' (weight)``: the input's source and its slot, for messages."""
        names = self._sources() if self._sources is not None else ()
        if i < len(names):
            return f"input {names[i]!r} ({self.slot(i)})"
        return self.slot(i)

    def _show(self, value: Any) -> str:
        return fmt(value) if self.kind == "shape" else str(value)

    # ------------------------------------------------------------ filling
    def set_in(self, i: int, value: Any, why: str = "") -> None:
        """Input ``i`` is ``value`` (merged with what is known; a disagreement is the
        input's fault)."""
        old = self.ins[i]
        try:
            self.ins[i] = merge(old, value) if self.kind == "shape" else _same(old, value)
        except Conflict:
            what = "shape" if self.kind == "shape" else "type"
            raise RuleError(f"{self.input_label(i)} has {what} {self._show(old)}, but "
                            f"{why or 'this layer needs'} {self._show(value)}", input=i,
                            provided=old, expected=value) from None

    def set_out(self, i: int, value: Any, why: str = "") -> None:
        """Output ``i`` is ``value`` (a disagreement: the output was known otherwise,
        from a layer that reads it or a shape given for it)."""
        old = self.outs[i]
        try:
            self.outs[i] = merge(old, value) if self.kind == "shape" else _same(old, value)
        except Conflict:
            what = "shape" if self.kind == "shape" else "type"
            name = "the output" if len(self.outs) == 1 else f"output {i}"
            raise RuleError(f"{name} would have {what} {self._show(value)}"
                            f"{' ' + why if why else ''}, but the layers that read it "
                            f"need {self._show(old)}", output=i, provided=value,
                            expected=old) from None

    def fail(self, message: str, attr: str | None = None, input: int | None = None) -> None:
        raise RuleError(message, attr=attr, input=input)

    def expect_inputs(self, *names: str) -> None:
        """The node must have exactly these inputs (MXNet checks the count)."""
        if len(self.ins) != len(names):
            listed = ", ".join(names) or "none"
            raise RuleError(f"has {len(self.ins)} input{'s' if len(self.ins) != 1 else ''}"
                            f", but this layer takes {len(names)} ({listed})")

    def expect_at_least(self, n: int) -> None:
        if len(self.ins) < n:
            raise RuleError(f"has {len(self.ins)} inputs, but this layer takes at least {n}")

    def ndim_of(self, i: int) -> int | None:
        s = self.ins[i]
        return None if s is None else len(s)


def _same(old: Any, new: Any) -> Any:
    if new is None:
        return old
    if old is None or old == new:
        return new
    raise Conflict()


ShapeFn = Callable[[Call], None]
DtypeFn = Callable[[Call], None]


def no_shape(c: Call) -> None:
    """The shape rule of an op whose output shape depends on the data (``_npx_nonzero``,
    ``_npi_unique`` ...): MXNet registers none, marks the outputs dynamic and does not
    infer the layers that read them; the engine does the same."""


def same_type(c: Call) -> None:
    """MXNet's default when an op declares no type rule (``common::SameType``): the first
    known output's type, else the first known input's, for everything; no check."""
    t = next((v for v in c.outs if v is not None), None)
    if t is None:
        t = next((v for v in c.ins if v is not None), None)
    if t is None:
        return
    c.outs[:] = [t] * len(c.outs)
    c.ins[:] = [t] * len(c.ins)


def elemwise_type(c: Call) -> None:
    """Every input and output of one type, checked (``ElemwiseType``)."""
    t = next((v for v in c.ins if v is not None), None)
    if t is None:
        t = next((v for v in c.outs if v is not None), None)
    if t is None:
        return
    for i in range(len(c.ins)):
        c.set_in(i, t, "the other inputs are")
    for i in range(len(c.outs)):
        c.set_out(i, t)


def first_input_type(c: Call) -> None:
    """Outputs of the first input's type; other inputs free (indices, lengths)."""
    if c.ins and c.ins[0] is not None:
        for i in range(len(c.outs)):
            c.set_out(i, c.ins[0])
    elif c.outs and c.outs[0] is not None and c.ins:
        c.set_in(0, c.outs[0])


@dataclass(frozen=True)
class Rule:
    """How one op (or a family of them) infers shapes and dtypes."""

    shape: ShapeFn
    dtype: DtypeFn = elemwise_type
    #: the family the rule belongs to (for the op table and messages)
    family: str = ""


def table(family: str, names: Sequence[str], shape: ShapeFn,
          dtype: DtypeFn = elemwise_type) -> dict[str, Rule]:
    """One rule shared by several ops of a family."""
    rule = Rule(shape, dtype, family)
    return {name: rule for name in names}
