"""How much of each graph ``mxexplorer profile`` accounts for: one line per file and mode.

For each symbol file given (input shapes from ``benchmarks/corpus/shapes.json``, or a
``shapes.json`` beside the file), the profile runs for training and for inference and
the line says: operator nodes, timed (every time the mode has), explained (by kind of
reason), unexplained (the goal of issue 27: none), and profiler events matched to no
node of MXNet's executor.

Run: ``python benchmarks/profile_coverage.py FILE... [--iterations 1] [--markdown]``.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.onnx_corpus import input_shapes, shape_tables  # noqa: E402


def main() -> int:
    from mxexplorer.core.analysis import profile
    from mxexplorer.core.graph.document import GraphDocument

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--reasons", action="store_true",
                        help="print each kind of reason once (node names left out), with "
                             "its count and one node's words")
    args = parser.parse_args()
    table = shape_tables(sorted({os.path.dirname(os.path.abspath(f)) for f in args.files}))
    if args.markdown:
        print("| file | mode | operator nodes | timed | explained | unexplained | "
              "events on no node |\n|---|---|---|---|---|---|---|")
    for path in args.files:
        name = os.path.basename(path)
        if name not in table:
            print(f"{name}: no shapes in shapes.json")
            continue
        shapes = {k: tuple(v) for k, v in input_shapes(path, table[name]).items()}
        doc = GraphDocument.open(path)
        for train in (True, False):
            mode = "training" if train else "inference"
            try:
                result = profile.profile(doc.snapshot(), shapes, iterations=args.iterations,
                                         train=train)
            except Exception as exc:  # noqa: BLE001 - one line per file, whatever it is
                print(f"{name} {mode}: {exc}")
                continue
            cover = result.coverage()
            explained = ", ".join(f"{n} {kind}" for kind, n in cover["explained"].items()) \
                or "0"
            cells = [name, mode, f"{cover['operators']:,}", f"{cover['timed']:,}", explained,
                     str(cover["unexplained"]), str(len(result.unplaced))]
            print("| " + " | ".join(cells) + " |" if args.markdown else "  ".join(cells))
            if args.reasons:
                texts: dict[str, tuple[int, str]] = {}
                for reason in result.reasons.values():
                    key = re.sub(r"'[^'\s]*'", "'…'", reason.text)
                    texts[key] = (texts.get(key, (0, ""))[0] + 1, reason.text)
                for n, text in sorted(texts.values(), key=lambda kv: -kv[0]):
                    print(f"    {n:>5}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
