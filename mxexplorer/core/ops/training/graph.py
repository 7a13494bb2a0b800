"""Rules for MXNet 1.9.1's DGL graph ops, which work on CSR adjacency matrices, as MXNet
infers their shapes and dtypes (storage types play no part in either).

``_contrib_edge_id``: u and v 1-d of the same length (compared as known: an unknown
length only matches another unknown one); the output is u's shape, and u and v learn
it back; dtype the data's, both ways.  ``_contrib_dgl_adjacency``: output = input,
both ways; the input must be int64 when the op is reached, the output is float32.
``_contrib_dgl_csr_neighbor_uniform_sample`` / ``..._non_uniform_sample``: a square 2-d
graph, 1-d seeds (and probability); per seed array the outputs ``(max_num_vertices+1,)``,
``(max_num_vertices, N)``, (the probabilities ``(max_num_vertices,)``) and
``(max_num_vertices,)``; dtypes from the seeds, the graph (and the probability).
``_contrib_dgl_subgraph``: a 2-d graph and 1-d vertex arrays; each output is square on
its vertex array's length, written over what was known; the vertex arrays must be int64
when the op is reached, the outputs take the graph's dtype.
``_contrib_dgl_graph_compact``: ``num_args / 2`` graphs and as many vertex arrays, at
least ``graph_sizes[i]`` long; outputs ``(graph_sizes[i], graph_sizes[i])`` (twice with
``return_mapping``), int64; every input must be int64 when the op is reached.

The op table does not count these ops' outputs (one per seed array, or two with
``return_mapping``): an output the engine's node lacks is skipped.  Must not import
MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, fmt
from mxexplorer.core.ops.training.helpers import (
    count,
    fail,
    label,
    name,
    need,
    overwrite,
    plural,
    put,
    rank,
    rules,
    unify,
)

_EDGE = ("data", "u", "v")
_I64 = 1 << 63


def _long(x: int) -> int:
    """A value stored into a C++ ``int64_t``."""
    return (x + _I64) % (1 << 64) - _I64


def _need_int64(c: Call, i: int, slot: str, what: str) -> None:
    """``CHECK_EQ(in_attrs->at(i), kInt64)``: an unknown dtype is refused too."""
    t = c.ins[i]
    if t != "int64":
        has = "an unknown dtype" if t is None else f"dtype {t}"
        fail(f"{label(c, i, slot)} has {has}, but {name(c)} needs {what} as int64 when "
             f"it is reached", input=i)


# ======================================================================= edge_id
def edge_id_shape(c: Call) -> None:
    """``EdgeIDShape``: u and v 1-d of one length; output = u, then u, v = output."""
    count(c, _EDGE)
    rank(c, 1, 1, "u", "a vector of source vertices")
    rank(c, 2, 1, "v", "a vector of destination vertices")
    u, v = c.ins[1], c.ins[2]
    assert u is not None and v is not None
    if u[0] != v[0]:
        fail(f"{label(c, 1, 'u')} has shape {fmt(u)} and {label(c, 2, 'v')} {fmt(v)}, but "
             f"{name(c)} pairs them: they need one length (unknown in both, or the same)",
             input=2)
    put(c, 0, u, "(one edge id per (u, v) pair)")
    c.set_in(1, c.outs[0], "the output needs")
    c.set_in(2, c.outs[0], "the output needs")


def edge_id_dtype(c: Call) -> None:
    count(c, _EDGE)
    unify(c, [0], [0], _EDGE)


# ===================================================================== adjacency
def adjacency_shape(c: Call) -> None:
    count(c, ("data",))
    unify(c, [0], [0], ("data",))


def adjacency_dtype(c: Call) -> None:
    count(c, ("data",))
    _need_int64(c, 0, "data", "the graph's edge ids")
    put(c, 0, "float32", "(the adjacency matrix)")


# ============================================================= neighbour sampling
def _uniform(c: Call) -> bool:
    return name(c) == "_contrib_dgl_csr_neighbor_uniform_sample"


def sample_shape(c: Call) -> None:
    """``CSRNeighbor(Non)UniformSampleShape``: square graph, 1-d probability and
    seeds; per seed array the vertices, the sub-graph, (the probabilities) and the
    layers."""
    first = 1 if _uniform(c) else 2
    n = int(c.p["num_args"]) - first
    need(c, 0, "the graph")
    rank(c, 0, 2, "csr_matrix", "a square adjacency matrix")
    g = c.ins[0]
    assert g is not None
    if g[0] != g[1]:
        fail(f"{label(c, 0, 'csr_matrix')} has shape {fmt(g)}, but {name(c)} needs a "
             f"square adjacency matrix (both sizes known and equal, or both unknown)",
             input=0)
    if not _uniform(c):
        need(c, 1, "the probabilities")
        rank(c, 1, 1, "probability", "a vector of vertex probabilities")
    for i in range(n):
        need(c, first + i, f"seed array {i}")
        rank(c, first + i, 1, f"seed_arrays{i}", "a vector of seed vertices")
    if n <= 0:
        return
    most = int(c.p["max_num_vertices"])
    if most < -1:
        fail(f"max_num_vertices={most} would give outputs of a negative size: use a "
             f"count of 0 or more", attr="max_num_vertices")
    per = [(_long(most + 1),), (most, g[1])] + [(most,)] * (2 if first == 2 else 1)
    for j in range(min(len(c.outs), len(per) * n)):
        put(c, j, per[j // n], "(from max_num_vertices)")


def sample_dtype(c: Call) -> None:
    """Vertices and layers of the seeds' dtype, the sub-graph of the graph's, the
    probabilities of the probability's."""
    first = 1 if _uniform(c) else 2
    n = int(c.p["num_args"]) - first
    if n <= 0:
        return
    need(c, first, "the seeds' dtype")
    seeds = c.ins[first]
    per = [seeds, c.ins[0]] + ([c.ins[1], seeds] if first == 2 else [seeds])
    for j in range(min(len(c.outs), len(per) * n)):
        put(c, j, per[j // n])


# ====================================================================== subgraph
def subgraph_shape(c: Call) -> None:
    """``DGLSubgraphShape``: a 2-d graph, 1-d vertex arrays; output i is square on
    vertex array i's length (the mappings too), written over what was known."""
    need(c, 0, "the graph")
    rank(c, 0, 2, "graph", "an adjacency matrix")
    for i in range(1, len(c.ins)):
        rank(c, i, 1, f"varray{i - 1}", "a vector of vertex ids")
    n = int(c.p["num_args"]) - 1
    for j in range(max(n, len(c.outs))):
        k = j + 1 if j < n else j - n + 1
        need(c, k, f"vertex array {k - 1}")
        v = c.ins[k]
        assert v is not None
        overwrite(c, j, (v[0], v[0]))


def subgraph_dtype(c: Call) -> None:
    """``DGLSubgraphType``: the vertex arrays int64; every output the graph's dtype,
    written over what was known."""
    n = int(c.p["num_args"]) - 1
    for i in range(n):
        need(c, i + 1, f"vertex array {i}")
        _need_int64(c, i + 1, f"varray{i}", "the vertex ids")
    need(c, 0, "the graph")
    for j in range(len(c.outs)):
        overwrite(c, j, c.ins[0])


# ================================================================= graph_compact
def compact_shape(c: Call) -> None:
    """``SubgraphCompactShape``: graphs 2-d and vertex arrays 1-d, each at least its
    ``graph_sizes`` entry; outputs ``(size, size)``, written over what was known."""
    n = int(c.p["num_args"]) // 2
    if len(c.ins) != 2 * n:
        fail(f"{name(c)} has {plural(len(c.ins), 'input')}, but num_args={c.p['num_args']} "
             f"needs {2 * n} ({n} graphs, then as many vertex arrays)", attr="num_args")
    sizes = c.p["graph_sizes"] or ()
    for i in range(n):
        rank(c, i, 2, f"graph{i}", "an adjacency matrix")
        if i >= len(sizes):
            fail(f"graph_sizes={c.attrs.get('graph_sizes')} has {plural(len(sizes), 'value')}, "
                 f"but there are {n} graphs: give one size per graph", attr="graph_sizes")
        g = c.ins[i]
        assert g is not None
        if g[0] < sizes[i] or g[1] < sizes[i]:
            fail(f"{label(c, i, f'graph{i}')} has shape {fmt(g)}, but graph_sizes says "
                 f"{sizes[i]} vertices: both sizes must be known and at least that",
                 input=i)
    for i in range(n):
        rank(c, n + i, 1, f"varray{i}", "a vector of vertex ids")
        v = c.ins[n + i]
        assert v is not None
        if v[0] < sizes[i]:
            fail(f"{label(c, n + i, f'varray{i}')} has shape {fmt(v)}, but graph_sizes "
                 f"says {sizes[i]} vertices: its length must be known and at least that",
                 input=n + i)
    for i in range(n):
        if sizes[i] < -1:
            fail(f"graph_sizes={c.attrs.get('graph_sizes')} has a size below -1",
                 attr="graph_sizes")
        overwrite(c, i, (sizes[i], sizes[i]))
        if c.p["return_mapping"]:
            overwrite(c, i + n, (sizes[i], sizes[i]))


def compact_dtype(c: Call) -> None:
    """``SubgraphCompactType``: every input int64; every output int64."""
    for i in range(len(c.ins)):
        _need_int64(c, i, c.slot(i), "every graph and vertex array")
    for j in range(len(c.outs)):
        overwrite(c, j, "int64")


RULES: dict[str, Rule] = {
    **rules(["_contrib_edge_id"], edge_id_shape, edge_id_dtype),
    **rules(["_contrib_dgl_adjacency"], adjacency_shape, adjacency_dtype),
    **rules(["_contrib_dgl_csr_neighbor_uniform_sample",
             "_contrib_dgl_csr_neighbor_non_uniform_sample"], sample_shape, sample_dtype),
    **rules(["_contrib_dgl_subgraph"], subgraph_shape, subgraph_dtype),
    **rules(["_contrib_dgl_graph_compact"], compact_shape, compact_dtype),
}
