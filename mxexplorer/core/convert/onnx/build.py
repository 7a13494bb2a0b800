"""The exporter's driver: a document, its input shapes and its weights in, an ONNX model
out, without MXNet.

1. Heads only training has are dropped and a loss head gives way to what feeds it
   (:mod:`onnx_fixes`' passes over the JSON, said in the notes).
2. The engine infers every entry's shape and dtype (MXNet is not asked).
3. From the heads down, each node reached becomes ONNX nodes through its family's
   converter (:mod:`registry`); a variable becomes an initializer (its weight) or a
   graph input; training heads read their data only (their labels are not inputs).
4. Outputs take MXNet's entry names (``softmax_output``); what no output reads is
   pruned; the model is written at the opset asked, or the lowest its converters need,
   and passed through ``onnx.checker`` with its shapes inferred.

Must not import MXNet or Qt.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mxexplorer.core.analysis import shapes as shape_analysis
from mxexplorer.core.convert import onnx_fixes, onnx_report
from mxexplorer.core.convert.onnx import registry
from mxexplorer.core.convert.onnx.context import Ctx, NoOnnxMeaning, OpNode, onnx_type
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.ops import engine
from mxexplorer.core.runtime.errors import UserError

Shape = tuple[int, ...]


class UnsupportedOps(onnx_report.UnsupportedOps):
    """Operators no converter of ours knows: ``nodes`` is [(node id, name, op)]."""

    def __init__(self, nodes: list[tuple[int, str, str]]):
        self.nodes = nodes
        shown = ", ".join(f"{name} ({op})" for _, name, op in nodes[:6])
        more = f" and {len(nodes) - 6} more" if len(nodes) > 6 else ""
        ops = sorted({op for _, _, op in nodes})
        UserError.__init__(self, f"{len(nodes)} node(s) use ops with no ONNX converter "
                           f"({', '.join(ops)}): {shown}{more}; cut the graph before them "
                           "(Cut here / export up to an output) to export the part before")

    def __reduce__(self) -> tuple[Any, ...]:          # crosses from the child process
        return (UnsupportedOps, (self.nodes,))


@dataclass
class Built:
    model: Any                                  # onnx.ModelProto
    opset: int
    notes: list[str]
    #: graph inputs: name -> (shape, dtype)
    inputs: dict[str, tuple[Shape, str]]
    #: (MXNet entry name, ONNX output name) per output, in order
    outputs: list[tuple[str, str]]
    #: MXNet entry name -> ONNX tensor name (entries whose name is unique)
    entries: dict[str, str]
    #: every shape and dtype the engine found, by (node, index)
    shapes: dict[tuple[int, int], Shape]
    dtypes: dict[tuple[int, int], str]
    #: the heads exported (training-only heads dropped, a loss by what feeds it)
    heads: list[tuple[int, int]]
    #: the model serialised (what the checker passed)
    blob: bytes = b""


def _heads(doc: GraphDocument) -> tuple[list[tuple[int, int]], list[str]]:
    graph: dict[str, Any] = {"nodes": [{"op": n.op, "name": n.name, "attrs": dict(n.attrs),
                        "inputs": [list(e) for e in n.inputs]} for n in doc.nodes],
             "heads": [list(h) for h in doc.heads]}
    notes = onnx_fixes.drop_training_heads(graph) + onnx_fixes.fix_loss_heads(graph)
    heads: list[list[int]] = graph["heads"]
    return [(h[0], h[1]) for h in heads], notes


def _reached(doc: GraphDocument, heads: list[tuple[int, int]]) -> set[int]:
    """Nodes the heads read; a converter that reads fewer inputs than the node has (a
    training head's label) does not reach the rest."""
    seen: set[int] = set()
    todo = [h[0] for h in heads]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        node = doc.nodes[k]
        conv = None if node.is_variable else registry.converter_for(node.op)
        inputs = node.inputs if conv is None or conv.reads is None else \
            node.inputs[:conv.reads]
        todo.extend(src for src, _, _ in inputs)
    return seen


def refuse_unsupported(doc: GraphDocument, order: list[int] | None = None) -> None:
    """Raise :class:`UnsupportedOps` naming every node (of ``order``, else of those the
    exported heads read) whose op no converter knows."""
    if order is None:
        reached = _reached(doc, _heads(doc)[0])
        order = [i for i in doc.order() if i in reached]
    missing = [(i, doc.nodes[i].name, doc.nodes[i].op) for i in order
               if not doc.nodes[i].is_variable and registry.converter_for(doc.nodes[i].op)
               is None]
    if missing:
        raise UnsupportedOps(missing)


def infer(doc: GraphDocument, shapes: Mapping[str, Shape],
          param_shapes: Mapping[str, Shape]) -> shape_analysis.ShapeResult:
    result = shape_analysis.infer_document(doc, shapes, param_shapes=param_shapes,
                                           use_mxnet=False)
    if result.error is not None:
        raise UserError(f"shape inference stops at {result.error.one_line()}")
    return result


def build(doc: GraphDocument, shapes: Mapping[str, Shape], weights: Mapping[str, Any],
          opset: int | None = None, inferred: shape_analysis.ShapeResult | None = None
          ) -> Built:
    """The ONNX model of ``doc`` at ``shapes`` with ``weights`` (name -> numpy array)
    as initializers.

    Raises
    ------
    UnsupportedOps : ops without a converter (every node named, nothing built).
    NoOnnxMeaning : a node whose attributes ONNX cannot express (named).
    UserError : shapes that cannot be inferred, a model the checker refuses.
    """
    import onnx

    heads, notes = _heads(doc)
    reached = _reached(doc, heads)
    order = [i for i in doc.order() if i in reached]
    refuse_unsupported(doc, order)
    convs = {i: c for i in order if not doc.nodes[i].is_variable and
             (c := registry.converter_for(doc.nodes[i].op)) is not None}
    needed = max([registry.MIN_OPSET] + [c.opset for c in convs.values()])
    if opset is not None and opset < registry.MIN_OPSET:
        raise UserError(f"opset {opset}: our converters write opset {registry.MIN_OPSET} "
                        "or newer")
    chosen = max(opset or registry.DEFAULT_OPSET, needed)
    if chosen > (opset or registry.DEFAULT_OPSET):
        ops = sorted({doc.nodes[i].op for i, c in convs.items()
                      if c.opset > (opset or registry.DEFAULT_OPSET)})
        notes.append(f"opset {chosen} written: {', '.join(ops)} need(s) it")
    result = inferred or infer(doc, shapes, {k: tuple(v.shape) for k, v in weights.items()})
    entries = doc.internals()
    shape_of = {(e.node, e.index): s for e, s in zip(entries, result.internal_shapes)
                if s is not None}
    dtype_of = {(e.node, e.index): d for e, d in zip(entries, result.internal_dtypes)
                if d is not None}
    cx = Ctx(chosen)
    names: dict[tuple[int, int], str] = {}
    graph_inputs: dict[str, tuple[Shape, str]] = {}
    for i in order:
        node = doc.nodes[i]
        if node.is_variable:
            names[(i, 0)] = _variable(cx, doc, i, weights, shape_of, dtype_of, graph_inputs)
            continue
        _convert(cx, doc, i, names, shape_of, dtype_of)
    outputs = _outputs(cx, doc, heads, names, shape_of, dtype_of, graph_inputs)
    model, blob = _assemble(onnx, cx, doc, graph_inputs, outputs, shape_of, dtype_of)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.name] = counts.get(e.name, 0) + 1
    mapping = {e.name: names[(e.node, e.index)] for e in entries
               if counts[e.name] == 1 and names.get((e.node, e.index))}
    used = {i.name for i in model.graph.input}
    return Built(model, chosen, notes + cx.notes,
                 {k: v for k, v in graph_inputs.items() if k in used},
                 [(m, o) for m, o, _ in outputs], mapping, shape_of, dtype_of, heads, blob)


def _known(shape: Shape | None) -> bool:
    return shape is not None and all(d >= 0 for d in shape)


def _variable(cx: Ctx, doc: GraphDocument, i: int, weights: Mapping[str, Any],
              shape_of: Mapping[tuple[int, int], Shape],
              dtype_of: Mapping[tuple[int, int], str],
              graph_inputs: dict[str, tuple[Shape, str]]) -> str:
    name = doc.nodes[i].name
    dtype = dtype_of.get((i, 0)) or "float32"
    if name in weights:
        value = weights[name]
        if str(value.dtype) != dtype and dtype != "bfloat16":
            value = value.astype(dtype)
        return cx.initializer(cx.claim(name) if name in cx.used else name, value)
    shape = shape_of.get((i, 0))
    if not _known(shape):
        raise UserError(f"no shape for input '{name}': give it with --shape "
                        f"{name}=D1,D2,...")
    out = cx.claim(name)
    graph_inputs[out] = (tuple(shape or ()), dtype)
    return out


def _convert(cx: Ctx, doc: GraphDocument, i: int, names: dict[tuple[int, int], str],
             shape_of: Mapping[tuple[int, int], Shape],
             dtype_of: Mapping[tuple[int, int], str]) -> None:
    node = doc.nodes[i]
    conv = registry.converter_for(node.op)
    assert conv is not None
    count = doc.output_count(i)
    ins = node.inputs if conv.reads is None else node.inputs[:conv.reads]
    try:
        p = engine.parsed(node.op, node.attrs)
    except ValueError as exc:
        raise NoOnnxMeaning(node.name, node.op, str(exc)) from None
    outs = [(i, k) for k in range(count)]
    in_names = []
    for src, k, _ in ins:
        got = names.get((src, k))
        if got is None:
            raise NoOnnxMeaning(node.name, node.op, f"reads output {k} of "
                                f"'{doc.nodes[src].name}', which has no ONNX meaning at "
                                "inference")
        in_names.append(got)
    visible = outs[:len(doc.output_names(i))]
    unknown = [e for e in [(s, k) for s, k, _ in ins] + visible
               if not _known(shape_of.get(e))]
    if unknown:
        raise NoOnnxMeaning(node.name, node.op, "its shapes are unknown at these input "
                            "shapes (give every input's shape)")
    op_node = OpNode(
        i, node.op, node.name, dict(node.attrs), p, in_names,
        [tuple(shape_of[(s, k)]) for s, k, _ in ins],
        [dtype_of.get((s, k)) or "float32" for s, k, _ in ins],
        [tuple(shape_of.get(e, ())) for e in outs],
        [dtype_of.get(e) or "float32" for e in outs],
        [_entry_name(cx, doc, i, k) for k in range(count)],
        [doc.nodes[src].name for src, _, _ in node.inputs[len(ins):]])
    try:
        made = conv.convert(cx, op_node)
    except (NoOnnxMeaning, UserError):
        raise
    except Exception as exc:  # noqa: BLE001 - a converter's fault, named at its node
        raise UserError(f"the ONNX converter of '{node.name}' ({node.op}) failed: "
                        f"{type(exc).__name__}: {exc}") from None
    for k, name in enumerate(made):
        if name is not None:
            names[(i, k)] = name


def _entry_name(cx: Ctx, doc: GraphDocument, i: int, k: int) -> str:
    """MXNet's name of output ``k`` of node ``i`` (``conv0_output``), unless another
    tensor has it already (a graph with duplicate node names): then made unique."""
    listed = doc.output_names(i)
    name = listed[k] if k < len(listed) else f"{doc.nodes[i].name}_output{k}"
    return cx.unused(name)


def _outputs(cx: Ctx, doc: GraphDocument, heads: list[tuple[int, int]],
             names: Mapping[tuple[int, int], str],
             shape_of: Mapping[tuple[int, int], Shape],
             dtype_of: Mapping[tuple[int, int], str],
             graph_inputs: Mapping[str, tuple[Shape, str]]
             ) -> list[tuple[str, str, tuple[int, int]]]:
    """(MXNet entry name, ONNX output name, entry) per head.  A head that is an input
    or a weight, or listed twice, is an Identity of it under a name of its own."""
    out = []
    taken: set[str] = set()
    for src, k in heads:
        listed = doc.output_names(src)
        entry = listed[k] if k < len(listed) else f"{doc.nodes[src].name}_output{k}"
        name = names.get((src, k))
        if name is None:
            node = doc.nodes[src]
            raise NoOnnxMeaning(node.name, node.op, f"its output {k} is a graph output "
                                "but has no meaning at inference")
        if name in graph_inputs or name in cx.values or name in taken:
            wanted = entry if entry != name and entry not in cx.used else f"{entry}_out"
            name = cx.identity(name, cx.unused(wanted))
        taken.add(name)
        out.append((entry, name, (src, k)))
    return out


def _assemble(onnx: Any, cx: Ctx, doc: GraphDocument,
              graph_inputs: Mapping[str, tuple[Shape, str]],
              outputs: list[tuple[str, str, tuple[int, int]]],
              shape_of: Mapping[tuple[int, int], Shape],
              dtype_of: Mapping[tuple[int, int], str]) -> tuple[Any, bytes]:
    from onnx import helper

    wanted = {name for _, name, _ in outputs}
    keep = []
    for node in reversed(cx.nodes):                 # nodes are in graph order
        if any(o in wanted for o in node.output):
            keep.append(node)
            wanted.update(i for i in node.input if i)
    keep.reverse()
    inits = [t for t in cx.initializers if t.name in wanted]
    inputs = [helper.make_tensor_value_info(n, onnx_type(d), list(s))
              for n, (s, d) in graph_inputs.items() if n in wanted]
    outs = [helper.make_tensor_value_info(name, onnx_type(dtype_of.get(e)),
                                          list(shape_of.get(e, ())))
            for _, name, e in outputs]
    graph = helper.make_graph(keep, _graph_name(doc), inputs, outs, inits)
    opsets = [helper.make_opsetid("", cx.opset)]
    if any(n.domain == "com.microsoft" for n in keep):
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="mxexplorer")
    try:            # the lowest IR version that holds the opset: older runtimes load it
        model.ir_version = max(7, helper.find_min_ir_version_for(opsets[:1]))
    except Exception:  # noqa: BLE001 - an onnx without the table: its own default
        pass
    weights = sum(len(t.raw_data) for t in inits)
    if weights > 2**31 - 2**26:
        raise UserError(f"the model's weights take {weights / 2**30:.1f} GB: more than "
                        "the 2 GB one ONNX file can hold (external data is not written "
                        "yet)")
    blob = model.SerializeToString()
    try:            # the bytes, checked with their shapes inferred (one serialisation)
        onnx.checker.check_model(blob, full_check=True)
    except Exception as exc:  # noqa: BLE001 - the checker's words, in one line
        first = str(exc).strip().splitlines()
        raise UserError(f"the exported model fails onnx's checker: "
                        f"{first[0] if first else type(exc).__name__}") from None
    return model, blob


def _graph_name(doc: GraphDocument) -> str:
    import os

    return os.path.basename(doc.path or "mxnet")[:-len("-symbol.json")] \
        if (doc.path or "").endswith("-symbol.json") else "mxnet"

