"""``mxexplorer info`` and ``mxexplorer infer``: a file's make-up, and every internal's
shape with its parameters, MACs and memory."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common
from mxexplorer.core.runtime.errors import UserError


def cmd_info(args: argparse.Namespace) -> int:
    from mxexplorer.core.analysis import report
    from mxexplorer.core.graph.document import GraphDocument

    doc = GraphDocument.open(args.file)
    data = report.info(doc)
    if args.json:
        common.print_json(data)
        return 0
    out = sys.stdout
    out.write(f"file        {data['file']}\n")
    if data["params_file"]:
        out.write(f"checkpoint  {data['params_file']}\n")
    if data["checkpoint_mismatch"]:
        out.write(f"mismatch    {data['checkpoint_mismatch']['words']}\n")
    upgraded = f", upgraded by {data['upgraded_by']}" if data["upgraded_by"] else ""
    out.write(f"format      {data['format']}, saved by MXNet {_version(data['mxnet_version'])}"
              f"{upgraded}\n")
    out.write(f"nodes       {data['nodes']} ({data['operators']} operators), "
              f"{data['internals_count']} internals\n")
    out.write(f"inputs      {common.listed(data['inputs'])}\n")
    out.write(f"outputs     {common.listed(data['outputs'])}\n")
    out.write(f"parameters  {len(data['parameters'])}\n")
    out.write(f"aux states  {len(data['aux'])}\n")
    if data["unknown_ops"]:
        out.write(f"unknown ops {report.unknown_ops_words(doc)}\n")
    if data["duplicate_names"]:
        out.write(f"duplicates  {len(data['duplicate_names'])} names used twice or more: "
                  f"{common.listed(data['duplicate_names'])}\n")
    out.write("ops\n")
    for op, count in data["ops"].items():
        out.write(f"  {count:6d}  {op}\n")
    return 0


def _version(v: int) -> str:
    return f"{v // 10000}.{(v // 100) % 100}.{v % 100}"


def cmd_infer(args: argparse.Namespace) -> int:
    from mxexplorer import api
    from mxexplorer.core.analysis import shapes
    from mxexplorer.core.analysis.stats import human_bytes, human_count

    graph = api.open(args.file)
    try:
        found = graph.infer(common.shape_args(args.shape), dtype=args.dtype, strict=False)
    except api.ShapesMissing as exc:
        raise UserError("give the input shapes with --shape NAME=D1,D2,... (inputs: "
                        f"{', '.join(exc.inputs) or 'none'})") from None
    data = found.to_dict()
    if args.json:
        common.print_json(data)
    elif found.error is None and args.by_op:
        sys.stdout.write(f"{'op':<22} {'count':>6} {'params':>10} {'MACs':>10} {'share':>5} "
                         f"{'memory':>10} {'share':>5}\n")
        for row in data["by_op"]:
            sys.stdout.write(
                f"{row['op']:<22} {row['count']:>6} {human_count(row['params']):>10} "
                f"{human_count(row['macs']):>10} {row['macs_share']:>5.0%} "
                f"{human_bytes(row['activation_bytes']):>10} "
                f"{row['activation_bytes_share']:>5.0%}\n")
    elif found.error is None:
        out = sys.stdout
        width = max((len(r["name"]) for r in data["internals"]), default=10)
        width = min(width, 60)
        out.write(f"{'internal':<{width}}  {'op':<18} {'shape':<22} {'memory':>10} "
                  f"{'params':>10} {'MACs':>10}\n")
        for row in data["internals"]:
            shape = shapes.format_shape(row["shape"]) if row["shape"] else "?"
            op = row["op"] if row["op"] != "null" else "-"
            out.write(f"{row['name']:<{width}}  {op:<18} {shape:<22} "
                      f"{human_bytes(row['bytes']) if row['bytes'] else '':>10} "
                      f"{human_count(row['params']) if row['params'] else '':>10} "
                      f"{human_count(row['macs']) if row['macs'] else '':>10}\n")
        out.write(f"\nparameters  {data['params']:,} ({human_count(data['params'])})\n")
        out.write(f"MACs        {data['macs']:,} ({human_count(data['macs'])}); "
                  f"FLOPs = 2 x MACs = {human_count(data['flops'])}\n")
        out.write(f"activations {human_bytes(data['activation_bytes'])} "
                  "(all operator outputs, one forward pass)\n")
        if data["uncounted_ops"]:
            out.write(f"uncounted   {', '.join(data['uncounted_ops'])} (0 MACs assumed)\n")
        if data["dtype_error"]:
            out.write(f"dtypes      not all known: inference of dtypes stopped at "
                      f"{data['dtype_error']} (give the inputs' dtypes)\n")
        if data["missing_inputs"] and not found.error:
            out.write(f"unknown     no shape for {common.listed(data['missing_inputs'])}\n")
    if found.error is not None:
        sys.stderr.write(f"mxexplorer: error: shape inference stopped at {found.error}\n")
        return 2
    return 0


def add_parser(sub: Any) -> None:
    """Register ``info`` and ``infer``."""
    p = sub.add_parser("info", help="format, counts, inputs, outputs and ops of a file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("infer", help="every internal's shape, with parameters and MACs")
    p.add_argument("file")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="shape of a data input (repeat for several)")
    p.add_argument("--dtype", default="float32", help="dtype of the inputs (float32)")
    p.add_argument("--by-op", action="store_true",
                   help="one row per op type (count, params, MACs, memory and their shares)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_infer)
