"""MXNet's own shape inference of a document, and its errors in plain words: the judge the
engine is compared with (the tests, ``benchmarks/engine_corpus.py``,
``tools/engine_reference.py``).

Owns :func:`infer_with_mxnet`, which asks MXNet 1.9.1 for every internal's shape and dtype
(the product's inference is the engine's: :mod:`mxexplorer.core.analysis.shapes`), and
:func:`explain`, which turns MXNet's error text into a located
:class:`~mxexplorer.core.analysis.shapes.ShapeError`.  MXNet is imported lazily; no Qt.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Mapping

from mxexplorer.core.analysis.shapes import (
    Shape,
    ShapeError,
    ShapeResult,
    check_allocatable,
    format_shape,
    known,
)
from mxexplorer.core.graph import model, subgraph, symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet

_FAILED_LOAD = re.compile(r"Failed loading Op (?P<node>.*?) of type (?P<op>\S+?):")
_NOT_REGISTERED = re.compile(r"Operator (?P<op>\S+) is not registered")
_IN_OPERATOR = re.compile(r"Error in operator (?P<node>.+?): (?P<rest>.*)", re.S)
_INCONSISTENT = re.compile(
    r"Shape inconsistent, Provided\s*=\s*(?P<p>[\[(][^\])]*[\])]),\s*inferred shape\s*=\s*"
    r"(?P<i>[\[(][^\])]*[\])])")
_INCOMPATIBLE = re.compile(
    r"Incompatible attr in node (?P<node>.+?) at (?P<k>\d+)-th (?P<io>input|output): "
    r"expected (?P<e>[\[(][^\])]*[\])]), got (?P<g>[\[(][^\])]*[\])])")
_CHECK = re.compile(r"Check failed: (?P<cond>.*?)(?: \((?P<vals>[^()]*)\))?"
                    r"(?:\s*:\s*(?P<msg>.+))?$", re.S)


def _tuple(text: str) -> Shape:
    return tuple(int(d) for d in re.findall(r"-?\d+", text))


def explain(exc_text: str, doc: GraphDocument | None,
            input_shapes: Mapping[tuple[int, int], Shape] | None = None) -> ShapeError:
    """Turn MXNet's error text into a :class:`ShapeError` in plain words."""
    text = symbol_io.mxnet_message(Exception(exc_text))
    m = _FAILED_LOAD.search(text) or None
    if m or _NOT_REGISTERED.search(text):
        op = m.group("op") if m else _NOT_REGISTERED.search(text).group("op")  # type: ignore[union-attr]
        node = m.group("node") if m else "?"
        return ShapeError(node, op, f"operator {op} is not registered in this MXNet "
                          "(it comes from a plug-in, a fork or a newer MXNet)", text)
    m = _IN_OPERATOR.search(text)
    if not m:
        return ShapeError("?", "?", text, text)
    node, rest = m.group("node"), m.group("rest")
    # the cleaned text has one line: a node name holding a newline lost it there; the
    # raw text still has the name as the file spells it
    raw = str(exc_text).split("Stack trace", 1)[0]
    raw = raw[raw.find("MXNetError:"):] if "MXNetError:" in raw else raw
    m_raw = _IN_OPERATOR.search(raw)
    if m_raw is not None and doc is not None and doc.node_named(m_raw.group("node")) \
            is not None:
        node = m_raw.group("node")
    nid = doc.node_named(node) if doc is not None else None
    op = doc.nodes[nid].op if doc is not None and nid is not None else "?"
    rest = re.sub(r"\[\d\d:\d\d:\d\d\] \S+:\d+: ", "", rest).strip()
    m2 = _INCONSISTENT.search(rest)
    if m2:
        provided, inferred = _tuple(m2.group("p")), _tuple(m2.group("i"))
        input_name = None
        if doc is not None and nid is not None and input_shapes is not None:
            for slot, (src, idx, _) in zip(doc.input_slots(nid), doc.nodes[nid].inputs):
                if input_shapes.get((src, idx)) == provided:
                    input_name = f"{doc.nodes[src].name!r} ({slot})"
                    break
        what = f"input {input_name}" if input_name else "an input"
        return ShapeError(node, op, f"{what} has shape {format_shape(provided)}, but this "
                          f"layer needs {format_shape(inferred)}", rest, provided, inferred,
                          input_name)
    m2 = _INCOMPATIBLE.search(rest)
    if m2:
        k = int(m2.group("k"))
        expected, got = _tuple(m2.group("e")), _tuple(m2.group("g"))
        input_name = None
        if doc is not None and nid is not None and m2.group("io") == "input":
            inputs = doc.nodes[nid].inputs
            if k < len(inputs):
                input_name = repr(doc.nodes[inputs[k][0]].name)
        where = f"input {k}" + (f" ({input_name})" if input_name else "")
        return ShapeError(node, op, f"{where} has shape {format_shape(got)}, but the other "
                          f"inputs need {format_shape(expected)}", rest, got, expected,
                          input_name)
    m2 = _CHECK.search(rest)
    if m2:
        msg = (m2.group("msg") or "").strip() or m2.group("cond").strip()
        vals = m2.group("vals") or ""
        pair = re.match(r"\s*(.+?) vs\. (.+?)\s*$", vals)
        if pair:
            msg = f"{msg} (got {pair.group(1)}, expected {pair.group(2)})"
        elif vals:
            msg = f"{msg} ({vals})"
        return ShapeError(node, op, msg, rest)
    return ShapeError(node, op, rest, rest)


def _shape_or_none(shape: Any) -> Shape | None:
    if shape is None:
        return None
    t = tuple(int(d) for d in shape)
    return t if t else None



def infer_with_mxnet(doc: GraphDocument, graph_json: str, shapes: Mapping[str, Shape],
                     dtypes: Mapping[str, str] | None = None,
                     param_shapes: Mapping[str, Shape] | None = None,
                     revision: int = -1) -> ShapeResult:
    """MXNet's own inference of a document parsed from ``graph_json`` (its own copy):
    the judge the engine is compared with.

    Raises
    ------
    MXNetMissingError : MXNet is not installed.
    """
    mx = import_mxnet()
    entries = [(e.node, e.index) for e in doc.internals()]
    unreadable = doc.unreadable_text()
    if unreadable is not None:
        bad, what = unreadable
        node = doc.nodes[bad]
        why = (f"{what} holds a lone UTF-16 surrogate, which MXNet cannot read: rename or "
               "edit it")
        err = ShapeError(symbol_io.dumps(node.name)[1:-1], node.op, why, why)
        return _empty(entries, dict(shapes), err, revision)
    unknown_nodes = doc.unknown_nodes()
    if unknown_nodes:
        # MXNet refuses the whole file for one op it cannot run: infer what lies
        # upstream of the first one, and say which it is
        bad = unknown_nodes[0]
        name = doc.unknown_op_name(bad) or doc.nodes[bad].op
        known_shapes = {k: tuple(v) for k, v in (param_shapes or {}).items()}
        known_shapes.update({k: tuple(v) for k, v in shapes.items()})
        why = (f"custom operator {name[len('Custom:'):]!r} is registered by the Python code "
               "that made the model (mx.operator.register), not by MXNet"
               if name.startswith("Custom:") else
               f"operator {name} is not registered in this MXNet (it comes from a plug-in, "
               "a fork or a newer MXNet)")
        err = ShapeError(doc.nodes[bad].name, name, why + "; shapes stop here", why)
        return _upstream_of(mx, doc, bad, entries, known_shapes, revision, err)
    try:
        sym = mx.sym.load_json(graph_json)
    except mx.base.MXNetError as exc:
        return _empty(entries, dict(shapes), explain(str(exc), doc), revision)
    arg_names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    unknown = [n for n in shapes if n not in arg_names and n not in aux_names]
    if unknown:
        raise UserError(f"the graph has no input named {unknown[0]!r}; its inputs are "
                        + ", ".join(n for n in arg_names[:12])
                        + (" ..." if len(arg_names) > 12 else ""))
    given: dict[str, Shape] = {}
    for name, shape in (param_shapes or {}).items():
        if name in arg_names or name in aux_names:
            given[name] = tuple(shape)
    given.update({k: tuple(v) for k, v in shapes.items()})
    # MXNet refuses (with a bare Exception) any given shape of 2^31 elements or more
    check_allocatable(list(given), list(given.values()), "inference")
    internals = sym.get_internals()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            arg_s, out_s, aux_s = internals.infer_shape_partial(**given)
    except mx.base.MXNetError as exc:
        return _after_error(mx, str(exc), doc, entries, given, revision)
    by_entry = {e: s for e, s in zip(entries, (_shape_or_none(s) for s in out_s))
                if s is not None}
    dt, dtype_error = _infer_dtypes(mx, internals, arg_names, dtypes or {}, len(entries), doc)
    missing = tuple(n for n, s in zip(internals.list_arguments(), arg_s)
                    if not known(_shape_or_none(s)))
    return ShapeResult(
        internal_shapes=tuple(by_entry.get(e) for e in entries),
        internal_dtypes=dt,
        arg_shapes={n: _shape_or_none(s) for n, s in zip(internals.list_arguments(), arg_s)},
        aux_shapes={n: _shape_or_none(s) for n, s in zip(aux_names, aux_s)},
        output_shapes=tuple(by_entry.get((s, k)) for s, k, _ in doc.heads),
        inputs_used=given,
        missing_inputs=missing,
        revision=revision,
        by_entry=by_entry,
        inferred_by="mxnet",
        dtype_error=dtype_error,
    )


def _infer_dtypes(mx: Any, internals: Any, arg_names: list[str], dtypes: Mapping[str, str],
                  count: int, doc: GraphDocument | None = None
                  ) -> tuple[tuple[str | None, ...], ShapeError | None]:
    import numpy as np

    wanted = {n: np.dtype(d) for n, d in dtypes.items() if n in arg_names}
    if not wanted and arg_names:
        wanted = {arg_names[0]: np.dtype("float32")}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, out_t, _ = internals.infer_type_partial(**wanted)
    except mx.base.MXNetError as exc:
        return (None,) * count, explain(str(exc), doc)
    return tuple(np.dtype(t).name if t is not None else None for t in out_t), None


def _empty(entries: list[tuple[int, int]], given: dict[str, Shape], err: ShapeError,
           revision: int) -> ShapeResult:
    return ShapeResult(tuple(None for _ in entries), tuple(None for _ in entries), {}, {},
                       (), given, err, (), revision, inferred_by="mxnet")


def _after_error(mx: Any, text: str, doc: GraphDocument, entries: list[tuple[int, int]],
                 given: dict[str, Shape], revision: int) -> ShapeResult:
    """Inference failed at some node: infer what lies upstream of it, then explain."""
    m = _IN_OPERATOR.search(text)
    bad = doc.node_named(m.group("node")) if m else None
    return _upstream_of(mx, doc, bad, entries, given, revision, None, text)


def _upstream_of(mx: Any, doc: GraphDocument, bad: int | None,
                 entries: list[tuple[int, int]], given: dict[str, Shape], revision: int,
                 err: ShapeError | None, text: str = "") -> ShapeResult:
    """The shapes of everything ``bad`` depends on, with the error at ``bad``."""
    upstream: dict[tuple[int, int], Shape] = {}
    if bad is not None and doc.nodes[bad].inputs:
        sub_nodes, sub_heads, old_ids = subgraph.cut(doc.nodes, list(doc.nodes[bad].inputs))
        sub_doc = GraphDocument(model.ParsedGraph(sub_nodes, sub_heads, {}, "nnvm",
                                                      model.CURRENT_VERSION))
        try:
            sub = mx.sym.load_json(sub_doc.to_json(indent=None)).get_internals()
            names = set(sub.list_arguments()) | set(sub.list_auxiliary_states())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, out_s, _ = sub.infer_shape_partial(
                    **{k: v for k, v in given.items() if k in names})
            for e, s in zip(sub_doc.internals(), out_s):
                shape = _shape_or_none(s)
                if shape is not None:
                    upstream[(old_ids[e.node], e.index)] = shape
        except mx.base.MXNetError:
            pass
    if err is None:
        err = explain(text, doc, upstream)
    return ShapeResult(
        internal_shapes=tuple(upstream.get(e) for e in entries),
        internal_dtypes=tuple(None for _ in entries),
        arg_shapes={}, aux_shapes={}, output_shapes=(), inputs_used=given, error=err,
        revision=revision, by_entry=upstream, inferred_by="mxnet")


