"""The engine equals MXNet 1.9.1 on every real file, checked without MXNet: the shapes
and dtypes of every internal and the argument and auxiliary shapes, against MXNet's
answers stored by ``tools/engine_reference.py`` (which the MXNet lane checks live)."""
from __future__ import annotations

import json
import pathlib

import pytest

from benchmarks import engine_corpus
from mxexplorer.core.analysis import shapes as S
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import CORPUS, DATA, EXAMPLES, REPO

REFERENCE = json.loads((DATA / "engine_reference.json").read_text(encoding="utf-8"))
FOLDERS = [REPO / "benchmarks" / "corpus", EXAMPLES, CORPUS]


def _files() -> list:
    found = []
    for name in sorted(REFERENCE):
        path = next((f / name for f in FOLDERS if (f / name).is_file()), None)
        marks = [pytest.mark.corpus] if path is None or path.parent == CORPUS else []
        found.append(pytest.param(name, path, id=name[:60], marks=marks))
    return found


@pytest.mark.parametrize(("name", "path"), _files())
def test_the_engine_gives_mxnets_answer(name: str, path: pathlib.Path | None) -> None:
    expected = REFERENCE[name]
    assert path is not None, f"{name} is in the reference but in none of {FOLDERS}"
    doc = GraphDocument.open(str(path), use_mxnet=False)
    given = {k: tuple(v) for k, v in expected["inputs"].items()}
    found = S.infer_document(doc, given, use_mxnet=False)
    ours = engine_corpus.digest(found)
    want = {k: v for k, v in expected.items() if k not in ("judge", "inputs")}
    assert ours == want, (f"{name}: the engine differs from {expected['judge']}'s answer "
                          f"(run benchmarks/engine_corpus.py with MXNet for the first "
                          f"difference); error: {found.error}")
    assert not found.unruled_ops


def test_the_reference_covers_the_bundled_corpus() -> None:
    bundled = {p.name for p in (REPO / "benchmarks" / "corpus").glob("*-symbol.json")}
    assert bundled <= set(REFERENCE)
    assert {"mlp-symbol.json", "resnet18_v1-symbol.json"} <= set(REFERENCE)
