"""What an inference and a comparison of two graphs give (:meth:`Graph.infer`,
:func:`mxexplorer.diff`).  No Qt."""
from __future__ import annotations

import html
from typing import Any, Protocol

from mxexplorer.core.analysis import diff as graph_diff
from mxexplorer.core.analysis import report, stats
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument


class GraphLike(Protocol):
    """What the results need of a :class:`mxexplorer.Graph`."""

    @property
    def document(self) -> GraphDocument: ...

    @property
    def internals(self) -> list[str]: ...


class Inference:
    """Shapes and figures at given input shapes (:meth:`Graph.infer`).

    ``shapes`` maps every internal name to its shape (None where unknown), in MXNet's
    order, and ``bytes`` to its memory (a name a file uses twice keeps its last: ``rows``
    has every internal); ``params``, ``macs``, ``flops`` (2 x MACs) and
    ``activation_bytes`` (every operator output of one forward pass) are totals;
    ``by_op`` is the op summary.
    """

    def __init__(self, graph: GraphLike, analysis: stats.AnalysisResult):
        self.graph = graph
        self._analysis = analysis
        result = analysis.shapes
        self.shapes: dict[str, Shape | None] = dict(zip(graph.internals,
                                                        result.internal_shapes))
        st = analysis.stats
        #: bytes of every internal at these shapes (inputs and weights included)
        self.bytes: dict[str, int] = {
            e.name: st.per_entry_bytes.get((e.node, e.index), 0)
            for e in graph.document.internals()}
        self.params: int = st.params
        self.aux_values: int = st.aux_values
        self.macs: int = st.macs
        self.flops: int = st.flops
        self.activation_bytes: int = st.activation_bytes
        err = result.error
        self.error: str | None = None if err is None else err.one_line()
        #: who answered: "engine" (mxexplorer's own rules), "engine+mxnet" (MXNet for
        #: the ops without a rule)
        self.inferred_by: str = result.inferred_by

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every internal in MXNet's order (name, op, shape, dtype, bytes, params, MACs):
        the names of a file may repeat, where ``shapes`` keeps the last of each."""
        return list(self.to_dict()["internals"])

    @property
    def complete(self) -> bool:
        """Every internal's shape is known."""
        return self._analysis.shapes.complete

    @property
    def by_op(self) -> list[dict[str, Any]]:
        """One row per op type: count, params, MACs, memory and their shares."""
        return report.by_op(self.graph.document, self._analysis.stats)

    def to_dict(self) -> dict[str, Any]:
        """What ``mxexplorer infer --json`` prints."""
        return report.inference(self.graph.document, self._analysis.shapes,
                                self._analysis.stats)

    def __repr__(self) -> str:
        if self.error:
            return f"<mxexplorer.Inference: stopped at {self.error}>"
        return (f"<mxexplorer.Inference: {stats.human_count(self.params)} params, "
                f"{stats.human_count(self.macs)} MACs, "
                f"{stats.human_bytes(self.activation_bytes)} of activations>")

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(r['op'])}</td><td>{r['count']}</td>"
            f"<td>{stats.human_count(r['params'])}</td><td>{stats.human_count(r['macs'])}"
            f"</td><td>{r['macs_share']:.0%}</td>"
            f"<td>{stats.human_bytes(r['activation_bytes'])}</td></tr>" for r in self.by_op)
        return (f"<p>{html.escape(repr(self))}</p><table><tr><th>op</th><th>count</th>"
                "<th>params</th><th>MACs</th><th>share</th><th>memory</th></tr>"
                f"{rows}</table>")



class Diff:
    """What differs between two graphs (:func:`diff`): nodes matched by name, then by
    structure; ``same``, ``summary`` and the lists of names."""

    def __init__(self, a: GraphLike, b: GraphLike, found: graph_diff.GraphDiff):
        self.a, self.b, self._found = a, b, found

    @property
    def same(self) -> bool:
        """No node added, removed, renamed or changed, no tensor that differs."""
        return self._found.same

    @property
    def summary(self) -> str:
        """The differences counted in one line ("1 changed, 0 renamed, ...")."""
        return self._found.summary()

    def to_dict(self) -> dict[str, Any]:
        """What ``mxexplorer diff --json`` prints (less the file names)."""
        return self._found.to_dict(self.a.document, self.b.document)

    @property
    def changed(self) -> list[dict[str, Any]]:
        """Nodes on both sides that differ: ``{"a", "b", "attrs", "shapes"}`` each."""
        return list(self.to_dict()["changed"])

    @property
    def added(self) -> list[str]:
        """Names of the nodes only B has."""
        return [self.b.document.nodes[j].name for j in self._found.added]

    @property
    def removed(self) -> list[str]:
        """Names of the nodes only A has."""
        return [self.a.document.nodes[i].name for i in self._found.removed]

    @property
    def renamed(self) -> list[tuple[str, str]]:
        """(A's name, B's name) of the nodes matched by structure under another name."""
        return [(self.a.document.nodes[i].name, self.b.document.nodes[j].name)
                for i, j in self._found.renamed]

    @property
    def result(self) -> graph_diff.GraphDiff:
        """The comparison as mxexplorer's core holds it (node indices; may change)."""
        return self._found

    def __bool__(self) -> bool:
        """True when the graphs differ."""
        return not self.same

    def __repr__(self) -> str:
        return f"<mxexplorer.Diff: {self.summary}>"
