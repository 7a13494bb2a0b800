"""The public Python API: open a graph or a checkpoint, infer, plan, render, diff and
export it, from a script or a notebook.

Every name a user may rely on is listed in ``mxexplorer.__all__`` (checked by
``tests/test_api.py``); the modules under ``mxexplorer.core`` may move, these names stay.
The command line prints what these objects return (``to_dict()`` is what ``--json``
prints).  Never imports Qt or pyqtgraph; MXNet only where it must answer (shapes, the
cost of a plan, an ``mx.sym.Symbol``), imported on first use.
"""
from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping, Sequence

from mxexplorer.core.analysis import diff as graph_diff
from mxexplorer.core.analysis import report, stats
from mxexplorer.core.analysis.shapes import Shape, infer_document
from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument, GraphSnapshot
from mxexplorer.core.planning import jobs, memplan, plansearch, plantags
from mxexplorer.core.planning.model import Plan, PlanResult, Probe
from mxexplorer.core.render import blocks, drawing, metrics
from mxexplorer.core.render.layered import layered_layout
from mxexplorer.core.runtime import files, gpu
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.graphviz import DotTimeout, run_dot
from mxexplorer.core.runtime.mxnet_env import import_mxnet
from mxexplorer.core.runtime.progress import Progress, no_progress

ShapeMap = Mapping[str, Sequence[int]]

#: a notebook's picture folds the graph into blocks above this many drawn nodes (the
#: window and ``render`` fold above :data:`blocks.COLLAPSE_ABOVE`; a notebook cell is
#: smaller than a window)
NOTEBOOK_BLOCKS_ABOVE = 300
#: graphviz's time for a notebook's picture before mxexplorer's layered layout is drawn
NOTEBOOK_DOT_SECONDS = 15.0


class InferenceError(UserError):
    """Shape inference stopped at a node: ``node`` and ``op`` name it, the message says
    which input has which shape and what the node needs."""

    def __init__(self, message: str, node: str | None = None, op: str | None = None):
        super().__init__(message)
        self.node = node
        self.op = op


class ShapesMissing(UserError):
    """No input shape was given and the file has none: ``inputs`` names the inputs."""

    def __init__(self, inputs: Sequence[str]):
        example = inputs[0] if inputs and inputs[0].isidentifier() else "data"
        super().__init__(f"give the input shapes, e.g. {example}=(1, 3, 224, 224) "
                         f"(inputs: {', '.join(inputs) or 'none'})")
        self.inputs = list(inputs)


def write_text(path: str | os.PathLike[str], text: str, overwrite: bool = False) -> None:
    """``text`` to ``path`` atomically (a complete new file or the old one, never a
    part); an existing file is kept unless ``overwrite``."""
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise UserError(f"{path} exists; pass overwrite=True to replace it")
    files.write_atomic(path, text.encode("utf-8"))


def as_shapes(shapes: ShapeMap | None, extra: Mapping[str, Any]) -> dict[str, Shape]:
    """``shapes`` and keyword shapes as ``{name: (d1, d2, ...)}``, each checked."""
    merged: dict[str, Any] = dict(shapes or {})
    merged.update(extra)
    out: dict[str, Shape] = {}
    for name, dims in merged.items():
        try:
            shape = tuple(int(d) for d in dims)
        except (TypeError, ValueError):
            raise UserError(f"the shape of {name!r} must be a sequence of whole numbers, "
                            f"not {dims!r}") from None
        if not shape or any(d <= 0 for d in shape) or shape != tuple(dims):
            raise UserError(f"the shape of {name!r} must be whole numbers above 0, "
                            f"not {dims!r}")
        out[str(name)] = shape
    return out


class Graph:
    """An MXNet symbol graph, with its checkpoint when one is beside the file.

    Made by :func:`open`, :func:`load` or :meth:`from_symbol`.  The graph is the JSON
    itself: opening, listing and drawing need no MXNet.

    Examples
    --------
    >>> import mxexplorer
    >>> g = mxexplorer.open(mxexplorer.example("mlp"))
    >>> g.inputs, g.outputs
    (['data', 'softmax_label'], ['softmax_output'])
    """

    def __init__(self, document: GraphDocument):
        self._doc = document
        self._svg: tuple[int, str] | None = None     # the notebook's picture, by revision

    # ------------------------------------------------------------ making one
    @classmethod
    def from_json(cls, text: str, path: str | None = None) -> Graph:
        """A graph from symbol JSON text (what ``sym.tojson()`` gives)."""
        return cls(GraphDocument.from_json(text, path))

    @classmethod
    def from_symbol(cls, symbol: Any) -> Graph:
        """A graph from an ``mx.sym.Symbol`` (its ``tojson()``)."""
        if not hasattr(symbol, "tojson"):
            raise UserError(f"expected an mx.sym.Symbol, not {type(symbol).__name__}")
        return cls.from_json(symbol.tojson())

    # ------------------------------------------------------------ what it is
    @property
    def document(self) -> GraphDocument:
        """The underlying document (mxexplorer's own model; may change between versions)."""
        return self._doc

    @property
    def path(self) -> str | None:
        """The symbol file, or None for a graph made in memory."""
        return self._doc.path

    @property
    def params_path(self) -> str | None:
        """The checkpoint (``prefix-NNNN.params``) beside the file, if any."""
        return self._doc.params_path

    @property
    def inputs(self) -> list[str]:
        """The data inputs (variables that are neither parameters nor auxiliary states)."""
        return [self._doc.nodes[i].name for i in self._doc.data_inputs()]

    @property
    def outputs(self) -> list[str]:
        """``sym.list_outputs()``."""
        return [e.name for e in self._doc.output_entries()]

    @property
    def internals(self) -> list[str]:
        """``sym.get_internals().list_outputs()``, in MXNet's order."""
        return self._doc.internal_names()

    @property
    def ops(self) -> dict[str, int]:
        """How many nodes of each op, the most frequent first."""
        return dict(report.info(self._doc)["ops"])

    def info(self) -> dict[str, Any]:
        """Format, counts, inputs, outputs, parameters, auxiliary states, the op
        histogram, unknown ops and duplicate names (what ``mxexplorer info --json``
        prints)."""
        return report.info(self._doc)

    def __repr__(self) -> str:
        where = f" {os.path.basename(self.path)!r}" if self.path else ""
        ops = sum(self.ops.values())
        return (f"<mxexplorer.Graph{where}: {ops} operators, {len(self.internals)} "
                f"internals, inputs {self.inputs}>")

    # ------------------------------------------------------------ analysis
    def _given(self, shapes: ShapeMap | None, extra: Mapping[str, Any]) -> dict[str, Shape]:
        given = as_shapes(shapes, extra)
        if not given:
            names = set(self.inputs)
            given = {k: v for k, v in self._doc.shape_hints().items() if k in names}
        if not given:
            raise ShapesMissing(self.inputs)
        return given

    def infer(self, shapes: ShapeMap | None = None, *, dtype: str = "float32",
              strict: bool = True, **shape_kw: Sequence[int]) -> Inference:
        """Every internal's shape, with parameters, MACs and memory (needs MXNet).

        Parameters
        ----------
        shapes : ``{input: shape}``; keyword arguments add to it (``data=(1, 3, 224,
            224)``).  Without any, the file's ``__shape__`` hints.
        dtype : the inputs' dtype.
        strict : raise :class:`InferenceError` when inference stops at a node (else
            the result carries ``error`` and the shapes found up to there).

        Raises
        ------
        InferenceError : the node that makes the shapes inconsistent, named.
        """
        given = self._given(shapes, shape_kw)
        analysis = stats.analyze(self._doc.snapshot(), given, {k: dtype for k in given})
        found = Inference(self, analysis)
        err = analysis.shapes.error
        if strict and err is not None:
            raise InferenceError(f"shape inference stopped at {err.one_line()}",
                                 None if err.node == "?" else err.node, err.op)
        return found

    def plan(self, shapes: ShapeMap | None = None, *, search: str = "best",
             ctx: str = "cpu", stages: str | None = None, threshold_mb: int | None = None,
             within_mb: float | None = None, for_device: str | None = None,
             dtype: str = "float32", isolate: bool = True,
             progress: Progress | None = None, **shape_kw: Sequence[int]) -> PlanReport:
        """The memory plan for training at ``shapes`` (mirroring, as memonger does).

        Parameters
        ----------
        search : "best", "fast", "thorough" or "original" (memonger's own 9 probes).
        ctx : the device whose cost is measured: "cpu" or "gpu:N".
        stages : "file" (the graph's ``mirror_stage`` tags), "auto" (cut vertices) or
            None (the file's when it has any, else automatic).
        threshold_mb : plan at this threshold exactly as the original memonger does.
        within_mb : the plan that recomputes least within this many MB, instead of the
            least memory.
        for_device : "gpu" to plan on the CPU for a GPU (cuDNN BatchNorm is then never
            recomputed).
        isolate : run MXNet in a child process (a crash in MXNet costs an error, not
            the caller); False runs it here.
        progress : ``progress(done, total, message)``, called as the search goes.

        Raises
        ------
        UserError : shapes that do not fit, a device that cannot run, a graph without
            stages when ``stages="file"``.
        """
        gpu.check(ctx)
        if for_device not in (None, "cpu", "gpu"):
            raise UserError(f"for_device must be 'cpu' or 'gpu', not {for_device!r}")
        given = self._given(shapes, shape_kw)
        snap = self._doc.snapshot()
        run = jobs.plan if isolate else memplan.plan
        try:
            result = run(snap, given, ctx, stages, threshold_mb, search, dtype=dtype,
                         progress=progress or no_progress, target=for_device)
        except memplan.NoStagesError as exc:
            raise memplan.NoStagesError(f"{exc}: tag the stage nodes mirror_stage, or plan "
                                        "with stages='auto' (cut vertices)") from None
        report = PlanReport(snap, result, result.best, ctx)
        return report.within(within_mb) if within_mb is not None else report

    def render(self, path: str | os.PathLike[str] | None = None, *,
               shapes: ShapeMap | None = None,
               fmt: str | None = None, show_params: bool = False,
               blocks_above: int | None = None, colour: str | None = None,
               title: str | None = None, legend: bool = True, dpi: int | None = None,
               time_limit: float = 60.0, **shape_kw: Sequence[int]) -> Picture:
        """The graph drawn by graphviz, as the window and ``mxexplorer render`` draw it.

        Parameters
        ----------
        path : write the picture there (the format from its extension: .svg, .png,
            .pdf); None keeps it in memory.
        shapes : label every edge with its shape (needs MXNet); keyword arguments add
            to it (``data=(1, 3, 224, 224)``).
        fmt : "svg", "png" or "pdf" when ``path`` is None ("svg").
        blocks_above : fold repeated structure into blocks above this many nodes
            (0: always; by default above 1,500 as in the window).
        colour : "memory", "macs" or "params" (needs ``shapes``).
        dpi : a PNG's resolution (150).
        time_limit : graphviz's seconds before mxexplorer's own layered layout is drawn.
        """
        path = os.fspath(path) if path is not None else None
        fmt = drawing.format_for(path) if path else (fmt or "svg")
        if fmt not in drawing.FORMATS:
            raise UserError(f"unknown picture format {fmt!r}: use svg, png or pdf")
        result = None
        shapes = as_shapes(shapes, shape_kw) or None
        if shapes:
            result = infer_document(self._doc, self._doc.to_json(indent=None), shapes,
                                    param_shapes=self._doc.param_shapes())
            if result.error is not None:
                err = result.error
                raise InferenceError(f"shape inference stopped at {err.one_line()}",
                                     None if err.node == "?" else err.node, err.op)
        picture = draw(self._doc, fmt, result, show_params=show_params,
                       blocks_above=blocks_above, colour=colour, title=title, legend=legend,
                       dpi=dpi, time_limit=time_limit)
        if path:
            files.write_atomic(path, picture.data)
        return picture

    def _repr_svg_(self) -> str:
        """A notebook shows the graph (folded into blocks when big; after
        :data:`NOTEBOOK_DOT_SECONDS` of graphviz, mxexplorer's own layout), drawn once
        per revision of the graph."""
        revision = self._doc.revision
        if self._svg is None or self._svg[0] != revision:
            picture = self.render(blocks_above=NOTEBOOK_BLOCKS_ABOVE,
                                  time_limit=NOTEBOOK_DOT_SECONDS)
            self._svg = (revision, picture.data.decode("utf-8"))
        return self._svg[1]

    def to_onnx(self, path: str | os.PathLike[str], shapes: ShapeMap | None = None, *,
                opset: int = onnx_export.DEFAULT_OPSET, check: bool = True,
                inputs: str | None = None, progress: Progress | None = None,
                **shape_kw: Sequence[int]) -> onnx_export.ExportReport:
        """Export to ONNX (with the checkpoint beside the file, else random weights
        that look trained) and, with ``check``, compare onnxruntime with MXNet.

        Returns the report: ``fixes`` (what was rewritten, in words), ``check.agree``
        and ``check.verdict()`` (naming the first node that differs, if any).

        Raises
        ------
        UserError : ops without an ONNX meaning (each node named), a failed export.
        """
        given = self._given(shapes, shape_kw)
        return onnx_export.export_snapshot(self._doc.snapshot(), given, os.fspath(path),
                                           opset=opset,
                                           check=check, inputs=inputs,
                                           progress=progress or no_progress)

    def diff(self, other: Graph | str, *, params: bool = False,
             shapes: ShapeMap | None = None) -> Diff:
        """What differs from ``other`` (a Graph or a path): see :func:`diff`."""
        return diff(self, other, params=params, shapes=shapes)

    # ------------------------------------------------------------ out
    def to_json(self, indent: int | None = 2) -> str:
        """The graph as symbol JSON (edits and plans included)."""
        return self._doc.to_json(indent=indent)

    def symbol(self) -> Any:
        """The graph as an ``mx.sym.Symbol`` (needs MXNet)."""
        return import_mxnet().sym.load_json(self._doc.to_json(indent=None))

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the symbol JSON to ``path`` atomically; an existing file is kept unless
        ``overwrite``."""
        write_text(path, self.to_json(), overwrite)


@dataclass(frozen=True, repr=False)
class Picture:
    """A drawing of a graph: its bytes in ``fmt``, the nodes drawn and any notes (graph
    folded into blocks, layered layout used)."""

    data: bytes
    fmt: str
    nodes: int
    edges: int = 0
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        notes = f"; {'; '.join(self.notes)}" if self.notes else ""
        return (f"<mxexplorer.Picture {self.fmt}, {len(self.data):,} bytes, {self.nodes} "
                f"nodes, {self.edges} edges{notes}>")

    def _repr_svg_(self) -> str | None:
        return self.data.decode("utf-8") if self.fmt == "svg" else None

    def _repr_png_(self) -> bytes | None:
        return self.data if self.fmt == "png" else None


def draw(doc: GraphDocument, fmt: str, result: Any = None, *, show_params: bool = False,
         blocks_above: int | None = None, colour: str | None = None,
         title: str | None = None, legend: bool = True, dpi: int | None = None,
         time_limit: float = 60.0) -> Picture:
    """The picture ``mxexplorer render`` and :meth:`Graph.render` draw: the graph folded
    into blocks above ``blocks_above`` nodes, graphviz's layout or, past
    ``time_limit``, mxexplorer's layered one."""
    by_entry = result.by_entry if result is not None else None
    graph = drawing.visible_graph(doc, show_params=show_params)
    limit = blocks.COLLAPSE_ABOVE if blocks_above is None else blocks_above
    tree = None
    notes: list[str] = []
    if len(graph.nodes) > limit:
        tree = blocks.block_tree(doc, graph)
        whole = len(graph.nodes)
        graph = blocks.collapse(graph, tree, blocks.default_expansion(tree))
        if limit:
            notes.append(f"{whole:,} nodes folded into blocks, as the window shows them")
    fills: dict[str, Any] = {}
    if colour:
        if result is None:
            raise UserError(f"colour by {colour} needs the input shapes")
        values = metrics.node_values(colour, stats.compute(doc, result))
        members = {n.id: tree.members(tree.by_id[n.id]) for n in graph.nodes
                   if tree is not None and n.id in tree.by_id}
        shades, scale = metrics.fills(colour, (n.id for n in graph.nodes), values, members)
        fills = {"fills": shades, "key": metrics.key(scale) if scale is not None else None}
    dots = (dpi or drawing.PNG_DPI) if fmt == "png" else 0
    dot_fmt = fmt if fmt != "png" else "png:cairo"

    def source(with_legend: bool) -> str:
        return drawing.styled_source(doc, graph, by_entry, legend=with_legend, title=title,
                                     dpi=dots, **fills)

    try:
        data = run_dot(source(legend), dot_fmt, time_limit=time_limit)
    except DotTimeout:
        layout = layered_layout(graph, drawing.layout_source(graph))
        data = run_dot(drawing.pinned_source(source(False), layout), dot_fmt, pinned=True)
        notes.append(f"graphviz dot did not finish within {time_limit:g} s: drawn with "
                     "mxexplorer's layered layout (straight edges, no legend)")
    return Picture(data, fmt, len(graph.nodes), len(graph.edges), tuple(notes))


class Inference:
    """Shapes and figures at given input shapes (:meth:`Graph.infer`).

    ``shapes`` maps every internal name to its shape (None where unknown), in MXNet's
    order, and ``bytes`` to its memory (a name a file uses twice keeps its last: ``rows``
    has every internal); ``params``, ``macs``, ``flops`` (2 x MACs) and
    ``activation_bytes`` (every operator output of one forward pass) are totals;
    ``by_op`` is the op summary.
    """

    def __init__(self, graph: Graph, analysis: stats.AnalysisResult):
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


class PlanReport:
    """A memory plan and the search behind it (:meth:`Graph.plan`).

    ``baseline_mb`` and ``planned_mb`` are MXNet's own ``Total N MB allocated`` for
    training without and with the plan; ``front`` the plans no other beats on both
    memory and recompute; :meth:`symbol` the planned graph to bind and train.
    """

    def __init__(self, snapshot: GraphSnapshot, result: PlanResult, plan: Plan | None,
                 ctx: str = "cpu", within_mb: float | None = None):
        self._snap = snapshot
        #: the search's result (every probe, the stages, the figures)
        self.result = result
        #: the chosen plan (None: the unplanned graph, nothing tagged)
        self.plan = plan
        #: the device the figures were measured on
        self.ctx = ctx
        #: the budget the plan was chosen within (None: the least memory)
        self.within_mb = within_mb

    @property
    def baseline_mb(self) -> float:
        return self.result.baseline_mb

    @property
    def planned_mb(self) -> float:
        """The plan's MB (the unplanned graph's when no plan beats it)."""
        return self.plan.cost_mb if self.plan is not None else self.result.baseline_mb

    @property
    def saving(self) -> float:
        """The share of the unplanned graph's memory the plan saves."""
        base = self.result.baseline_mb
        return 1 - self.planned_mb / base if base else 0.0

    @property
    def recompute_share(self) -> float:
        """The share of the forward pass's MACs recomputed in backward."""
        return self.plan.recompute_share if self.plan is not None else 0.0

    @property
    def summary(self) -> str:
        """The plan in words."""
        if self.plan is None and self.within_mb is not None:
            return (f"The unplanned graph needs {self.result.baseline_mb:,.0f} MB, within the "
                    f"{self.within_mb:,.0f} MB asked: nothing is recomputed.")
        if self.plan is None:
            return "No plan beats the unplanned graph; nothing is tagged."
        return plansearch.describe(self.result, self.plan)

    @property
    def probes(self) -> tuple[Probe, ...]:
        """Every plan the search costed."""
        return self.result.probes

    @property
    def front(self) -> list[Probe]:
        """The plans no other beats on both memory and recompute, by memory."""
        return plansearch.front(self.result.probes)

    def within(self, mb: float) -> PlanReport:
        """The plan of this search that recomputes least within ``mb`` MB: the
        unplanned graph itself (no plan, nothing recomputed) when it fits.

        Raises
        ------
        UserError : no plan needs ``mb`` MB or less (the least is named).
        """
        if self.result.baseline_mb <= mb:
            return PlanReport(self._snap, self.result, None, self.ctx, within_mb=mb)
        doc = GraphDocument.from_snapshot(self._snap)
        pick = plansearch.pick_within(self.result.probes, mb)
        return PlanReport(self._snap, self.result, self.result.plan_for(doc, pick),
                          self.ctx, within_mb=mb)

    def to_json(self, indent: int | None = 2) -> str:
        """The planned graph: symbol JSON with the plan's ``__force_mirroring__`` tags."""
        if self.plan is None:         # the graph without any force_mirroring tag
            doc = GraphDocument.from_snapshot(self._snap)
            return symbol_io.dumps(plantags.tagged_dict(doc, {}), indent=indent)
        return memplan.planned_json(self._snap, self.result, indent=indent, plan=self.plan)

    def graph(self) -> Graph:
        """The planned graph as a :class:`Graph`."""
        return Graph.from_json(self.to_json())

    def symbol(self) -> Any:
        """The planned graph as an ``mx.sym.Symbol``, ready to bind and train."""
        return import_mxnet().sym.load_json(self.to_json(indent=None))

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the planned graph atomically; an existing file is kept unless
        ``overwrite``."""
        write_text(path, self.to_json(), overwrite)

    def to_dict(self) -> dict[str, Any]:
        """What ``mxexplorer plan --json`` prints (less the file and output fields)."""
        best, result = self.plan, self.result
        return {
            "device": self.ctx,
            "shapes": {k: list(v) for k, v in result.shapes.items()},
            "baseline_mb": result.baseline_mb, "planned_mb": self.planned_mb,
            "saving": self.saving,
            "threshold_mb": best.threshold_mb if best else None,
            "stages": len(result.stages), "stage_source": result.stage_source,
            "kept": len(best.kept) if best else 0,
            "recompute_macs": best.recompute_macs if best else 0,
            "forward_macs": best.forward_macs if best else 0,
            "recompute_share": best.recompute_share if best else 0.0,
            "seconds": result.seconds,
            "summary": plansearch.describe(result, best) if best else "",
            "state_bytes": result.state_bytes,
            "front": [{"cost": p.cost_mb, "recompute_share": p.recompute_share}
                      for p in self.front],
            "probes": [p.to_dict() for p in result.probes],
        }

    def __repr__(self) -> str:
        change = -self.saving + 0.0         # + 0.0: no "-0%"
        return (f"<mxexplorer.PlanReport: {self.baseline_mb:,.0f} MB unplanned, "
                f"{self.planned_mb:,.0f} MB planned ({change:+.0%}), recomputes "
                f"{self.recompute_share:.0%} of a forward pass>")


class Diff:
    """What differs between two graphs (:func:`diff`): nodes matched by name, then by
    structure; ``same``, ``summary`` and the lists of names."""

    def __init__(self, a: Graph, b: Graph, found: graph_diff.GraphDiff):
        self.a, self.b, self._found = a, b, found

    @property
    def same(self) -> bool:
        return self._found.same

    @property
    def summary(self) -> str:
        return self._found.summary()

    def to_dict(self) -> dict[str, Any]:
        """What ``mxexplorer diff --json`` prints (less the file names)."""
        return self._found.to_dict(self.a.document, self.b.document)

    @property
    def changed(self) -> list[dict[str, Any]]:
        return list(self.to_dict()["changed"])

    @property
    def added(self) -> list[str]:
        return list(self.to_dict()["added"])

    @property
    def removed(self) -> list[str]:
        return list(self.to_dict()["removed"])

    @property
    def renamed(self) -> list[tuple[str, str]]:
        return [(r["a"], r["b"]) for r in self.to_dict()["renamed"]]

    @property
    def result(self) -> graph_diff.GraphDiff:
        return self._found

    def __bool__(self) -> bool:
        """True when the graphs differ."""
        return not self.same

    def __repr__(self) -> str:
        return f"<mxexplorer.Diff: {self.summary}>"


def _graph(obj: Graph | str | Any) -> Graph:
    return obj if isinstance(obj, Graph) else load(obj)


def diff(a: Graph | str | Any, b: Graph | str | Any, *, params: bool = False,
         shapes: ShapeMap | None = None) -> Diff:
    """Compare two graphs (Graphs, paths or symbols).

    Parameters
    ----------
    params : compare the checkpoints beside the two files tensor by tensor too.
    shapes : infer both at these input shapes and compare the shapes as well.
    """
    ga, gb = _graph(a), _graph(b)
    shapes_a = shapes_b = None
    stopped: dict[str, str | None] = {}
    if shapes:
        given = as_shapes(shapes, {})
        inferred = {side: infer_document(g.document, g.to_json(indent=None), given,
                                         param_shapes=g.document.param_shapes())
                    for side, g in (("a", ga), ("b", gb))}
        shapes_a, shapes_b = inferred["a"].by_entry, inferred["b"].by_entry
        stopped = {side: r.error.one_line() if r.error is not None else None
                   for side, r in inferred.items()}
    found = graph_diff.compare(ga.document, gb.document, shapes_a, shapes_b, stopped)
    if params:
        if not ga.params_path or not gb.params_path:
            missing = ga.path if not ga.params_path else gb.path
            raise UserError(f"comparing checkpoints: no checkpoint beside {missing} "
                            "(prefix-symbol.json with prefix-NNNN.params)")
        graph_diff.compare_params(found, ga.document, gb.document, ga.params_path,
                                  gb.params_path)
    return Diff(ga, gb, found)


def open(path: str | os.PathLike[str]) -> Graph:  # noqa: A001 - the API's verb
    """Open a symbol file, or a checkpoint pair from either of its files
    (``prefix-symbol.json`` finds the newest ``prefix-NNNN.params`` beside it).

    Raises
    ------
    UserError : a missing, unreadable or damaged file, in one line.
    """
    return Graph(GraphDocument.open(os.fspath(path)))


def load(obj: Any) -> Graph:
    """A graph from a path, symbol JSON text, a JSON dict or an ``mx.sym.Symbol``."""
    if isinstance(obj, Graph):
        return obj
    if isinstance(obj, os.PathLike):
        return open(obj)
    if isinstance(obj, str):
        return Graph.from_json(obj) if obj.lstrip().startswith("{") else open(obj)
    if isinstance(obj, dict):
        return Graph.from_json(json.dumps(obj))
    return Graph.from_symbol(obj)


def example(name: str = "resnet18_v1") -> str:
    """The path of a bundled example: "resnet18_v1" (a Gluon export) or "mlp" (a
    checkpoint pair with its ``.params``)."""
    known = ("resnet18_v1", "mlp")
    if name not in known:
        raise UserError(f"no bundled example {name!r}: there are {', '.join(known)}")
    return str(resources.files("mxexplorer.resources") / "examples"
                        / f"{name}-symbol.json")

