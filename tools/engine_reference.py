"""Write ``tests/data/engine_reference.json``: MXNet 1.9.1's answer for every real file,
in short (digests of every internal's shape and dtype, of the argument and auxiliary
shapes), so that the lane without MXNet checks the engine against MXNet all the same.

Run with MXNet installed, ``../shared/corpus`` beside the clone: ``python
tools/engine_reference.py``.  Files MXNet cannot load (ops of forks and plug-ins) are
stored with the engine's own answer, marked ``"judge": "engine"`` (a regression check,
not MXNet's word).  ``tests/core/ops/test_corpus.py`` checks the stored digests against
MXNet's live answers, so the file cannot drift from MXNet.
"""
from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import engine_corpus  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "engine_reference.json")


def entry(path: str) -> dict[str, object] | None:
    from mxexplorer.core.analysis import mxnet_shapes as M
    from mxexplorer.core.analysis import shapes as S
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.runtime.errors import UserError

    spec = engine_corpus.reference_inputs(path)
    if spec is None:
        return None
    try:
        doc = GraphDocument.open(path, use_mxnet=False)
    except UserError:
        return None
    given = engine_corpus.input_shapes(doc, spec)
    if doc.unknown_ops():
        result = S.infer_document(doc, given, use_mxnet=False)
        judge = "engine"
    else:
        result = M.infer_with_mxnet(doc, doc.to_json(indent=None), given)
        judge = "mxnet"
    return {"judge": judge, "inputs": {k: list(v) for k, v in given.items()},
            **engine_corpus.digest(result)}


def main() -> int:
    folders = [os.path.join(ROOT, "benchmarks", "corpus"), engine_corpus.EXAMPLES]
    if os.path.isdir(engine_corpus.SHARED):
        folders.append(engine_corpus.SHARED)
    table = {}
    for path in engine_corpus.corpus_files(folders):
        found = entry(path)
        if found is not None:
            table[os.path.basename(path)] = found
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(table, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"{len(table)} files written to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
