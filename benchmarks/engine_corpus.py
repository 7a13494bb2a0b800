"""The engine against MXNet on every real symbol file: one row per file.

For each symbol file in the folders given (default: ``benchmarks/corpus``, the bundled
examples and ``../shared/corpus`` when it is beside the clone) with input shapes in a
``shapes.json`` table (``benchmarks/corpus/shapes.json``): the engine alone (no MXNet
asked, :func:`mxexplorer.core.analysis.shapes.infer_document` with ``use_mxnet=False``)
and MXNet 1.9.1 (:func:`~mxexplorer.core.analysis.mxnet_shapes.infer_with_mxnet`) infer the
same document, and the row counts how many internal outputs have equal shapes and equal
dtypes, how many arguments and auxiliary states equal shapes, and which ops have no
rule.  Files MXNet cannot load are inferred by the engine alone and marked so.

Run: ``python benchmarks/engine_corpus.py [DIR ...] [--markdown] [--times]``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
EXAMPLES = os.path.join(ROOT, "mxexplorer", "resources", "examples")


@dataclass
class Row:
    """One file's comparison (counts are equal/total)."""

    file: str
    internals: int = 0
    shapes_equal: int = 0
    dtypes_equal: int = 0
    args: int = 0
    args_equal: int = 0
    aux: int = 0
    aux_equal: int = 0
    no_rule: list[str] = field(default_factory=list)
    mxnet: str = "yes"                 # "yes", or why MXNet could not judge
    engine_error: str = ""
    mxnet_error: str = ""
    dtype_stops: str = ""            # "both", "engine", "mxnet" or ""
    engine_s: float = 0.0
    mxnet_s: float = 0.0
    first_difference: str = ""

    @property
    def equal(self) -> bool:
        return (self.mxnet == "yes" and self.shapes_equal == self.internals
                and self.dtypes_equal == self.internals and self.args_equal == self.args
                and self.aux_equal == self.aux
                and self.dtype_stops in ("", "both")
                and bool(self.engine_error) == bool(self.mxnet_error))


def shape_table() -> dict[str, list[tuple[str, list[int]]]]:
    with open(os.path.join(HERE, "corpus", "shapes.json"), encoding="utf-8") as fh:
        return {k: [(p, s) for p, s in v] for k, v in json.load(fh).items()}


def input_shapes(doc: object, spec: list[tuple[str, list[int]]]) -> dict[str, tuple[int, ...]]:
    """The spec's regular expressions matched against the document's data inputs."""
    out: dict[str, tuple[int, ...]] = {}
    for i in doc.data_inputs():  # type: ignore[attr-defined]
        name = doc.nodes[i].name  # type: ignore[attr-defined]
        for pattern, shape in spec:
            if re.match(pattern, name):
                out[name] = tuple(shape)
                break
    return out


def compare(path: str, spec: list[tuple[str, list[int]]], judge: bool = True) -> Row:
    """Infer ``path`` with the engine and (``judge``) with MXNet; the row of counts."""
    from mxexplorer.core.analysis import mxnet_shapes as M
    from mxexplorer.core.analysis import shapes as S
    from mxexplorer.core.graph.document import GraphDocument

    row = Row(os.path.basename(path))
    doc = GraphDocument.open(path, use_mxnet=False)
    given = input_shapes(doc, spec)
    started = time.perf_counter()
    ours = S.infer_document(doc, given, use_mxnet=False)
    row.engine_s = time.perf_counter() - started
    row.internals = len(ours.internal_shapes)
    row.args = len(ours.arg_shapes)
    row.aux = len(ours.aux_shapes)
    row.no_rule = list(ours.unruled_ops)
    row.engine_error = ours.error.one_line() if ours.error else ""
    if not judge:
        row.mxnet = "not asked"
        return row
    if doc.unknown_ops():
        row.mxnet = "cannot load: " + ", ".join(doc.unknown_ops())
        return row
    started = time.perf_counter()
    theirs = M.infer_with_mxnet(doc, doc.to_json(indent=None), given)
    row.mxnet_s = time.perf_counter() - started
    row.mxnet_error = theirs.error.one_line() if theirs.error else ""
    row.dtype_stops = {(True, True): "both", (True, False): "engine",
                       (False, True): "mxnet"}.get((ours.dtype_error is not None,
                                                   theirs.dtype_error is not None), "")
    names = doc.internal_names()
    for k, (a, b) in enumerate(zip(ours.internal_shapes, theirs.internal_shapes)):
        if a == b:
            row.shapes_equal += 1
        elif not row.first_difference:
            row.first_difference = f"{names[k]}: engine {a}, MXNet {b}"
    both_stop = ours.dtype_error is not None and theirs.dtype_error is not None
    for k, (a, b) in enumerate(zip(ours.internal_dtypes, theirs.internal_dtypes)):
        if a == b or both_stop:       # MXNet then says nothing of any dtype: both refuse
            row.dtypes_equal += 1
        elif not row.first_difference:
            row.first_difference = f"{names[k]} dtype: engine {a}, MXNet {b}"
    row.args_equal = sum(1 for n, s in ours.arg_shapes.items()
                         if theirs.arg_shapes.get(n, "absent") == s)
    row.aux_equal = sum(1 for n, s in ours.aux_shapes.items()
                        if theirs.aux_shapes.get(n, "absent") == s)
    if not row.first_difference and row.args_equal != row.args:
        bad = next(n for n, s in ours.arg_shapes.items() if theirs.arg_shapes.get(n) != s)
        row.first_difference = (f"argument {bad}: engine {ours.arg_shapes[bad]}, "
                                f"MXNet {theirs.arg_shapes.get(bad)}")
    if not row.first_difference and row.aux_equal != row.aux:
        bad = next(n for n, s in ours.aux_shapes.items() if theirs.aux_shapes.get(n) != s)
        row.first_difference = (f"aux {bad}: engine {ours.aux_shapes[bad]}, "
                                f"MXNet {theirs.aux_shapes.get(bad)}")
    return row


def digest(result: object) -> dict[str, object]:
    """What a result says of a file, short: the count of internals, a digest of their
    shapes, of their dtypes, of the argument and of the auxiliary shapes, and whether
    inference stopped (the reference ``tools/engine_reference.py`` stores)."""
    import hashlib

    def h(value: object) -> str:
        text = json.dumps(value, sort_keys=True, default=list)
        return hashlib.sha256(text.encode()).hexdigest()[:16]
    r = result
    return {"internals": len(r.internal_shapes),  # type: ignore[attr-defined]
            "shapes": h([list(s) if s else None for s in r.internal_shapes]),  # type: ignore
            # where dtype inference stops, MXNet says nothing of any dtype
            "dtypes": "stopped" if r.dtype_error is not None  # type: ignore[attr-defined]
            else h(list(r.internal_dtypes)),  # type: ignore[attr-defined]
            "args": h({k: list(v) if v else None
                       for k, v in r.arg_shapes.items()}),  # type: ignore[attr-defined]
            "aux": h({k: list(v) if v else None
                      for k, v in r.aux_shapes.items()}),  # type: ignore[attr-defined]
            "stopped": r.error is not None}  # type: ignore[attr-defined]


def reference_inputs(path: str) -> list[tuple[str, list[int]]] | None:
    """The input spec of a corpus file or a bundled example (None: not in the table)."""
    name = os.path.basename(path)
    spec = shape_table().get(name)
    if spec is None and os.path.dirname(os.path.abspath(path)) == EXAMPLES:
        spec = [("^data$", [1, 3, 224, 224])] if "resnet" in name else [("^data$", [1, 784])]
    return spec


def corpus_files(folders: list[str]) -> list[str]:
    files = []
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name.endswith(".json") and name != "shapes.json":
                files.append(os.path.join(folder, name))
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-mxnet", action="store_true", help="the engine alone")
    args = parser.parse_args()
    sys.path.insert(0, ROOT)
    from mxexplorer.core.runtime.errors import UserError

    folders = args.folders or [os.path.join(HERE, "corpus"), EXAMPLES] + \
        ([SHARED] if os.path.isdir(SHARED) else [])
    table = shape_table()
    rows = []
    for path in corpus_files(folders):
        name = os.path.basename(path)
        spec = table.get(name) or reference_inputs(path)
        if spec is None:
            continue
        try:
            rows.append(compare(path, spec, judge=not args.no_mxnet))
        except UserError as exc:
            rows.append(Row(name, mxnet=f"not a graph: {exc}"))
    report(rows, args.markdown)
    return 0 if all(r.equal or r.mxnet != "yes" for r in rows) else 1


def report(rows: list[Row], markdown: bool) -> None:
    head = ("file", "internals", "shapes =", "dtypes =", "args =", "aux =", "no rule",
            "engine ms", "MXNet ms", "note")
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for r in rows:
        note = r.first_difference or (r.engine_error and f"engine: {r.engine_error}") or \
            ("" if r.mxnet == "yes" else r.mxnet)
        cells = (r.file[:60], str(r.internals), f"{r.shapes_equal}", f"{r.dtypes_equal}",
                 f"{r.args_equal}/{r.args}", f"{r.aux_equal}/{r.aux}",
                 ", ".join(r.no_rule) or "-", f"{r.engine_s * 1000:.0f}",
                 f"{r.mxnet_s * 1000:.0f}" if r.mxnet == "yes" else "-", note[:120])
        if markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print("  ".join(cells))
    judged = [r for r in rows if r.mxnet == "yes"]
    print(f"\n{len(rows)} files; MXNet judged {len(judged)}: "
          f"{sum(r.equal for r in judged)} equal in every shape, dtype, argument and aux; "
          f"internals {sum(r.shapes_equal for r in judged)}/"
          f"{sum(r.internals for r in judged)} shapes, "
          f"{sum(r.dtypes_equal for r in judged)} dtypes; ops without a rule: "
          f"{', '.join(sorted({o for r in rows for o in r.no_rule})) or 'none'}")


if __name__ == "__main__":
    raise SystemExit(main())
