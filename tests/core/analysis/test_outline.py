"""The internals outline: every internal once per place, grouped by kind, cached per
revision, and a structure key that ignores attributes."""
from __future__ import annotations

import mxnet as mx

from mxexplorer.core.analysis.outline import outline
from mxexplorer.core.graph import edits, tags
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import EXAMPLES


def _titles(out) -> list[str]:
    return [out.label[r].split(" (")[0] for r in out.top]


def test_groups_hold_every_internal_and_match_mxnet() -> None:
    path = EXAMPLES / "resnet18_v1-symbol.json"
    doc = GraphDocument.open(str(path))
    out = outline(doc)
    assert _titles(out) == ["Data inputs", "Parameters", "Auxiliary states", "Operators",
                            "Graph outputs"]
    shown = sorted(out.entry[r] for r in range(len(out))
                   if out.entry[r] >= 0 and out.parent[r] != out.top[-1]
                   and out.label[r] is None)
    names = mx.sym.load(str(path)).get_internals().list_outputs()
    assert [doc.internals()[k].name for k in shown] == names   # each internal once
    for r in range(len(out)):                                  # parent/position agree
        siblings = out.children[out.parent[r]] if out.parent[r] >= 0 else out.top
        assert siblings[out.position[r]] == r
    flat = outline(doc, grouped=False)
    assert [flat.entry[r] for r in flat.top] == list(range(len(names)))


def test_multi_output_nodes_get_a_parent_row(tmp_path) -> None:
    data = mx.sym.Variable("data")
    parts = mx.sym.split(data, num_outputs=3, axis=1, name="split")
    net = mx.sym.Group([mx.sym.relu(parts[0], name="a"), mx.sym.relu(parts[2], name="b")])
    path = tmp_path / "split-symbol.json"
    net.save(str(path))
    doc = GraphDocument.open(str(path))
    out = outline(doc)
    split = next(i for i, n in enumerate(doc.nodes) if n.name == "split")
    parent, = [r for r in out.rows_of(split) if out.label[r] == "split"]
    children = out.children[parent]
    assert [doc.internals()[out.entry[r]].name for r in children] == \
        ["split_output0", "split_output1", "split_output2"]
    relu = next(i for i, n in enumerate(doc.nodes) if n.name == "a")
    assert all(out.label[r] is None and not out.children[r] for r in out.rows_of(relu))


def test_cached_per_revision_and_keyed_on_structure() -> None:
    doc = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))
    first = outline(doc)
    assert outline(doc) is first
    op = next(i for i, n in enumerate(doc.nodes) if not n.is_variable)
    edits.set_attr((op,), tags.MIRROR_STAGE, "True").apply(doc)
    second = outline(doc)
    assert second is not first and second.key == first.key   # same rows
    edits.RenameNodeEdit(op, "renamed").apply(doc)
    assert outline(doc).key == first.key                      # names are not structure
