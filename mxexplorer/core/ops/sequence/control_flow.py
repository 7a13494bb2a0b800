"""Rules for ``_foreach``, ``_while_loop`` and ``_cond``, which run the engine's pass over
the graphs in the node's ``subgraphs`` field (MXNet's ``InferSubgraphShape`` and
``InferSubgraphDataType``; an inner op without a rule is asked of the pass's oracle):
``_foreach`` infers its shapes (one step of each sequence through the body, the outputs
stacked again, both ways) and dtypes; ``_while_loop`` and ``_cond`` have no shape rule
in MXNet (their outputs' shapes depend on the data, so they stay unknown) and infer
dtypes through their condition, body and branch graphs.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any

from mxexplorer.core.graph import fused
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.base import Call, Conflict, Rule, RuleError, fmt, merge, no_shape, table
from mxexplorer.core.ops.sequence.helpers import _plural


# ================================================ _foreach, _while_loop, _cond
def _graphs(c: Call, n: int) -> list[fused.Subgraph]:
    """The node's ``subgraphs`` field: ``n`` symbol graphs (MXNet checks the count)."""
    raw = c.extra.get("subgraphs")
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        c.fail(f"{c.op} runs graphs of its own, but this node has no 'subgraphs' field "
               f"with them")
    assert isinstance(raw, list)
    if len(raw) != n:
        c.fail(f"{c.op} runs {n} graph{'s' if n > 1 else ''}, but this node's 'subgraphs' "
               f"field has {len(raw)}")
    try:
        return [fused.Subgraph(g) for g in raw]
    except fused.FusedError:
        raise RuleError(f"{c.op}'s 'subgraphs' field is not a list of symbol graphs "
                        f"(nodes with op, name and inputs; heads)") from None


def _known(kind: str, value: Any) -> bool:
    if kind == "shape":
        return value is not None and all(d >= 0 for d in value)
    return value is not None


def _refine(c: Call, old: Any, new: Any, what: str) -> Any:
    """``SHAPE_ASSIGN_CHECK``/``TYPE_ASSIGN_CHECK`` on a value of the op's own."""
    try:
        if c.kind == "shape":
            return merge(old, new)
        if old is None or new is None or old == new:
            return old if new is None else new
        raise Conflict()
    except Conflict:
        raise RuleError(f"{what} is {old if c.kind != 'shape' else fmt(old)}, but the graph "
                        f"it runs gives {new if c.kind != 'shape' else fmt(new)}") from None


def _run(c: Call, graph: fused.Subgraph, name: str, ins: list[Any], outs: list[Any]
         ) -> tuple[list[Any], list[Any], bool]:
    """MXNet's ``InferSubgraphShape``/``InferSubgraphDataType``: the graph inferred (by
    the engine's rules; an op without one asked of ``c.oracle``) from its inputs' values
    and its heads' (a head's value replaces its input's when the head is an input); the
    refined inputs and heads, and whether every entry of the graph came out known."""
    if len(ins) != len(graph.variables):
        c.fail(f"{c.op}'s {name} takes {_plural(len(graph.variables), 'input')} "
               f"({graph.names()}), but it is given {len(ins)}")
    if len(outs) != len(graph.heads):
        c.fail(f"{c.op}'s {name} gives {_plural(len(graph.heads), 'output')}, but {c.op} "
               f"needs {len(outs)} from it")
    hints = graph.row_hints
    g = engine.graph_of(graph.nodes, graph.order,
                        (lambda nid: hints[nid]) if hints is not None else None)
    given: dict[int, Any] = {nid: v for nid, v in zip(graph.variables, ins) if v is not None}
    for (nid, idx), v in zip(graph.heads, outs):
        if idx != 0:
            continue                # the engine takes values for first outputs only
        if v is None:
            given.pop(nid, None)
        else:
            given[nid] = v
    run = engine.infer_shapes if c.kind == "shape" else engine.infer_dtypes
    got = run(g, given, c.oracle)
    if got.failure is not None:
        bad = graph.nodes[got.failure.node]
        raise RuleError(f"inside {c.op}'s {name}, {bad.op} {bad.name!r}: "
                        f"{got.failure.error.message}")
    if got.unruled:
        bad = graph.nodes[got.unruled[0]]
        raise RuleError(f"mxexplorer has no {c.kind} rule for {bad.op} (inside {c.op}'s "
                        f"{name}, {bad.name!r}), and MXNet, which could answer, is not "
                        f"available")
    new_ins = [_refine(c, v, got.values.get((nid, 0)), f"{name} input {graph.nodes[nid].name!r}")
               for nid, v in zip(graph.variables, ins)]
    new_outs = [_refine(c, v, got.values.get(h), f"{name} output {k}")
                for k, (h, v) in enumerate(zip(graph.heads, outs))]
    done = all(_known(c.kind, v) for v in got.values.values())
    return new_ins, new_outs, done


def _locs(c: Call, key: str, size: int) -> list[int]:
    """A tuple of positions, each below ``size`` (MXNet reads past the end)."""
    locs = [int(v) for v in (c.p[key] or ())]
    for v in locs:
        if not 0 <= v < size:
            c.fail(f"{key}={c.attrs.get(key)} names position {v}, but there are {size}: use "
                   f"0 to {size - 1}", attr=key)
    return locs


def _slice_first(shape: Any) -> Any:
    """``SliceFirstDim``: one step of a sequence (a 1-d or unknown one reads as (1,))."""
    return tuple(shape[1:]) if shape is not None and len(shape) > 1 else (1,)


def foreach_shape(c: Call) -> None:
    """``ForeachShape``: the body inferred on one step (the data without its first axis,
    the states and the other inputs as they are); the outputs' data stacked along the
    data's first axis."""
    (body,) = _graphs(c, 1)
    n = len(c.ins)
    data = _locs(c, "in_data_locs", n)
    states = _locs(c, "in_state_locs", n)
    rest = _locs(c, "remain_locs", n)
    if len(data) + len(states) + len(rest) > n:
        c.fail(f"in_data_locs, in_state_locs and remain_locs name "
               f"{len(data) + len(states) + len(rest)} inputs, but the node has {n}",
               attr="in_data_locs")
    n_data = len(data)
    out_data = int(c.p["num_out_data"])
    sub_in: list[Any] = [None] * n
    flat = [False] * n_data
    for i, loc in enumerate(data):
        shape = c.ins[i]
        flat[i] = shape is not None and len(shape) == 1
        sub_in[loc] = _slice_first(shape)
    for k, loc in enumerate(states):
        sub_in[loc] = c.ins[n_data + k]
    for k, loc in enumerate(rest):
        sub_in[loc] = c.ins[n_data + len(states) + k]
    sub_out = [_slice_first(s) if i < out_data and s is not None else s
               for i, s in enumerate(c.outs)]
    first = c.ins[0] if c.ins else None
    if first is None or len(first) == 0:     # MXNet reads its length after the body's pass
        c.fail(f"the shape of {c.input_label(0)} is unknown: _foreach needs the data's "
               f"length (its first axis) when it is reached", input=0)
    assert first is not None
    length = first[0]
    new_in, new_out, done = _run(c, body, "loop body", sub_in, sub_out)
    for i in range(min(out_data, len(c.outs))):
        if new_out[i] is not None:
            c.set_out(i, (length, *new_out[i]), "(the loop body's output, stacked)")
    for i in range(out_data, len(c.outs)):
        c.set_out(i, new_out[i], "(the loop body's state)")
    for i, loc in enumerate(data):
        step = new_in[loc]
        if step is not None:
            c.set_in(i, (length,) if flat[i] else (length, *step), "the loop body needs")
    for k, loc in enumerate(states):
        c.set_in(n_data + k, new_in[loc], "the loop body needs")
    for k, loc in enumerate(rest):
        c.set_in(n_data + len(states) + k, new_in[loc], "the loop body needs")
    if done:
        for k in range(len(c.outs) - out_data):
            out, state = c.outs[out_data + k], c.ins[n_data + k]
            if out != state:
                c.fail(f"the loop body turns state {k} of shape {fmt(state)} into "
                       f"{fmt(out)}: a state must keep its shape")


def foreach_type(c: Call) -> None:
    """``ForeachType``: the body's dtypes, inputs and outputs both ways."""
    (body,) = _graphs(c, 1)
    n = len(c.ins)
    data = _locs(c, "in_data_locs", n)
    states = _locs(c, "in_state_locs", n)
    rest = _locs(c, "remain_locs", n)
    sub_in: list[Any] = ["float32"] * n
    order = [(loc, i) for i, loc in enumerate(data)]
    order += [(loc, len(data) + k) for k, loc in enumerate(states)]
    order += [(loc, len(data) + len(states) + k) for k, loc in enumerate(rest)]
    for loc, i in order:
        if i >= n:
            c.fail(f"in_data_locs, in_state_locs and remain_locs name more inputs than the "
                   f"node's {n}", attr="in_data_locs")
        sub_in[loc] = c.ins[i]
    new_in, new_out, _ = _run(c, body, "loop body", sub_in, list(c.outs))
    for i, v in enumerate(new_out):
        c.set_out(i, v, "(from the loop body)")
    for loc, i in order:
        c.set_in(i, new_in[loc], "the loop body needs")


def _fill(values: list[Any], i: int, other: list[Any], j: int) -> None:
    """``fill_value``: an unknown one of the two takes the other (a disagreement is let
    be, as MXNet does)."""
    x, y = values[i], other[j]
    if x is None and y is not None:
        values[i] = y
    elif y is None and x is not None:
        other[j] = x


def while_loop_type(c: Call) -> None:
    """``WhileLoopType``: the condition graph, then the body, inferred in turn, the loop
    variables' dtypes kept equal to the body outputs they become."""
    graphs = _graphs(c, 2)
    n = len(c.ins)
    if n + 2 != int(c.p["num_args"]):
        c.fail(f"has {_plural(n, 'input')}, but num_args={c.p['num_args']} means "
               f"{int(c.p['num_args']) - 2}", attr="num_args")
    if len(graphs[0].heads) != 1:
        c.fail(f"_while_loop's condition graph gives {len(graphs[0].heads)} outputs, not 1")
    cond_locs = _locs(c, "cond_input_locs", n)
    func_locs = _locs(c, "func_input_locs", n)
    var_locs = [int(v) for v in (c.p["func_var_locs"] or ())]
    out_data, n_out = int(c.p["num_out_data"]), len(c.outs)
    for k in range(n_out - out_data):
        if k >= len(var_locs) or not 0 <= var_locs[k] < len(func_locs):
            c.fail(f"func_var_locs={c.attrs.get('func_var_locs')} must name, for each of "
                   f"the {n_out - out_data} loop variables, one of the body's "
                   f"{len(func_locs)} inputs", attr="func_var_locs")
    ins, outs = list(c.ins), list(c.outs)

    def sync() -> None:
        for k in range(out_data, n_out):
            _fill(ins, func_locs[var_locs[k - out_data]], outs, k)

    cond_in = [ins[loc] for loc in cond_locs]
    func_in = [ins[loc] for loc in func_locs]
    sync()
    cond_in, _, _ = _run(c, graphs[0], "condition graph", cond_in, [None])
    sync()
    for k, loc in enumerate(cond_locs):
        _fill(ins, loc, cond_in, k)
    func_in, outs, _ = _run(c, graphs[1], "loop body", func_in, outs)
    sync()
    for k, loc in enumerate(func_locs):
        _fill(ins, loc, func_in, k)
    c.ins[:] = ins
    c.outs[:] = outs


def cond_type(c: Call) -> None:
    """``CondType``: the condition graph (its output float32), then the then- and
    else-graphs, inferred in turn; both branches give the outputs."""
    graphs = _graphs(c, 3)
    n = len(c.ins)
    if n + 3 != int(c.p["num_args"]):
        c.fail(f"has {_plural(n, 'input')}, but num_args={c.p['num_args']} means "
               f"{int(c.p['num_args']) - 3}", attr="num_args")
    if len(graphs[0].heads) != 1:
        c.fail(f"_cond's condition graph gives {len(graphs[0].heads)} outputs, not 1")
    if len(graphs[1].heads) != len(graphs[2].heads):
        c.fail(f"_cond's then-graph gives {len(graphs[1].heads)} outputs and its "
               f"else-graph {len(graphs[2].heads)}: both branches need the same outputs")
    ins, outs = list(c.ins), list(c.outs)
    parts = [(graphs[0], "condition graph", _locs(c, "cond_input_locs", n)),
             (graphs[1], "then-graph", _locs(c, "then_input_locs", n)),
             (graphs[2], "else-graph", _locs(c, "else_input_locs", n))]
    sub_ins = [[ins[loc] for loc in locs] for _, _, locs in parts]
    for k, (graph, name, locs) in enumerate(parts):
        if k == 0:
            sub_ins[0], _, _ = _run(c, graph, name, sub_ins[0], ["float32"])
        else:
            sub_ins[k], outs, _ = _run(c, graph, name, sub_ins[k], outs)
        for j, loc in enumerate(locs):
            _fill(ins, loc, sub_ins[k], j)
    c.ins[:] = ins
    c.outs[:] = outs


RULES: dict[str, Rule] = {
    **table("sequence", ["_foreach"], foreach_shape, foreach_type),
    **table("sequence", ["_while_loop"], no_shape, while_loop_type),
    **table("sequence", ["_cond"], no_shape, cond_type),
}
