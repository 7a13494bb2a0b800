"""``mxexplorer onnx`` (export checked against MXNet) and ``mxexplorer diff``."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common


def cmd_onnx(args: argparse.Namespace) -> int:
    from mxexplorer import api
    from mxexplorer.core.convert import onnx_export

    graph = api.open(args.file)
    shape_map = common.data_shapes(graph.document, args)
    bar = common.TerminalProgress()
    try:
        report = graph.to_onnx(args.output, shape_map, opset=args.opset, check=args.check,
                               inputs=args.input, progress=bar, via=args.via,
                               reference=False if args.no_mxnet else None)
    except onnx_export.UnsupportedOps as exc:
        bar.close()
        if args.json:
            common.print_json({"file": args.file, "unsupported": [
                {"node": i, "name": name, "op": op} for i, name, op in exc.nodes]})
        raise
    bar.close()
    if args.json:
        common.print_json({"file": args.file, **report.to_dict()})
    else:
        sys.stdout.write("\n".join(report.lines()) + "\n")
    return 0 if report.check is None or report.check.agree else 1


def cmd_diff(args: argparse.Namespace) -> int:
    from mxexplorer import api
    from mxexplorer.core.runtime.errors import UserError

    ga, gb = api.open(args.a), api.open(args.b)
    for graph, path in ((ga, args.a), (gb, args.b)):
        if args.params and not graph.params_path:
            raise UserError(f"--params: no checkpoint beside {path} "
                            "(prefix-symbol.json with prefix-NNNN.params)")
    found = api.diff(ga, gb, params=args.params,
                     shapes=common.shape_args(args.shape) if args.shape else None)
    result, a, b = found.result, found.a.document, found.b.document
    if args.json:
        common.print_json({"a": args.a, "b": args.b, **result.to_dict(a, b)})
        return 0 if result.same else 1
    out = sys.stdout
    out.write(result.summary() + "\n")
    for side, line in sorted(result.inference.items()):
        if line:
            out.write(f"{side.upper()}: shape inference stops at {line} (shapes compared "
                      "up to there)\n")
    for i, j in result.renamed[:args.top]:
        out.write(f"renamed  {a.nodes[i].name} -> {b.nodes[j].name}\n")
    for c in result.changed[:args.top]:
        what = ", ".join(f"{k}: {x!r} -> {y!r}" for k, (x, y) in c.attrs.items())
        if c.shapes:
            what += ("; " if what else "") + f"shapes {c.shapes[0]} -> {c.shapes[1]}"
        out.write(f"changed  {a.nodes[c.a].name} ({a.nodes[c.a].op}): {what}\n")
    for i in result.removed[:args.top]:
        out.write(f"removed  {a.nodes[i].name} ({_op(a, i)})\n")
    for j in result.added[:args.top]:
        out.write(f"added    {b.nodes[j].name} ({_op(b, j)})\n")
    moved = sorted((t for t in result.tensors if t.max_abs is None or t.max_abs > 0),
                   key=lambda t: -(t.max_abs if t.max_abs is not None else float("inf")))
    for t in moved[:args.top]:
        if t.max_abs is None:
            out.write(f"tensor   {t.name}: shape {t.shape[0]} -> {t.shape[1]}\n")
        else:
            out.write(f"tensor   {t.name}: max abs {t.max_abs:.4g}, max rel "
                      f"{t.max_rel:.4g}\n")
    for name in result.tensors_only_a[:args.top]:
        out.write(f"tensor   {name}: only in A\n")
    for name in result.tensors_only_b[:args.top]:
        out.write(f"tensor   {name}: only in B\n")
    return 0 if result.same else 1


def _op(doc: Any, i: int) -> str:
    return "variable" if doc.nodes[i].is_variable else doc.nodes[i].op


def add_parser(sub: Any) -> None:
    """Register ``onnx`` and ``diff``."""
    p = sub.add_parser("onnx", help="export to ONNX (no MXNet needed); --check against "
                                    "MXNet where it is installed")
    p.add_argument("file")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...", help="input shape")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx")
    p.add_argument("--opset", type=int, default=None,
                   help="ONNX opset (13 or more; default 13, or the lowest an op needs)")
    p.add_argument("--via", choices=("mxexplorer", "mx2onnx"), default="mxexplorer",
                   help="whose converters: ours (default, no MXNet needed) or MXNet's "
                        "mx2onnx with our fixes (needs MXNet; opset 12 or more)")
    p.add_argument("--check", action="store_true",
                   help="run MXNet and onnxruntime on the same inputs and compare every "
                        "output (exit 1 when they differ); without MXNet, run the model "
                        "in onnxruntime and say that nothing was compared")
    p.add_argument("--no-mxnet", action="store_true",
                   help="--check without MXNet even where it is installed")
    p.add_argument("--input", metavar="X.npy|IMAGE",
                   help="the check's input for the first data input (else random)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_onnx)

    p = sub.add_parser("diff", help="compare two graphs (and their checkpoints); exit 1 "
                                    "when they differ")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--params", action="store_true",
                   help="compare the checkpoints beside the files, tensor by tensor")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="infer shapes of both and compare them too")
    p.add_argument("--top", type=int, default=50, help="lines per kind printed (50)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_diff)
