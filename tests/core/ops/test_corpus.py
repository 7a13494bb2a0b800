"""Every real file, the engine against MXNet 1.9.1 live: every internal's shape and
dtype, every argument's and auxiliary state's shape equal; and the stored reference the
lane without MXNet checks (``tests/data/engine_reference.json``) is MXNet's answer."""
from __future__ import annotations

import json
import pathlib

import pytest

from benchmarks import engine_corpus
from mxexplorer.core.analysis import mxnet_shapes as M
from mxexplorer.core.analysis import shapes as S
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import CORPUS, DATA, EXAMPLES, REPO

REFERENCE = json.loads((DATA / "engine_reference.json").read_text(encoding="utf-8"))


def _is_graph(path: pathlib.Path) -> bool:
    """A symbol file (the corpus holds one that is just ``{}``: not a graph to infer)."""
    try:
        return "nodes" in json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False


def _files() -> list:
    found = []
    for folder in (REPO / "benchmarks" / "corpus", EXAMPLES, CORPUS):
        marks = [pytest.mark.corpus] if folder == CORPUS else []
        paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
        for path in paths:
            if _is_graph(path) and engine_corpus.reference_inputs(str(path)) is not None:
                found.append(pytest.param(path, id=path.name[:60], marks=marks))
    if not CORPUS.is_dir():
        found.append(pytest.param(None, id="shared-corpus", marks=[pytest.mark.corpus]))
    return found


@pytest.mark.parametrize("path", _files())
def test_engine_equals_mxnet(path: pathlib.Path) -> None:
    spec = engine_corpus.reference_inputs(str(path))
    row = engine_corpus.compare(str(path), spec)
    if row.mxnet != "yes":                  # MXNet cannot load it (a fork's or plug-in's op)
        assert not row.no_rule and not row.engine_error, (row.no_rule, row.engine_error)
        return
    assert row.equal, (f"{path.name}: {row.first_difference or row.engine_error} "
                       f"(MXNet: {row.mxnet_error or 'ok'})")
    assert not row.no_rule


@pytest.mark.parametrize("path", _files())
def test_the_stored_reference_is_mxnets_answer(path: pathlib.Path) -> None:
    stored = REFERENCE.get(path.name)
    assert stored is not None, f"run tools/engine_reference.py: {path.name} is missing"
    doc = GraphDocument.open(str(path), use_mxnet=False)
    given = {k: tuple(v) for k, v in stored["inputs"].items()}
    if stored["judge"] == "mxnet":
        live = M.infer_with_mxnet(doc, doc.to_json(indent=None), given)
    else:
        assert doc.unknown_ops()
        live = S.infer_document(doc, given, use_mxnet=False)
    want = {k: v for k, v in stored.items() if k not in ("judge", "inputs")}
    assert engine_corpus.digest(live) == want
