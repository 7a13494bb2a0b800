"""Shape and dtype inference over a document, and errors told in plain words.

Owns :func:`infer_document` (and :func:`infer` for JSON text): the engine
(:mod:`mxexplorer.core.ops`) runs in-process over the document with the user's input
shapes and gives every internal output's shape and dtype; MXNet is asked only about an
op the engine has no rule for, and only where it is installed.  An inconsistency
becomes a :class:`ShapeError` that names the node, its op and what would fit; what does
not depend on the failing node keeps its shape.  :mod:`mxnet_shapes` holds MXNet's
own answer for the same question (the judge the tests compare with).  No Qt.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from mxexplorer.core.analysis.oracle import MXNetOracle
from mxexplorer.core.graph import opinfo, symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.base import DTYPE_NUMBERS, RuleError
from mxexplorer.core.runtime.errors import UserError, escape_controls

Shape = tuple[int, ...]


@dataclass(frozen=True)
class ShapeError:
    """Why inference stopped, located at a node."""

    node: str
    op: str
    message: str
    detail: str
    provided: Shape | None = None
    expected: Shape | None = None
    input_name: str | None = None

    def one_line(self) -> str:
        if self.node == "?":              # MXNet named no node: its words alone
            return escape_controls(self.message)
        return escape_controls(f"{self.node} ({self.op}): {self.message}")


@dataclass(frozen=True)
class ShapeResult:
    """Shapes for every internal output (parallel to ``doc.internals()``)."""

    internal_shapes: tuple[Shape | None, ...]
    internal_dtypes: tuple[str | None, ...]
    arg_shapes: dict[str, Shape | None]
    aux_shapes: dict[str, Shape | None]
    output_shapes: tuple[Shape | None, ...]
    inputs_used: dict[str, Shape]
    error: ShapeError | None = None
    missing_inputs: tuple[str, ...] = ()
    revision: int = -1
    by_entry: dict[tuple[int, int], Shape] = field(default_factory=dict)
    #: who answered: "engine", "engine+mxnet" (MXNet answered for ops without a rule)
    #: or "mxnet" (:func:`infer_with_mxnet`)
    inferred_by: str = "engine"
    #: ops no rule and no MXNet could answer for (their outputs are unknown)
    unruled_ops: tuple[str, ...] = ()
    #: where dtype inference stopped (shapes are not affected), if it did
    dtype_error: ShapeError | None = None

    @functools.cached_property
    def complete(self) -> bool:
        return self.error is None and all(known(s) for s in self.internal_shapes)


def known(shape: Shape | None) -> bool:
    return shape is not None and len(shape) > 0 and all(d > 0 for d in shape)


def parse_shape(text: str) -> Shape:
    """``1,3,224,224`` or ``(1, 3, 224, 224)`` -> tuple; ``UserError`` if malformed."""
    body = text.strip().strip("()[]").strip()
    if not body:
        raise UserError(f"shape {text!r} is empty")
    dims = []
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        if not (part.isascii() and part.isdigit()):
            raise UserError(f"shape {text!r}: {part!r} is not a whole number")
        if len(part) > 12:
            raise UserError(f"shape {text!r}: dimension {part[:12]}... is out of range")
        value = int(part)
        if value <= 0 or value > MAX_ELEMENTS:
            raise UserError(f"shape {text!r}: dimension {value:,} is out of range "
                            f"(1 to {MAX_ELEMENTS:,})")
        dims.append(value)
    return tuple(dims)


def parse_shape_arg(text: str) -> tuple[str, Shape]:
    """``NAME=D1,D2,...`` (the CLI's ``--shape``) -> (name, shape)."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name.strip():
        raise UserError(f"--shape {text!r}: expected NAME=D1,D2,... (e.g. data=1,3,224,224)")
    return name.strip(), parse_shape(dims)


def format_shape(shape: Sequence[int] | None) -> str:
    if shape is None or len(shape) == 0:
        return "?"
    return "(" + ", ".join("?" if d <= 0 else str(d) for d in shape) + ")"


def infer(graph_json: str, shapes: Mapping[str, Shape],
          dtypes: Mapping[str, str] | None = None,
          param_shapes: Mapping[str, Shape] | None = None,
          revision: int = -1, use_mxnet: bool | None = None) -> ShapeResult:
    """Infer every internal output's shape (and dtype) of a graph given as JSON
    (:func:`infer_document` on the document it parses to)."""
    doc = GraphDocument(symbol_io.parse_graph(json.loads(graph_json), upgrade=False))
    return infer_document(doc, shapes, dtypes, param_shapes, revision, use_mxnet)


def _given(doc: GraphDocument, shapes: Mapping[str, Shape],
           param_shapes: Mapping[str, Shape] | None) -> tuple[dict[str, Shape],
                                                             dict[str, list[int]]]:
    """The shapes inference starts from (the checkpoint's, then the user's) and the
    variables of each name; an unknown name is refused."""
    variables: dict[str, list[int]] = {}
    for i in doc.arguments() + doc.aux_states():
        variables.setdefault(doc.nodes[i].name, []).append(i)
    unknown = [n for n in shapes if n not in variables]
    if unknown:
        arg_names = [doc.nodes[i].name for i in doc.arguments()]
        raise UserError(f"the graph has no input named {unknown[0]!r}; its inputs are "
                        + ", ".join(n for n in arg_names[:12])
                        + (" ..." if len(arg_names) > 12 else ""))
    given: dict[str, Shape] = {}
    for name, shape in (param_shapes or {}).items():
        if name in variables:
            given[name] = tuple(shape)
    given.update({k: tuple(v) for k, v in shapes.items()})
    return given, variables


def engine_graph(doc: GraphDocument) -> engine.Graph:
    """The engine's view of the document (made once per revision)."""
    graph: engine.Graph = doc.cached(
        "engine_graph", lambda: engine.graph_of(doc.nodes, doc.order(), doc.row_hint))
    return graph


def infer_document(doc: GraphDocument, shapes: Mapping[str, Shape],
                   dtypes: Mapping[str, str] | None = None,
                   param_shapes: Mapping[str, Shape] | None = None,
                   revision: int = -1, use_mxnet: bool | None = None) -> ShapeResult:
    """Infer every internal output's shape and dtype of a document with the engine.

    Parameters
    ----------
    shapes : shapes of data inputs (and any argument the user wants to pin).
    dtypes : dtypes of data inputs; the first argument is float32 when none is given.
    param_shapes : shapes from a checkpoint, used where ``shapes`` says nothing.
    use_mxnet : ask MXNet about ops without a rule: None (default) where MXNet is
        installed, True (the same), False never.

    Raises
    ------
    UserError : an input name that is not an argument of the graph, or a shape no
        tensor of MXNet can have.
    """
    entries = [(e.node, e.index) for e in doc.internals()]
    given, variables = _given(doc, shapes, param_shapes)
    check_allocatable(list(given), list(given.values()), "inference")
    graph = engine_graph(doc)
    oracle = MXNetOracle() if use_mxnet is not False else None
    if oracle is not None and not oracle.usable:
        oracle = None
    start = {nid: engine.legacy_to_shape(shape) for name, shape in given.items()
             for nid in variables[name]}
    got = engine.infer_shapes(graph, start, oracle)
    types = {nid: _dtype_name(dt) for name, dt in (dtypes or {}).items()
             for nid in variables.get(name, ())}
    if not types and doc.arguments():
        types = {doc.arguments()[0]: "float32"}
    got_t = engine.infer_dtypes(graph, types, oracle)
    by_entry: dict[tuple[int, int], Shape] = {}
    for e in entries:
        legacy = engine.shape_to_legacy(got.values.get(e))
        if legacy is not None:
            by_entry[e] = legacy
    error = _failure(doc, got)
    unruled = tuple(sorted({_op_label(doc, i) for i in got.unruled}))
    # a dtype that cannot be inferred (an Embedding fed by an input given no dtype) is a
    # note, not a stop: the shapes stand
    dtype_error = _failure(doc, got_t) if got_t.failure is not None else None
    arg_shapes = {doc.nodes[i].name: engine.shape_to_legacy(got.values.get((i, 0)))
                  for i in doc.arguments()}
    aux_shapes = {doc.nodes[i].name: engine.shape_to_legacy(got.values.get((i, 0)))
                  for i in doc.aux_states()}
    missing = tuple(doc.nodes[i].name for i in doc.arguments()
                    if not known(engine.shape_to_legacy(got.values.get((i, 0)))))
    return ShapeResult(
        internal_shapes=tuple(by_entry.get(e) for e in entries),
        internal_dtypes=tuple(got_t.values.get(e) for e in entries),
        arg_shapes=arg_shapes,
        aux_shapes=aux_shapes,
        output_shapes=tuple(by_entry.get((s, k)) for s, k, _ in doc.heads),
        inputs_used=given,
        error=error,
        missing_inputs=missing,
        revision=revision,
        by_entry=by_entry,
        inferred_by="engine+mxnet" if (got.asked or got_t.asked) else "engine",
        unruled_ops=unruled,
        dtype_error=dtype_error,
    )


def _dtype_name(dtype: Any) -> str:
    """A dtype as the user names it (``float32``, ``np.float16``, ``numpy.float16``,
    ``bfloat16``) -> the engine's name."""
    text = str(getattr(dtype, "__name__", dtype)).strip().replace("numpy.", "")
    text = text.replace("np.", "")
    if text in DTYPE_NUMBERS:
        return text
    import numpy as np  # only for the other spellings numpy knows
    try:
        name = np.dtype(text).name
    except TypeError:
        name = ""
    if name not in DTYPE_NUMBERS:
        raise UserError(f"unknown dtype {str(dtype)[:40]!r}; use float32, float16, "
                        "bfloat16, float64, int8, uint8, int32 or int64")
    return name


def _op_label(doc: GraphDocument, node_id: int) -> str:
    return doc.unknown_op_name(node_id) or opinfo.canonical_op(doc.nodes[node_id].op)


def _failure(doc: GraphDocument, got: engine.Inferred) -> ShapeError | None:
    """The located error of an engine run: the node that broke, else the first op no
    rule could answer for."""
    if got.failure is not None:
        node = doc.nodes[got.failure.node]
        err: RuleError = got.failure.error
        input_name = None
        if err.input is not None and err.input < len(node.inputs):
            src = node.inputs[err.input][0]
            slot = doc.input_slots(got.failure.node)[err.input]
            input_name = f"{doc.nodes[src].name!r} ({slot})"
        provided = engine.shape_to_legacy(err.provided) \
            if isinstance(err.provided, tuple) else None
        expected = engine.shape_to_legacy(err.expected) \
            if isinstance(err.expected, tuple) else None
        return ShapeError(node.name, node.op, err.message, err.message, provided, expected,
                          input_name)
    if got.unruled:
        bad = got.unruled[0]
        node = doc.nodes[bad]
        name = _op_label(doc, bad)
        if name.startswith("Custom:"):
            why = (f"custom operator {name[len('Custom:'):]!r} is registered by the Python "
                   "code that made the model (mx.operator.register), not by MXNet")
        elif not opinfo.is_registered(node.op):
            why = (f"operator {name} is not in MXNet 1.9.1 (it comes from a plug-in, a fork "
                   "or a newer MXNet) and mxexplorer has no rule for it")
        else:
            why = (f"mxexplorer has no shape rule for {name}, and MXNet, which could answer, "
                   "is not installed here")
        return ShapeError(node.name, name, why + "; shapes stop here", why)
    return None


def guess_input_shapes(doc: Any, batch: int = 1) -> dict[str, Shape]:
    """Shapes for the data inputs from the file's hints: ``__shape__`` attributes, then the
    weights of the first layer that reads each input (checkpoint or ``__shape__``):
    a 2-D convolution over C channels suggests ``(batch, C, 224, 224)``, a dense layer
    over F features ``(batch, F)``.  Inputs with nothing to go on are left out."""
    hints = doc.shape_hints()
    weights = dict(hints)
    weights.update(doc.param_shapes())
    names = {i: doc.nodes[i].name for i in doc.data_inputs()}
    out: dict[str, Shape] = {}
    users = doc.consumers()
    for i, name in names.items():
        if name in hints:
            out[name] = hints[name]
            continue
        for consumer, pos in users[i]:
            node = doc.nodes[consumer]
            if pos != 0 or len(node.inputs) < 2:
                continue
            wshape = weights.get(doc.nodes[node.inputs[1][0]].name)
            canon = opinfo.canonical_op(node.op)
            if canon == "Convolution":
                kernel = opinfo.tuple_attr(node.attrs, "kernel") or ()
                groups = max(opinfo.int_attr(node.attrs, "num_group", 1), 1)
                if wshape and len(kernel) == 2 and len(wshape) == 4 and wshape[1] > 0:
                    out[name] = (batch, wshape[1] * groups, 224, 224)
            elif canon == "FullyConnected" and wshape and len(wshape) == 2 and wshape[1] > 0:
                out[name] = (batch, wshape[1])
            if name in out:
                break
    return out


#: elements MXNet 1.9.1 (built without USE_INT64_TENSOR_SIZE) allocates per tensor
MAX_ELEMENTS = 2**31 - 1


def check_allocatable(names: Sequence[str], shapes_: Sequence[Shape | None],
                      what: str = "training") -> None:
    """Refuse, before MXNet is asked, shapes it cannot allocate (one tensor over 2^31
    elements), naming the biggest tensor and its size.

    Raises
    ------
    UserError : a tensor is too big.
    """
    worst, worst_name = 0, ""
    worst_shape: Shape = ()
    for name, shape in zip(names, shapes_):
        if shape:
            n = math.prod(shape)
            if n > worst:
                worst, worst_name, worst_shape = n, name, shape
    if worst > MAX_ELEMENTS:
        gib = worst * 4 / 2**30
        raise UserError(f"{worst_name} would be {format_shape(worst_shape)}: {worst:,} "
                        f"elements ({gib:,.1f} GiB as float32), more than the 2^31 MXNet "
                        f"allocates per tensor; use a smaller batch for {what}")
