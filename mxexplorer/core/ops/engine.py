"""The engine's driver: shapes and dtypes of every entry of a graph, from the rules,
the way MXNet 1.9.1's inference pass finds them.

Owns :func:`infer_shapes` and :func:`infer_dtypes`.  Like MXNet's pass
(``src/executor/infer_graph_attr_pass.cc``) they visit the nodes in graph order, then in
reverse, and so on while each sweep learns something, calling each unfinished node's
rule with what is known of its inputs and outputs; variables take the given values, else
their ``__shape__``/``__dtype__`` attribute.  Unlike MXNet's they do not stop at the
first inconsistency: the node that breaks is recorded with the rule's plain-words reason,
and everything that does not depend on it keeps its shape.  An op without a rule is
asked of the ``oracle`` when there is one (MXNet, when it is installed), else left
unknown and listed.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import params as op_params
from mxexplorer.core.ops import registry
from mxexplorer.core.ops.base import (
    DTYPE_CODES,
    Call,
    MaybeShape,
    Rule,
    RuleError,
    no_shape,
    same_type,
)


class NoAnswer(Exception):
    """The oracle cannot answer (MXNet is not installed or failed to import)."""


class Oracle(Protocol):
    """Someone who can answer for an op without a rule (MXNet); raises
    :class:`NoAnswer` when it cannot, :class:`RuleError` when the op refuses."""

    def shapes(self, node: Node, ins: list[MaybeShape], outs: list[MaybeShape]
               ) -> tuple[list[MaybeShape], list[MaybeShape]]: ...

    def dtypes(self, node: Node, ins: list[str | None], outs: list[str | None]
               ) -> tuple[list[str | None], list[str | None]]: ...


@dataclass(frozen=True)
class Failure:
    """Where inference broke: the node, and the rule's reason."""

    node: int
    error: RuleError


@dataclass
class Inferred:
    """Values of every entry, by (node, output index): shapes in the numpy-style
    convention (``-1`` unknown dimension, None unknown rank) or dtype names."""

    values: dict[tuple[int, int], Any]
    failure: Failure | None = None
    #: operator nodes no rule (and no oracle) could answer for, in graph order
    unruled: list[int] = field(default_factory=list)
    #: nodes the oracle answered for
    asked: list[int] = field(default_factory=list)
    sweeps: int = 0


#: parsed parameters by (op, attributes), shared by every graph: a real network repeats
#: a few dozen attribute sets over thousands of nodes, and an edit re-reads them all
_PARSED: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}
_PARSED_MOST = 1 << 16


def parsed(op: str, attrs: Mapping[str, str]) -> Any:
    """``params.parse(op, attrs)``, or the ParamError it raises, remembered; each caller
    gets its own copy of the dict (a rule may change its ``c.p``)."""
    key = (op, tuple(attrs.items()))
    try:
        found = _PARSED.get(key)
        hashable = True
    except TypeError:                   # an attribute value that is not a string
        found, hashable = None, False
    if found is None:
        try:
            found = op_params.parse(op, attrs)
        except op_params.ParamError as exc:
            found = exc
        if hashable:
            if len(_PARSED) >= _PARSED_MOST:
                _PARSED.clear()
            _PARSED[key] = found
    return found if isinstance(found, op_params.ParamError) else dict(found)


class Graph:
    """The nodes in MXNet's order with their entry numbering (``IndexedGraph``)."""

    def __init__(self, nodes: Sequence[Node], order: Sequence[int],
                 output_count: Callable[[int], int],
                 input_slots: Callable[[int], list[str]]):
        self.nodes = nodes
        self.order = list(order)
        self.position = {nid: k for k, nid in enumerate(self.order)}
        self.rows: list[int] = []
        row = 0
        self.counts: list[int] = []
        for nid in self.order:
            self.rows.append(row)
            n = 1 if nodes[nid].is_variable else output_count(nid)
            self.counts.append(n)
            row += n
        self.n_entries = row
        self.input_slots = input_slots
        #: per position: the slots' names and the parsed parameters (or the parser's
        #: refusal), made once and shared by the shape and the dtype pass
        self._slots: dict[int, list[str]] = {}
        self._params: dict[int, dict[str, Any] | op_params.ParamError] = {}
        self.inputs: list[list[int]] = []
        for nid in self.order:
            ids = []
            for src, idx, _ in nodes[nid].inputs:
                ids.append(self.rows[self.position[src]] + idx)
            self.inputs.append(ids)

    def slots_of(self, nid: int) -> list[str]:
        found = self._slots.get(nid)
        if found is None:
            found = self._slots[nid] = self.input_slots(nid)
        return found

    def params_of(self, k: int) -> dict[str, Any]:
        """The parsed parameters of the node at position ``k`` (ParamError re-raised)."""
        found = self._params.get(k)
        if found is None:
            node = self.nodes[self.order[k]]
            found = self._params[k] = parsed(node.op, node.attrs)
        if isinstance(found, op_params.ParamError):
            raise found
        return found

    def entry(self, nid: int, index: int) -> int:
        return self.rows[self.position[nid]] + index

    def descendants(self, nid: int) -> set[int]:
        """Positions of the nodes that read ``nid``'s outputs, directly or not."""
        start = self.position[nid]
        bad = {start}
        first = self.rows[start]
        tainted = set(range(first, first + self.counts[start]))
        for k in range(start + 1, len(self.order)):
            if any(e in tainted for e in self.inputs[k]):
                bad.add(k)
                tainted.update(range(self.rows[k], self.rows[k] + self.counts[k]))
        return bad


class _Pass:
    """One run of MXNet's fixed-point inference for shapes (``kind="shape"``) or dtypes."""

    def __init__(self, graph: Graph, kind: str, given: Mapping[int, Any],
                 oracle: Oracle | None, hint_key: str,
                 parse_hint: Callable[[str], Any], is_none: Callable[[Any], bool],
                 n_unknown: Callable[[Any], int]):
        self.g = graph
        self.kind = kind
        self.oracle = oracle
        self.hint_key = hint_key
        self.parse_hint = parse_hint
        self.is_none = is_none
        self.n_unknown = n_unknown
        self.values: list[Any] = [None] * graph.n_entries
        for nid, value in given.items():
            if nid in graph.position:
                self.values[graph.entry(nid, 0)] = value
        self.finished = [False] * len(graph.order)
        #: entries whose shape depends on the data (MXNet's is_dynamic)
        self.dynamic = bytearray(graph.n_entries)
        self.any_dynamic = False
        self.failure: Failure | None = None
        self.unruled: list[int] = []
        self.asked: list[int] = []
        self._rules: list[Rule | None | bool] = [False] * len(graph.order)

    def rule(self, k: int) -> Rule | None:
        found = self._rules[k]
        if found is False:
            found = registry.rule_for(self.g.nodes[self.g.order[k]].op)
            self._rules[k] = found
        return found  # type: ignore[return-value]

    def step(self, k: int) -> None:
        if self.finished[k]:
            return
        g = self.g
        nid = g.order[k]
        node = g.nodes[nid]
        row = g.rows[k]
        values = self.values
        if node.is_variable:
            if self.is_none(values[row]):
                text = node.attrs.get(self.hint_key)
                if text is not None:
                    try:
                        values[row] = self.parse_hint(text)
                    except ValueError:
                        self.fail(k, RuleError(f"attribute {self.hint_key}={text!r} is "
                                               f"not a {self.kind}", attr=self.hint_key))
                        return
            if not self.is_none(values[row]):
                self.finished[k] = True
            return
        rule = self.rule(k)
        in_ids = g.inputs[k]
        ins = [values[e] for e in in_ids]
        outs = values[row:row + g.counts[k]]
        if self.kind == "shape" and rule is not None and (
                rule.shape is no_shape or (self.any_dynamic and any(
                    v is None and self.dynamic[e] for e, v in zip(in_ids, ins)))):
            # MXNet: no shape function, or an input whose rank depends on the data
            for i, v in enumerate(outs):
                if v is None:
                    self.dynamic[row + i] = 1
                    self.any_dynamic = True
            self.finished[k] = True
            return
        try:
            if rule is None:
                if self.oracle is None:
                    if nid not in self.unruled:
                        self.unruled.append(nid)
                    self.finished[k] = True
                    return
                try:
                    if self.kind == "shape":
                        ins, outs = self.oracle.shapes(node, ins, outs)
                    else:
                        ins, outs = self.oracle.dtypes(node, ins, outs)
                except NoAnswer:
                    if nid not in self.unruled:
                        self.unruled.append(nid)
                    self.finished[k] = True
                    return
                if nid not in self.asked:
                    self.asked.append(nid)
            else:
                p = g.params_of(k)
                call = Call(node.op, p, node.attrs, ins, outs, g.slots_of(nid), self.kind,
                            node.extra, lambda: [g.nodes[s].name for s, _, _ in node.inputs],
                            self.oracle)
                if self.kind == "shape":
                    rule.shape(call)
                else:
                    rule.dtype(call)
        except op_params.ParamError as exc:
            self.fail(k, RuleError(str(exc), attr=exc.attr))
            return
        except RuleError as exc:
            self.fail(k, exc)
            return
        except Exception as exc:  # a rule's own bug must not take the window down
            self.fail(k, RuleError(f"mxexplorer's {self.kind} rule for {node.op} failed "
                                   f"({type(exc).__name__}: {exc}); please report it"))
            return
        done = True
        shape = self.kind == "shape"
        for e, v in zip(in_ids, ins):
            values[e] = v
            if v is None or (shape and -1 in v):
                done = False
        for i, v in enumerate(outs):
            values[row + i] = v
            if v is None or (shape and -1 in v):
                done = False
        self.finished[k] = done

    def fail(self, k: int, error: RuleError) -> None:
        self.finished[k] = True
        if self.failure is None:
            self.failure = Failure(self.g.order[k], error)

    def count_unknown(self) -> int:
        if self.kind == "dtype":
            return self.values.count(None)
        n = 0                                  # shapes: unknown ranks and dimensions
        for v in self.values:
            if v is None:
                n += 1
            elif -1 in v:
                n += v.count(-1)
        return n

    def only_variables_unfinished(self) -> bool:
        nodes, order = self.g.nodes, self.g.order
        return all(done or nodes[order[k]].is_variable
                   for k, done in enumerate(self.finished))

    def run(self) -> Inferred:
        n = len(self.g.order)
        # MXNet starts the shape pass from "infinitely many unknown" and the dtype pass
        # from "every entry unknown": a dtype sweep that learns nothing ends it
        num_unknown = self.g.n_entries if self.kind == "dtype" else 1 << 62
        last_iter = False
        sweep = 0
        while True:
            if sweep % 2 == 0:
                for k in range(n):
                    self.step(k)
            else:
                for k in range(n - 1, -1, -1):
                    self.step(k)
            last = num_unknown
            num_unknown = self.count_unknown()
            again = num_unknown > 0 and last > num_unknown
            if not again and not last_iter:
                # MXNet sweeps once more while a node is unfinished; when everything is
                # known and only variables (whose step does nothing more) are left,
                # that sweep cannot change a value: skip it
                again = not (num_unknown == 0 and self.only_variables_unfinished()) \
                    and not all(self.finished)
                last_iter = True
            sweep += 1
            if not again:
                break
        if self.failure is not None:
            # what depends on the broken node is not known: say nothing of it
            for k in self.g.descendants(self.failure.node):
                row = self.g.rows[k]
                for i in range(self.g.counts[k]):
                    self.values[row + i] = None
        out: dict[tuple[int, int], Any] = {}
        for k, nid in enumerate(self.g.order):
            row = self.g.rows[k]
            for i in range(self.g.counts[k]):
                out[(nid, i)] = self.values[row + i]
        return Inferred(out, self.failure, self.unruled, self.asked, sweep)


def _shape_hint(text: str) -> MaybeShape:
    parsed = op_params.parse_tuple(text)
    return legacy_to_shape(parsed)


def legacy_to_shape(shape: Sequence[int] | None) -> MaybeShape:
    """A shape as the user or a file gives it (MXNet's legacy convention: 0 is an unknown
    dimension, ``()`` an unknown shape) -> the engine's (-1, None)."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(d if d > 0 else -1 for d in shape)


def shape_to_legacy(shape: MaybeShape) -> tuple[int, ...] | None:
    """The engine's shape -> what MXNet's Python API reports (0 for unknown dimensions,
    None for an unknown shape; a numpy op's scalar ``()`` reads as unknown there too)."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(d if d >= 0 else 0 for d in shape)


def _shape_unknown(shape: MaybeShape) -> int:
    if shape is None:
        return 1
    return sum(1 for d in shape if d < 0)


def _dtype_hint(text: str) -> str | None:
    code = op_params.parse_int(text)
    if code == -1:
        return None
    if code not in DTYPE_CODES:
        raise ValueError(text)
    return DTYPE_CODES[code]


def infer_shapes(graph: Graph, given: Mapping[int, MaybeShape],
                 oracle: Oracle | None = None) -> Inferred:
    """Shapes of every entry.  ``given``: variable node -> shape (engine convention)."""
    return _Pass(graph, "shape", given, oracle, "__shape__", _shape_hint,
                 lambda s: s is None or (len(s) > 0 and min(s) < 0), _shape_unknown).run()


def infer_dtypes(graph: Graph, given: Mapping[int, str],
                 oracle: Oracle | None = None) -> Inferred:
    """Dtypes of every entry.  ``given``: variable node -> dtype name."""
    return _Pass(graph, "dtype", given, oracle, "__dtype__", _dtype_hint,
                 lambda t: t is None, lambda t: 1).run()


def graph_of(nodes: Sequence[Node], order: Sequence[int],
             row_hint: Callable[[int], int | None] | None = None) -> Graph:
    """The engine's view of parsed nodes (output counts and slots from the op table)."""
    def count(nid: int) -> int:
        node = nodes[nid]
        fixed = opinfo.static_output_count(node.op)
        if fixed is not None:
            return fixed
        hint = row_hint(nid) if row_hint is not None else None
        return opinfo.outputs(node.op, node.attrs, hint)[0]

    def slots(nid: int) -> list[str]:
        node = nodes[nid]
        return opinfo.input_slots(node.op, node.attrs, len(node.inputs),
                                  node.extra.get("subgraphs"))
    return Graph(nodes, order, count, slots)


__all__ = ["Failure", "Graph", "Inferred", "NoAnswer", "Oracle", "graph_of", "infer_dtypes",
           "infer_shapes", "legacy_to_shape", "shape_to_legacy", "same_type"]
