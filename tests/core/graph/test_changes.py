"""The document changes only through its methods, each one revision and one typed
change naming the nodes and keys it touched (issue 25)."""
from __future__ import annotations

import mxnet as mx
import pytest

from mxexplorer.core.graph import edits, tags
from mxexplorer.core.graph.changes import AttrsChanged, KindsChanged, NamesChanged, Saved
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind


@pytest.fixture
def doc(mlp_copy) -> GraphDocument:
    return GraphDocument.open(str(mlp_copy))


def _seen(doc: GraphDocument) -> list:
    seen: list = []
    doc.subscribe(lambda d, change: seen.append((d.revision, change)))
    return seen


def test_set_attrs_is_one_change_naming_nodes_and_keys(doc) -> None:
    seen = _seen(doc)
    fc1, fc2 = doc.find("fc1")[0], doc.find("fc2")[0]
    before, hidden = doc.revision, doc.nodes[fc1].attrs["num_hidden"]
    old = doc.set_attrs({fc1: {"num_hidden": "8", "__lr_mult__": "2"},
                         fc2: {"no_bias": None}})
    assert doc.revision == before + 1 and len(seen) == 1
    change = seen[0][1]
    assert isinstance(change, AttrsChanged) and change.kind == "attrs"
    assert change.nodes == (fc1, fc2)
    assert change.keys == {"num_hidden", "__lr_mult__", "no_bias"}
    assert not change.tags_only and change.shapes_may_change
    assert doc.nodes[fc1].attrs["num_hidden"] == "8"
    # the old values undo it exactly (an absent key comes back absent)
    doc.set_attrs(old)
    assert "__lr_mult__" not in doc.nodes[fc1].attrs
    assert doc.nodes[fc1].attrs["num_hidden"] == hidden


def test_tags_alone_keep_the_structure_key(doc) -> None:
    seen = _seen(doc)
    key = doc.structure_key()
    relu = doc.find("relu1")[0]
    doc.set_attrs({relu: {tags.MIRROR_STAGE: "True", tags.FORCE_MIRRORING: "False"}})
    change = seen[-1][1]
    assert change.tags_only and not change.shapes_may_change
    assert doc.structure_key() == key
    doc.set_attrs({relu: {"act_type": "tanh"}})
    assert not seen[-1][1].tags_only and doc.structure_key() != key


def test_rename_follows_the_checkpoint_and_undoes(doc) -> None:
    seen = _seen(doc)
    w = doc.find("fc1_weight")[0]
    old = doc.rename({w: "first_weight"})
    assert isinstance(seen[-1][1], NamesChanged) and seen[-1][1].nodes == (w,)
    assert doc.param_renames == {"fc1_weight": "first_weight"}
    assert "first_weight" in doc.param_shapes()
    doc.rename(old)
    assert doc.param_renames == {} and doc.nodes[w].name == "fc1_weight"
    # names swapped in one call: each checkpoint array follows its own node
    w2 = doc.find("fc2_weight")[0]
    doc.rename({w: "fc2_weight", w2: "fc1_weight"})
    assert doc.param_renames == {"fc1_weight": "fc2_weight", "fc2_weight": "fc1_weight"}
    assert len(seen) == 3


def test_kinds_and_saves_are_typed_too(doc, tmp_path) -> None:
    seen = _seen(doc)
    data = doc.find("data")[0]
    revision = doc.revision
    assert doc.set_kinds({data: NodeKind.PARAM}) == {data: None}
    assert isinstance(seen[-1][1], KindsChanged) and doc.kinds()[data] == NodeKind.PARAM
    doc.set_kinds({data: None})
    assert doc.kinds()[data] == NodeKind.DATA and doc.revision == revision + 2
    doc.save(str(tmp_path / "out-symbol.json"))
    assert isinstance(seen[-1][1], Saved) and doc.revision == revision + 2   # not an edit


def test_every_edit_goes_through_the_documents_methods(doc) -> None:
    """An edit and its undo each hand listeners exactly one typed change."""
    fc1 = doc.find("fc1")[0]
    for edit, typ in ((edits.set_attr((fc1,), "num_hidden", "64"), AttrsChanged),
                      (edits.set_node_attrs(fc1, {"a": "1", "b": "2"}), AttrsChanged),
                      (edits.set_many_attrs([(fc1, {"c": "3"}), (fc1, {"d": "4"})]),
                       AttrsChanged),
                      (edits.RenameNodeEdit(fc1, "dense1"), NamesChanged),
                      (edits.PrefixAllEdit("p-"), NamesChanged),
                      (edits.SetVariableKindEdit(doc.find("data")[0], NodeKind.PARAM),
                       KindsChanged)):
        seen = _seen(doc)
        before = doc.to_json()
        edit.apply(doc)
        edit.revert(doc)
        assert [type(c) for _, c in seen] == [typ, typ], edit
        assert doc.to_json() == before
    # the three attribute edits are one kind of edit
    assert {type(edits.set_attr((fc1,), "k", "v")), type(edits.set_node_attrs(fc1, {})),
            type(edits.set_many_attrs([]))} == {edits.SetAttrs}


def test_typing_into_one_attribute_again_is_one_step(doc) -> None:
    fc1 = doc.find("fc1")[0]
    hidden = doc.nodes[fc1].attrs["num_hidden"]
    first, again = edits.set_attr((fc1,), "num_hidden", "7"), \
        edits.set_attr((fc1,), "num_hidden", "9")
    first.apply(doc)
    assert first.merge(again)
    doc.set_attrs(again.changes)
    first.revert(doc)
    assert doc.nodes[fc1].attrs["num_hidden"] == hidden     # before the first
    assert not first.merge(edits.set_attr((fc1,), "no_bias", "True"))
    assert not edits.set_node_attrs(fc1, {"a": "1", "b": "2"}).merge(again)


def test_a_saved_and_reloaded_edit_loads_in_mxnet(doc, tmp_path) -> None:
    fc1 = doc.find("fc1")[0]
    doc.set_attrs({fc1: {"num_hidden": "48"}})
    path = tmp_path / "edited-symbol.json"
    doc.save(str(path))
    sym = mx.sym.load(str(path))
    assert sym.get_internals()["fc1_output"].list_attr()["num_hidden"] == "48"
