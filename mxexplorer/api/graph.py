"""A symbol graph opened for analysis: :class:`Graph`, :func:`open`, :func:`load`,
:func:`diff`, :func:`example`.  No Qt; MXNet only where it must answer."""
from __future__ import annotations

import functools
import json
import os
from importlib import resources
from typing import Any, Mapping, Sequence

from mxexplorer.api.common import InferenceError, ShapeMap, ShapesMissing, as_shapes, write_text
from mxexplorer.api.picture import NOTEBOOK_BLOCKS_ABOVE, NOTEBOOK_DOT_SECONDS, Picture, draw
from mxexplorer.api.plan import PlanReport
from mxexplorer.api.results import Diff, Inference
from mxexplorer.core.analysis import diff as graph_diff
from mxexplorer.core.analysis import report, stats
from mxexplorer.core.analysis.shapes import Shape, infer_document
from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import jobs, memplan
from mxexplorer.core.render import drawing
from mxexplorer.core.runtime import files, gpu
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet
from mxexplorer.core.runtime.progress import Progress, no_progress


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
        """Every internal's shape, with parameters, MACs and memory (mxexplorer's engine:
        no MXNet needed; MXNet is asked only about an op without a rule, where installed).

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
             time_limit: float = memplan.TIME_LIMIT,
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
            the caller; "best" forks that child to run its two searches side by side);
            False runs it here, the two searches one after the other.
        time_limit : the search's safety net in seconds.  The searches stop on counts of
            probes, so the plan is the same on any machine; one this cuts says so
            (``PlanReport.complete`` False, and in its ``summary``).
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
        # run here, the caller's process is never forked (a notebook's kernel)
        run = jobs.plan if isolate else functools.partial(memplan.plan, parallel=False)
        try:
            result = run(snap, given, ctx, stages, threshold_mb, search,
                         time_limit=time_limit, dtype=dtype,
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
        shapes : label every edge with its shape; keyword arguments add
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
            result = infer_document(self._doc, shapes,
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
                opset: int | None = None, check: bool = True,
                inputs: str | None = None, progress: Progress | None = None,
                via: str = "mxexplorer", reference: bool | None = None,
                **shape_kw: Sequence[int]) -> onnx_export.ExportReport:
        """Export to ONNX (with the checkpoint beside the file, else random weights
        that look trained) and, with ``check``, compare onnxruntime with MXNet.

        ``via="mxexplorer"`` (the default) converts with our own converters, without
        MXNet; ``opset`` None writes 13, or the lowest opset an op needs.  The check
        compares with MXNet's forward where MXNet is installed (``reference=False``:
        never), else runs onnxruntime alone and says no reference was available.
        ``via="mx2onnx"`` converts with MXNet's own converters (needs MXNet).

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
                                           progress=progress or no_progress, via=via,
                                           reference=reference)

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



def _graph(obj: Graph | str | Any) -> Graph:
    return obj if isinstance(obj, Graph) else load(obj)


def diff(a: Graph | str | Any, b: Graph | str | Any, *, params: bool = False,
         shapes: ShapeMap | None = None) -> Diff:
    """Compare two graphs: nodes matched by name, then by structure.

    Parameters
    ----------
    a, b : Graph, str, os.PathLike or mx.sym.Symbol
        The two graphs (anything :func:`load` takes).
    params : bool
        Compare the checkpoints beside the two files tensor by tensor too.
    shapes : mapping of str to tuple of int, optional
        Infer both at these input shapes and compare the shapes as well.

    Returns
    -------
    Diff
        ``same``, ``summary`` and the changed, added, removed and renamed nodes.
    """
    ga, gb = _graph(a), _graph(b)
    shapes_a = shapes_b = None
    stopped: dict[str, str | None] = {}
    if shapes:
        given = as_shapes(shapes, {})
        inferred = {side: infer_document(g.document, given,
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

    Parameters
    ----------
    path : str or os.PathLike
        A ``*-symbol.json`` (any generation MXNet wrote) or a ``*-NNNN.params``.

    Returns
    -------
    Graph
        The graph, its checkpoint in ``params_path`` when there is one.

    Raises
    ------
    UserError : a missing, unreadable or damaged file, in one line.
    """
    return Graph(GraphDocument.open(os.fspath(path)))


def load(obj: Any) -> Graph:
    """A graph from a path, symbol JSON text, a JSON dict or an ``mx.sym.Symbol``.

    Parameters
    ----------
    obj : Graph, str, os.PathLike, dict or mx.sym.Symbol
        Text that starts with ``{`` is JSON; other text is a path.

    Returns
    -------
    Graph
    """
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
