"""ONNX export through MXNet 1.9.1's own converters, with what they get wrong fixed on
the way in, and a check of the result against MXNet before anyone trusts it.

* Pre-flight: every operator whose op has no converter (MXNet 1.9.1 converts about 150
  op names) is listed by node before anything is converted.
* Faults fixed, each named in the report: ``fix_gamma=True`` BatchNorm gammas exported
  as ones (what MXNet computes with); a SoftmaxOutput head's label dropped (its
  inference meaning, softmax); ``onnx.mapping`` (gone in ONNX 1.19) provided; the opset
  the one asked for (``export_model`` writes the newest the ``onnx`` package knows).
* Check: MXNet and onnxruntime run the same inputs (random, a ``.npy`` or an image);
  every output is compared (largest absolute and relative difference, where, and top-1
  agreement for a classifier's scores) and the verdict is one line.

Runs in a child process (:func:`export_snapshot`); must not import Qt.
"""
from __future__ import annotations

import functools
import json
import os
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.convert import onnx_fixes
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.files import write_atomic
from mxexplorer.core.runtime.mxnet_env import failure, import_mxnet, mxnet_errors
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

ONNX_PINS = {"onnx": "1.14.1", "onnxruntime": "1.16.3"}
DEFAULT_OPSET = 13
TOLERANCE = 1e-4
MIN_OPSET = 12


class UnsupportedOps(UserError):
    """Operators the converter lacks: ``nodes`` is [(node id, name, op)]."""

    def __init__(self, nodes: list[tuple[int, str, str]]):
        self.nodes = nodes
        shown = ", ".join(f"{name} ({op})" for _, name, op in nodes[:6])
        more = f" and {len(nodes) - 6} more" if len(nodes) > 6 else ""
        ops = sorted({op for _, _, op in nodes})
        super().__init__(f"{len(nodes)} node(s) use ops MXNet's ONNX converter lacks "
                         f"({', '.join(ops)}): {shown}{more}; cut the graph before them "
                         "(Cut here / export up to an output) to export the part before")

    def __reduce__(self) -> tuple[Any, ...]:          # crosses from the child process
        return (UnsupportedOps, (self.nodes,))


@dataclass(frozen=True)
class OutputCheck:
    name: str
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float          # the largest difference over the output's largest magnitude
    where: tuple[int, ...]
    top1: float | None      # share of rows whose arg max agrees (2-D scores)


@dataclass(frozen=True)
class CheckReport:
    outputs: tuple[OutputCheck, ...]
    tolerance: float
    inputs: str             # where the inputs came from

    def _ok(self, o: OutputCheck) -> bool:
        return o.max_abs <= self.tolerance or o.max_rel <= self.tolerance   # NaN: False

    @property
    def agree(self) -> bool:
        return all(self._ok(o) for o in self.outputs)

    def verdict(self) -> str:
        if self.agree:
            worst = max((o.max_abs for o in self.outputs), default=0.0)
            rel = max((o.max_rel for o in self.outputs), default=0.0)
            return (f"outputs agree within {self.tolerance:g} (largest difference "
                    f"{worst:.2g}, {rel:.2g} of the output's largest value; {self.inputs})")
        bad = next(o for o in self.outputs if not self._ok(o))
        k = self.outputs.index(bad)
        if bad.max_abs != bad.max_abs:
            return (f"output {k} ({bad.name}) is NaN at {tuple(bad.where)} in one runtime "
                    "and not the other")
        return (f"output {k} ({bad.name}) differs by {bad.max_abs:.3g} at "
                f"{tuple(bad.where)} ({bad.max_rel:.1%} of its largest value)")


@dataclass(frozen=True)
class ExportReport:
    path: str
    opset: int
    weights: str
    fixes: tuple[str, ...] = field(default=())
    check: CheckReport | None = None
    size_bytes: int = 0

    def lines(self) -> list[str]:
        out = [f"wrote {self.path} (opset {self.opset}, {self.size_bytes:,} bytes, "
               f"{self.weights})"]
        out += [f"fixed: {fix}" for fix in self.fixes]
        if self.check is not None:
            for k, o in enumerate(self.check.outputs):
                top = f", top-1 agreement {o.top1:.0%}" if o.top1 is not None else ""
                out.append(f"output {k} {o.name} {o.shape}: max abs {o.max_abs:.3g}, "
                           f"max rel {o.max_rel:.3g}{top}")
            out.append(self.check.verdict())
        return out

    def to_dict(self) -> dict[str, Any]:
        check = self.check
        return {"path": self.path, "opset": self.opset, "weights": self.weights,
                "fixes": list(self.fixes), "size_bytes": self.size_bytes,
                "check": None if check is None else {
                    "agree": check.agree, "verdict": check.verdict(),
                    "tolerance": check.tolerance, "inputs": check.inputs,
                    "outputs": [{"name": o.name, "shape": list(o.shape), "max_abs": o.max_abs,
                                 "max_rel": o.max_rel, "where": list(o.where), "top1": o.top1}
                                for o in check.outputs]}}


# ------------------------------------------------------------ the converter
def load_onnx() -> Any:
    """``onnx``, with the ``onnx.mapping`` MXNet's converter calls (ONNX 1.19 removed
    it) made from ``onnx.helper`` when missing."""
    import importlib

    try:
        onnx: Any = importlib.import_module("onnx")
        importlib.import_module("onnx.helper")
    except ImportError:
        raise UserError("ONNX export needs the onnx extra: pip install "
                        f"onnx=={ONNX_PINS['onnx']} (see the README)") from None
    if not hasattr(onnx, "mapping"):
        import numpy as np

        codes = [v for v in onnx.TensorProto.DataType.values() if v]
        to_np = {}
        for code in codes:
            try:
                to_np[code] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
            except Exception:  # noqa: BLE001 - types numpy lacks (bfloat16, float8)
                continue
        onnx.mapping = types.SimpleNamespace(
            TENSOR_TYPE_TO_NP_TYPE=to_np,
            NP_TYPE_TO_TENSOR_TYPE={v: k for k, v in reversed(list(to_np.items()))})
    return onnx


def supported_ops(opset: int = DEFAULT_OPSET) -> set[str]:
    """Op names MXNet's converters handle at ``opset`` (MXNet and onnx imported)."""
    load_onnx()
    import_mxnet()
    import mxnet.onnx  # noqa: F401 - registers the converters
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    ops: set[str] = set()
    for version in range(opset, MIN_OPSET - 1, -1):
        ops.update(MXNetGraph.registry_.get(version, {}))
    return ops


def _fast_weights() -> None:
    """Weights written as raw bytes instead of MXNet's ``make_tensor(vals=...tolist())``:
    protobuf extending a repeated field one Python float at a time took 20 of the 37
    seconds of an ArcFace export (65 M weights); the tensors are the same."""
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    for table in MXNetGraph.registry_.values():
        original = table.get("null")
        if original is None or getattr(original, "_mxexplorer_raw", False):
            continue

        def convert(node: Any, _original: Any = original, **kwargs: Any) -> Any:
            if kwargs.get("is_input") is not False:
                return _original(node, **kwargs)
            import numpy as np
            from onnx import helper, numpy_helper

            name = node["name"]
            array = np.ascontiguousarray(kwargs["weights"][name])
            tensor = numpy_helper.from_array(array, name)
            kwargs["initializer"].append(tensor)
            info = helper.make_tensor_value_info(name, tensor.data_type, array.shape)
            return [info], (array.dtype,)

        convert._mxexplorer_raw = True  # type: ignore[attr-defined]
        table["null"] = convert


def unsupported(op_nodes: Sequence[tuple[int, str, str]], opset: int = DEFAULT_OPSET
                ) -> list[tuple[int, str, str]]:
    """The (node, name, op) of ``op_nodes`` whose op has no converter."""
    have = supported_ops(opset)
    return [n for n in op_nodes if n[2] not in have]


def _params(mx: Any, sym: Any, shapes: Mapping[str, Shape], path: str | None,
            renames: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """The weights: the checkpoint's (keys following renames), or random ones that
    look trained (gammas and moving statistics away from 1 and 0, so a converter that
    mishandles them shows)."""
    if path:
        loaded = mx.nd.load(path)
        out = {renames.get(k.split(":", 1)[-1], k.split(":", 1)[-1]): v
               for k, v in loaded.items()}
        return out, f"weights of {os.path.basename(path)}"
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    rng = mx.random
    mx.random.seed(7)
    out = {}
    for name, shape in list(zip(sym.list_arguments(), arg_shapes)) + \
            list(zip(sym.list_auxiliary_states(), aux_shapes)):
        if name in shapes or name.endswith("_label"):
            continue
        if name.endswith(("gamma", "moving_var", "running_var")):
            out[name] = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("beta", "moving_mean", "running_mean")):
            out[name] = rng.uniform(-0.2, 0.2, shape)
        elif len(shape) >= 2:          # a weight: scaled by its fan-in, as training keeps it
            fan_in = max(1, int(__import__("numpy").prod(shape[1:])))
            out[name] = rng.normal(0, (1.0 / fan_in) ** 0.5, shape)
        else:
            out[name] = rng.uniform(-0.1, 0.1, shape)
    return out, "random trained-looking weights (no checkpoint)"


def _inputs(mx: Any, shapes: Mapping[str, Shape], given: str | None) -> tuple[dict[str, Any],
                                                                            str]:
    import numpy as np

    rng = np.random.default_rng(11)
    out = {k: rng.uniform(-1, 1, v).astype("float32") for k, v in shapes.items()}
    if not given:
        return out, "random inputs"
    first = next(iter(shapes))
    want = tuple(shapes[first])
    if given.endswith(".npy"):
        value = np.load(given).astype("float32")
    else:
        try:
            image = mx.image.imread(given).asnumpy()            # H, W, C
        except Exception as exc:  # noqa: BLE001
            raise UserError(f"{given}: not an image MXNet can read ({exc})") from None
        if len(want) != 4:
            raise UserError(f"an image fills an NCHW input; {first} is {want}")
        image = mx.image.imresize(mx.nd.array(image), want[3], want[2]).asnumpy()
        value = np.broadcast_to(image.transpose(2, 0, 1)[None].astype("float32"), want)
    if value.shape != want:
        raise UserError(f"{given} holds shape {value.shape}, but {first} is {want}")
    out[first] = np.ascontiguousarray(value)
    return out, f"inputs from {os.path.basename(given)}"


def _compare(names: list[str], mx_out: list[Any], ort_out: dict[str, Any],
             tolerance: float, inputs: str) -> CheckReport:
    import numpy as np

    checks = []
    pool = sorted(ort_out)
    for name, ref in zip(names, mx_out):
        stem = name[:-len("_output")] if name.endswith("_output") else name
        candidates = [n for n in pool if n == stem or n == name] or \
            [n for n in pool if n.startswith(stem) and ort_out[n].shape == ref.shape]
        if not candidates:
            raise UserError(f"the ONNX model has no output for {name} "
                            f"(it has {', '.join(pool)})")
        got = ort_out[candidates[0]]
        pool.remove(candidates[0])
        if got.shape != ref.shape:
            raise UserError(f"output {name}: ONNX gives shape {got.shape}, MXNet {ref.shape}")
        diff = np.abs(got.astype("float64") - ref.astype("float64"))
        both_nan = np.isnan(got) & np.isnan(ref)
        diff[both_nan] = 0.0                      # the same NaN in both is agreement
        where = np.unravel_index(int(np.argmax(np.nan_to_num(diff, nan=np.inf))),
                                 diff.shape) if diff.size else ()
        scale = float(np.nanmax(np.abs(ref))) if ref.size and not np.isnan(ref).all() \
            else 0.0
        top1 = None
        if ref.ndim == 2 and ref.shape[1] > 1:
            top1 = float(np.mean(np.argmax(ref, 1) == np.argmax(got, 1)))
        max_abs = float(diff[where]) if diff.size else 0.0
        checks.append(OutputCheck(name, tuple(ref.shape), max_abs,
                                  max_abs / scale if scale else max_abs,
                                  tuple(int(w) for w in where), top1))
    return CheckReport(tuple(checks), tolerance, inputs)


def export(graph_json: str, shapes: Mapping[str, Shape], out_path: str,
           op_nodes: Sequence[tuple[int, str, str]], params_path: str | None = None,
           renames: Mapping[str, str] | None = None, opset: int = DEFAULT_OPSET,
           check: bool = False, inputs: str | None = None, tolerance: float = TOLERANCE,
           progress: Progress = no_progress, token: CancelToken | None = None,
           fix_gamma: bool = True) -> ExportReport:
    """Convert ``graph_json`` (with the checkpoint at ``params_path``, else random
    weights) to ONNX at ``out_path``; with ``check``, compare it with MXNet.

    Raises
    ------
    UnsupportedOps : some operator has no converter (nothing is written).
    UserError : the conversion or the check cannot run.
    """
    token = token or CancelToken()
    if opset < MIN_OPSET:
        raise UserError(f"opset {opset}: MXNet's converters start at opset {MIN_OPSET}")
    progress(0, 4, "checking operators")
    missing = unsupported(op_nodes, opset)
    if missing:
        raise UnsupportedOps(list(missing))
    onnx = load_onnx()
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    mx = import_mxnet()
    graph = json.loads(graph_json)
    shapes = {k: tuple(v) for k, v in shapes.items()}
    with mxnet_errors("MXNet cannot load the graph"):
        original = mx.sym.load_json(graph_json)
    fixes = onnx_fixes.fix_softmax_heads(
        graph, functools.partial(onnx_fixes.input_rank, original, shapes))
    fixes += onnx_fixes.fix_flatten(graph) + onnx_fixes.fix_duplicate_heads(graph)
    with mxnet_errors("MXNet cannot load the graph"):
        sym = mx.sym.load_json(json.dumps(graph))
    with mxnet_errors("the weights cannot be read"):
        params, weights = _params(mx, sym, shapes, params_path, renames or {})
    if fix_gamma:                     # off only to show the fault (a test does)
        fixes += onnx_fixes.fix_gamma(graph, params, mx)
    token.check()
    progress(1, 4, "converting")
    data_names = [n for n in sym.list_arguments() if n in shapes]
    _fast_weights()
    try:
        in_types = [onnx.TensorProto.FLOAT for _ in data_names]
        with warnings.catch_warnings(), onnx_fixes.no_inner_check(onnx):
            warnings.simplefilter("ignore", DeprecationWarning)   # its onnx.mapping
            proto = MXNetGraph().create_onnx_graph_proto(
                sym, params, [shapes[n] for n in data_names], in_types,
                opset_version=opset, dynamic=False)
        model = onnx.helper.make_model(proto, opset_imports=[
            onnx.helper.make_opsetid("", opset)], producer_name="mxexplorer")
        fixes += onnx_fixes.fix_prelu(
            onnx, model, functools.partial(onnx_fixes.input_rank, sym, shapes))
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - the converter's own errors, in one line
        raise UserError(f"MXNet's ONNX converter failed: {type(exc).__name__}: "
                        f"{failure(exc)}") from None
    blob = model.SerializeToString()
    write_atomic(out_path, blob)
    report = ExportReport(out_path, opset, weights, tuple(fixes), None, len(blob))
    if not check:
        return report
    token.check()
    progress(2, 4, "running MXNet")
    feed, where = _inputs(mx, {n: shapes[n] for n in data_names}, inputs)
    with mxnet_errors("MXNet cannot run the graph"):
        exe = sym.simple_bind(mx.cpu(), grad_req="null", **{n: shapes[n] for n in data_names})
        for name, arr in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
            if name in feed:
                arr[:] = feed[name]
            elif name in params:
                arr[:] = params[name].astype(arr.dtype)
        mx_out = [o.asnumpy() for o in exe.forward(is_train=False)]
    progress(3, 4, "running onnxruntime")
    try:
        import onnxruntime as ort
    except ImportError:
        raise UserError("--check needs onnxruntime: pip install --no-deps onnxruntime=="
                        f"{ONNX_PINS['onnxruntime']} (see the README)") from None
    with mxnet_errors("onnxruntime cannot run the exported model"):
        session = ort.InferenceSession(blob, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        ort_out = dict(zip(names, session.run(None, {i.name: feed[i.name]
                                                    for i in session.get_inputs()})))
    result = _compare(sym.list_outputs(), mx_out, ort_out, tolerance, where)
    return ExportReport(out_path, opset, weights, tuple(fixes), result, len(blob))


def export_snapshot(snap: Any, shapes: Mapping[str, Shape], out_path: str,
                    opset: int = DEFAULT_OPSET, check: bool = False,
                    inputs: str | None = None, progress: Progress = no_progress,
                    token: CancelToken | None = None) -> ExportReport:
    """:func:`export` of a document snapshot (its checkpoint, renames followed) in a
    child process."""
    nodes = GraphDocument.from_snapshot(snap).operators()
    report: ExportReport = isolated.call(
        export, snap.json, dict(shapes), out_path, nodes, snap.params_path,
        dict(snap.param_renames), opset, check, inputs, progress=progress, token=token,
        what="the ONNX export")
    return report
