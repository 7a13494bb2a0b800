"""What a plan costs: MXNet's own report for training the tagged graph (the default
where MXNet runs), or the memory model's figure (where it does not, and for tests of the
search): :func:`default_cost` chooses.  Each cost says whose figures they are
(``key``: "mxnet" or "model"; ``source`` in words).

MXNet only inside :class:`CostOracle` (imported lazily); no Qt.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.tags import FORCE_MIRRORING
from mxexplorer.core.planning import liveness
from mxexplorer.core.planning.plantags import tagged_dict
from mxexplorer.core.runtime.errors import MXNetMissingError, UserError
from mxexplorer.core.runtime.mxnet_env import argument_types, context, import_mxnet

_TOTAL_RE = re.compile(r"Total\s+(\d+(?:\.\d+)?)\s+MB allocated")
_OP_LINE_RE = re.compile(r"Op:\w+, Name=(.+)")


def mirror_names(report: str) -> frozenset[str]:
    """The operators a bind's report (``debug_str``) shows recomputed: its
    ``Op:..., Name=X_mirror`` lines, as ``X`` (found by the lines' ends first: a
    1001-layer ResNet's report is 3 MB, and this is twice as fast as a multiline
    pattern; the tests hold that pattern as the reference)."""
    names = []
    text = report if report.endswith("\n") else report + "\n"
    at = text.find("_mirror\n")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        match = _OP_LINE_RE.fullmatch(text, start, at)
        if match is not None:
            names.append(match.group(1))
        at = text.find("_mirror\n", at + 1)
    return frozenset(names)


class CostOracle:
    """``Total N MB allocated`` for training a graph, from MXNet's own planner.

    Tags never change the arguments, so their arrays are made once (``nd.empty``:
    never written, so they cost address space, not memory) and every probe binds to
    them; ``simple_bind`` would zero-fill fresh arrays each time and MXNet's pool
    would keep them (tens of GB over a search).  The report is the same number.
    """

    def __init__(self, shapes: Mapping[str, Shape], ctx_spec: str = "cpu",
                 type_dict: Mapping[str, str] | None = None):
        self.mx = import_mxnet()
        self.ctx = context(ctx_spec, mirrored=True)   # probes are mirrored graphs
        self.shapes = dict(shapes)
        self.type_dict = dict(type_dict) if type_dict else {}
        self.calls = 0
        self.mirrored: frozenset[str] = frozenset()   # the last graph's _mirror nodes
        self._arrays: tuple[list[Any], list[Any], list[Any]] | None = None
        #: the loaded graph, a handle per operator node, the tag each carries now
        self._nodes: tuple[Any, dict[int, Any], dict[int, str]] | None = None

    def _make_arrays(self, sym: Any) -> tuple[list[Any], list[Any], list[Any]]:
        mx = self.mx
        arg_s, _, aux_s = sym.infer_shape(**self.shapes)
        default = next(iter(self.type_dict.values()), "float32")
        arg_t, _, aux_t = sym.infer_type(**argument_types(sym, default, self.type_dict)) \
            if self.type_dict else (None, None, None)
        if arg_s is None or any(s is None for s in arg_s):
            raise UserError("the input shapes do not determine every argument's shape")
        arg_t = arg_t or ["float32"] * len(arg_s)
        aux_t = aux_t or ["float32"] * len(aux_s)
        args = [mx.nd.empty(s, self.ctx, dtype=t) for s, t in zip(arg_s, arg_t)]
        grads = [mx.nd.empty(s, self.ctx, dtype=t) for s, t in zip(arg_s, arg_t)]
        aux = [mx.nd.empty(s, self.ctx, dtype=t) for s, t in zip(aux_s, aux_t)]
        return args, grads, aux

    def cost_of_tags(self, doc: GraphDocument, tags: Mapping[int, str]) -> float:
        """The cost of ``doc`` with exactly these ``__force_mirroring__`` tags on its
        operators.  The graph is loaded once and each probe sets only the tags that
        changed, on MXNet's own nodes (``mirror_stage`` tags are memonger's, MXNet does
        not read them): a third less time per probe than writing and loading the JSON,
        the same report.  Falls back to the JSON when node names are not unique."""
        if self._nodes is None:
            sym = self.mx.sym.load_json(symbol_io.dumps(tagged_dict(doc, {})))
            internals = sym.get_internals()
            by_name: dict[str, Any] = {}
            for k in range(len(internals.list_outputs())):
                handle = internals[k]
                by_name.setdefault(handle.name, handle)
            ops = [(i, n.name) for i, n in enumerate(doc.nodes) if not n.is_variable]
            unique = len({name for _, name in ops}) == len(ops)
            self._nodes = (sym, {i: by_name[name] for i, name in ops if name in by_name}
                           if unique else {}, {})
        sym, handles, current = self._nodes
        if not handles:
            return self(tagged_dict(doc, tags))
        for i, handle in handles.items():
            value = tags.get(i, "False")
            if current.get(i) != value:
                handle._set_attr(**{FORCE_MIRRORING: value})
                current[i] = value
        return self._bind_cost(sym)

    def __call__(self, graph: dict[str, Any] | str) -> float:
        mx = self.mx
        text = graph if isinstance(graph, str) else symbol_io.dumps(graph)
        return self._bind_cost(mx.sym.load_json(text))

    def _bind_cost(self, sym: Any) -> float:
        self.calls += 1
        if self._arrays is None:
            self._arrays = self._make_arrays(sym)
        args, grads, aux = self._arrays
        exe = sym.bind(self.ctx, args=args, args_grad=grads, grad_req="write",
                       aux_states=aux)
        try:
            report = exe.debug_str()
            self.mirrored = mirror_names(report)
            return parse_total_mb(report)
        finally:
            del exe


def parse_total_mb(debug_str: str) -> float:
    match = _TOTAL_RE.search(debug_str)
    if match is None:
        raise UserError("MXNet's executor report has no 'Total N MB allocated' line")
    return float(match.group(1))


@dataclass(frozen=True)
class Measured:
    """What a plan costs: MB for training, and the operators recomputed in backward."""

    mb: float
    recomputed: tuple[int, ...]


class CostFunction(Protocol):
    """What the search asks of a cost: the unplanned graph's MB, and a tagging's."""

    #: what the figures are, for the words of a plan ("MXNet", "the memory model")
    source: str
    #: the same for machines ("mxnet", "model": ``plan --json``'s ``costed_by``)
    key: str

    def baseline(self, doc: GraphDocument) -> float: ...

    def measure(self, doc: GraphDocument, tags: Mapping[int, str]) -> Measured: ...


#: builds the cost of one search: (document, per-entry shapes, input shapes, device)
CostFactory = Callable[[GraphDocument, Mapping[tuple[int, int], Shape],
                        Mapping[str, Shape], str, str], CostFunction]


class MXNetCost:
    """MXNet's own ``Total N MB allocated`` (:class:`CostOracle`), and the nodes its
    gradient pass really recomputes, read from the same bind's ``_mirror`` copies."""

    source = "MXNet"
    key = "mxnet"

    def __init__(self, oracle: CostOracle):
        self.oracle = oracle
        self._op_index: dict[str, int] = {}

    def baseline(self, doc: GraphDocument) -> float:
        # on the graph the probes then retag (every operator tagged False: MXNet's
        # figure is the untagged graph's, checked on six networks): loaded once
        return self.oracle.cost_of_tags(doc, {})

    def measure(self, doc: GraphDocument, tags: Mapping[int, str]) -> Measured:
        mb = self.oracle.cost_of_tags(doc, tags)
        if not self._op_index:
            self._op_index.update((n.name, i) for i, n in enumerate(doc.nodes)
                                  if not n.is_variable)
        nodes = (self._op_index.get(name) for name in self.oracle.mirrored)
        return Measured(mb, tuple(sorted(i for i in nodes if i is not None)))


def mxnet_cost(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
               shapes: Mapping[str, Shape], ctx: str, dtype: str) -> CostFunction:
    """The default :data:`CostFactory`: MXNet binds every plan (10-500 ms each)."""
    return MXNetCost(CostOracle(shapes, ctx, {k: dtype for k in shapes}))


class ModelCost:
    """The memory model's figures (:mod:`liveness`, a few ms a plan, no MXNet): its
    median error is 0.8 % against MXNet's over the benchmark searches.  For tests of the
    search itself, and for estimates where MXNet cannot run."""

    source = "the memory model"
    key = "model"

    def __init__(self, doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape]):
        self.model = liveness.Model(doc, by_entry)

    def baseline(self, doc: GraphDocument) -> float:
        return self.model.total_mb({})

    def measure(self, doc: GraphDocument, tags: Mapping[int, str]) -> Measured:
        return Measured(self.model.total_mb(tags),
                        tuple(sorted(self.model.recomputed_by(tags))))


def model_cost(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
               shapes: Mapping[str, Shape], ctx: str, dtype: str) -> CostFunction:
    """A :data:`CostFactory` of the memory model (:class:`ModelCost`)."""
    return ModelCost(doc, by_entry)


def default_cost(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
                 shapes: Mapping[str, Shape], ctx: str, dtype: str) -> CostFunction:
    """MXNet's figures where MXNet imports (:func:`mxnet_cost`), else the memory model's
    (:func:`model_cost`): a plan is made either way, and says whose figures it has."""
    try:
        import_mxnet()
    except MXNetMissingError:
        return model_cost(doc, by_entry, shapes, ctx, dtype)
    return mxnet_cost(doc, by_entry, shapes, ctx, dtype)
