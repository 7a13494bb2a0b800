"""Edits apply, revert exactly, and give files MXNet loads and binds."""
from __future__ import annotations

import shutil

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.analysis.validate import validate_op_attrs
from mxexplorer.core.convert import export
from mxexplorer.core.graph import edits, tags
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import UserError
from tests.conftest import EXAMPLES


@pytest.fixture
def mlp(tmp_path) -> GraphDocument:
    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return GraphDocument.open(str(tmp_path / "mlp-symbol.json"))


def _roundtrip(doc: GraphDocument, edit) -> None:
    before = doc.to_json()
    rev = doc.revision
    edit.apply(doc)
    assert doc.to_json() != before and doc.revision > rev
    edit.revert(doc)
    assert doc.to_json() == before


def test_set_and_remove_attribute(mlp) -> None:
    fc1 = mlp.find("fc1")[0]
    _roundtrip(mlp, edits.set_attr((fc1,), "num_hidden", "32"))
    _roundtrip(mlp, edits.set_attr((fc1,), "num_hidden", None))
    e = edits.set_attr((fc1,), "__lr_mult__", "0.1")
    e.apply(mlp)
    assert mlp.nodes[fc1].attrs["__lr_mult__"] == "0.1"
    assert "__lr_mult__" in e.describe()


def test_listeners_hear_each_change(mlp) -> None:
    seen = []
    mlp.subscribe(lambda doc, change: seen.append(change.kind))
    e = edits.RenameNodeEdit(mlp.find("fc2")[0], "dense2")
    e.apply(mlp)
    e.revert(mlp)
    assert seen == ["names", "names"]


def test_rename_carries_own_parameters_and_the_checkpoint(mlp, tmp_path) -> None:
    fc1 = mlp.find("fc1")[0]
    rename = edits.RenameNodeEdit(fc1, "stem")
    rename.apply(mlp)
    names = mlp.internal_names()
    assert "stem_weight" in names and "stem_bias" in names and "stem_output" in names
    assert "fc1_weight" not in names
    assert rename.describe() == "Rename fc1 to stem (+2 parameters)"
    assert mlp.param_shapes()["stem_weight"] == (64, 784)
    bn = mlp.find("bn1")[0]
    edits.RenameNodeEdit(bn, "norm").apply(mlp)
    out = tmp_path / "renamed-symbol.json"
    mlp.save(str(out))
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / "renamed"), 0)
    assert "stem_weight" in args and "norm_moving_mean" in aux
    exe = sym.simple_bind(mx.cpu(), data=(2, 784), softmax_label=(2,), grad_req="null")
    exe.copy_params_from(args, aux)
    assert exe.forward()[0].shape == (2, 10)
    original = mx.nd.load(str(EXAMPLES / "mlp-0000.params"))
    assert np.array_equal(args["stem_weight"].asnumpy(), original["arg:fc1_weight"].asnumpy())


def test_rename_refuses_names_in_use_and_undo_restores(mlp) -> None:
    fc1 = mlp.find("fc1")[0]
    with pytest.raises(UserError, match="'fc2' is already used"):
        edits.RenameNodeEdit(fc1, "fc2").apply(mlp)
    with pytest.raises(UserError, match="'fc2_weight' is already used"):
        edits.RenameNodeEdit(mlp.find("data")[0], "fc2_weight").apply(mlp)
    with pytest.raises(UserError, match="empty"):
        edits.RenameNodeEdit(fc1, "  ").apply(mlp)
    _roundtrip(mlp, edits.RenameNodeEdit(fc1, "stem"))
    assert mlp.param_renames == {}
    only_node = edits.RenameNodeEdit(fc1, "stem", with_params=False)
    only_node.apply(mlp)
    assert "fc1_weight" in mlp.internal_names()


def test_rename_refuses_when_a_parameter_would_collide() -> None:
    fc = mx.sym.FullyConnected(mx.sym.var("x_weight"), num_hidden=2, name="fc")
    doc = GraphDocument.from_json(fc.tojson())
    with pytest.raises(UserError, match="'x_weight' is already used"):
        edits.RenameNodeEdit(doc.find("fc")[0], "x").apply(doc)
    assert doc.internal_names() == ["x_weight", "fc_weight", "fc_bias", "fc_output"]


def test_shared_weights_stay_put_on_rename() -> None:
    data = mx.sym.var("data")
    w = mx.sym.var("shared_weight")
    a = mx.sym.FullyConnected(data, weight=w, num_hidden=4, no_bias=True, name="a")
    b = mx.sym.FullyConnected(a, weight=w, num_hidden=4, no_bias=True, name="b")
    doc = GraphDocument.from_json(b.tojson())
    edits.RenameNodeEdit(doc.find("a")[0], "first").apply(doc)
    assert "shared_weight" in doc.internal_names()


def test_prefix_all_names_with_params(mlp, tmp_path) -> None:
    _roundtrip(mlp, edits.PrefixAllEdit("sha-"))
    edits.PrefixAllEdit("sha-").apply(mlp)
    assert all(n.startswith("sha-") for n in mlp.internal_names())
    mlp.save(str(tmp_path / "shared-symbol.json"))
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / "shared"), 0)
    assert set(args) == {n for n in sym.list_arguments() if n.startswith("sha-fc")
                         or n.startswith("sha-bn")}
    assert "sha-data" in sym.list_arguments()


def test_mirror_stage_tags_operators_only(mlp) -> None:
    ids = (mlp.find("fc1")[0], mlp.find("data")[0], mlp.find("relu1")[0])
    edit = edits.mirror_stage_edit(mlp, ids, True)
    assert tuple(edit.changes) == (ids[0], ids[2])
    _roundtrip(mlp, edit)
    edit.apply(mlp)
    assert tags.is_mirror_stage(mlp.nodes[ids[0]].attrs)
    sym = mx.sym.load_json(mlp.to_json())
    assert sym.get_internals()["fc1_output"].list_attr()["__mirror_stage__"] == "True"
    with pytest.raises(UserError):
        edits.mirror_stage_edit(mlp, (mlp.find("data")[0],), True)


def test_validate_op_attrs_uses_mxnets_reason() -> None:
    assert validate_op_attrs("Convolution", {"kernel": "(3, 3)", "num_filter": "8"}) is None
    reason = validate_op_attrs("Convolution", {"kernel": "(3, 3)", "num_filter": "eight"})
    assert reason and "num_filter" in reason and "in operator" not in reason
    assert validate_op_attrs("Convolution", {"kernel": "3x3", "num_filter": "8"})
    assert validate_op_attrs("Convolution", {"num_filter": "8", "__lr_mult__": "x"})
    assert validate_op_attrs("FullyConnected", {"num_hidden": "4", "__lr_mult__": "2"}) \
        is None


def test_cut_here_exports_a_feature_extractor(zoo, tmp_path) -> None:
    doc = GraphDocument.open(str(zoo("resnet18_v1")))
    names = doc.internal_names()
    entry = doc.internals()[names.index("resnetv10_pool1_fwd_output")]
    out = tmp_path / "features-symbol.json"
    params = export.export_cut(doc, entry.node, entry.index, str(out))
    assert params and params.endswith("features-0000.params")
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / "features"), 0)
    assert sym.list_outputs() == ["resnetv10_pool1_fwd_output"]
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (1, 3, 224, 224))], for_training=False)
    mod.set_params(args, aux, allow_extra=True)
    mod.forward(mx.io.DataBatch([mx.nd.ones((1, 3, 224, 224))]), is_train=False)
    assert mod.get_outputs()[0].shape == (1, 512, 1, 1)


def test_checkpoint_classification_follows_renames(tmp_path) -> None:
    """A learned tensor fed through a plain input slot is a parameter because the
    checkpoint says so, before and after it is renamed."""
    data, offset = mx.sym.var("data"), mx.sym.var("offset")
    sym = mx.sym.broadcast_add(data, offset, name="shift")
    sym.save(str(tmp_path / "shift-symbol.json"))
    mx.nd.save(str(tmp_path / "shift-0000.params"), {"arg:offset": mx.nd.ones((1, 3))})
    doc = GraphDocument.open(str(tmp_path / "shift-symbol.json"))
    offset_id = doc.find("offset")[0]
    assert [doc.nodes[i].name for i in doc.data_inputs()] == ["data"]
    edits.RenameNodeEdit(offset_id, "bias_offset").apply(doc)
    assert [doc.nodes[i].name for i in doc.data_inputs()] == ["data"]
    assert doc.param_shapes() == {"bias_offset": (1, 3)}


@pytest.mark.parametrize("var, old, new, slot, want", [
    ("conv1_weight", "conv1", "stem", "weight", "stem_weight"),
    ("resnetv10_conv0_weight", "resnetv10_conv0_fwd", "stem_conv0_fwd", "weight",
     "stem_conv0_weight"),
    ("resnetv10_conv0_weight", "resnetv10_conv0_fwd", "first", "weight", "first_weight"),
    ("resnetv10_batchnorm0_running_mean", "resnetv10_batchnorm0_fwd", "bn_fwd",
     "moving_mean", "bn_running_mean"),
    ("w0", "fc", "dense", "weight", "dense_weight"),
    ("fc1weight", "fc1", "fc2", "weight", "fc2weight"),
])
def test_renamed_variable_keeps_the_variables_own_ending(var, old, new, slot, want) -> None:
    assert edits.renamed_variable(var, old, new, slot) == want


def test_rename_finds_parameters_by_input_slot_not_by_name() -> None:
    """Gluon names a layer ``..._fwd`` and its weight ``..._weight``; a hand-made
    graph may name its weight anything: both follow the layer's new name."""
    data = mx.sym.var("data")
    w = mx.sym.var("w0")
    conv = mx.sym.Convolution(data, weight=w, kernel=(3, 3), num_filter=4, no_bias=True,
                              name="net_conv0_fwd")
    bn = mx.sym.BatchNorm(conv, name="net_bn0_fwd")
    doc = GraphDocument.from_json(bn.tojson())
    edit = edits.RenameNodeEdit(doc.find("net_conv0_fwd")[0], "stem_conv0_fwd")
    edit.apply(doc)
    # a weight named unlike its layer takes the name MXNet would give it
    assert "stem_conv0_fwd_weight" in doc.internal_names() and "w0" not in doc.internal_names()
    # MXNet named the BatchNorm's variables after the whole node name
    edits.RenameNodeEdit(doc.find("net_bn0_fwd")[0], "stem_bn0_fwd").apply(doc)
    names = set(doc.internal_names())
    assert {"stem_bn0_fwd_gamma", "stem_bn0_fwd_beta", "stem_bn0_fwd_moving_mean",
            "stem_bn0_fwd_moving_var"} <= names
    sym = mx.sym.load_json(doc.to_json())
    assert sym.list_auxiliary_states() == ["stem_bn0_fwd_moving_mean",
                                           "stem_bn0_fwd_moving_var"]


def test_a_shared_weight_stays_and_the_rename_says_so() -> None:
    data = mx.sym.var("data")
    w = mx.sym.var("shared_weight")
    a = mx.sym.FullyConnected(data, weight=w, num_hidden=4, no_bias=True, name="a")
    b = mx.sym.FullyConnected(a, weight=w, num_hidden=4, no_bias=True, name="b")
    doc = GraphDocument.from_json(b.tojson())
    edit = edits.RenameNodeEdit(doc.find("a")[0], "first")
    assert "shared_weight (shared with b)" in edit.shared_note(doc)
    edit.apply(doc)
    assert "shared_weight" in doc.internal_names()
    assert edits.RenameNodeEdit(doc.find("b")[0], "x", with_params=False).shared_note(doc) == ""


# ------------------------------------------------------------------ limits (issue 24)
def test_the_editor_refuses_what_mxnet_would_cut_or_the_loader_refuse(mlp) -> None:
    """One set of limits with the loader: an edit that passes makes a file that opens
    again.  A NUL passed MXNet's own check (ctypes stops at it) and MXNet then refused
    the saved file; num_outputs of 5,000,000 was accepted and grew the window past
    4 GB, and the saved file was one mxexplorer refuses to open."""
    from mxexplorer.core.graph import edits as e

    fc1 = mlp.find("fc1")[0]
    for values in ({"num_hidden": "12\x0034"}, {"bad\x00key": "1"}):
        why = e.attrs_problem(mlp, fc1, values)
        assert why is not None and "NUL" in why, values
    assert "NUL" in (e.name_problem("fc\x001") or "")
    assert e.name_problem("fc1_renamed") is None
    split = _split_graph()
    node = split.find("split")[0]
    why = e.attrs_problem(split, node, {"num_outputs": "5000000"})
    assert why is not None and "at most 100,000" in why
    assert e.attrs_problem(split, node, {"num_outputs": "-2"}) is not None
    assert e.attrs_problem(split, node, {"num_outputs": "4"}) is None
    # a change that multiplies the graph is told (the window asks first)
    assert e.outputs_added(split, node, {"num_outputs": "60000"}) == 60000 - 2
    assert e.outputs_added(split, node, {"num_outputs": "4"}) == 2


def test_the_window_never_saves_a_file_it_would_refuse_to_open(mlp, tmp_path) -> None:
    """Every value the editor lets through is saved and opened again."""
    from mxexplorer.core.graph import edits as e

    fc1 = mlp.find("fc1")[0]
    for key, value in (("num_hidden", "12"), ("note", "tab\there, newline\nthere"),
                       ("unicode", "é ✓ \U0001f600")):
        assert e.attrs_problem(mlp, fc1, {key: value}) is None
        e.set_attr((fc1,), key, value).apply(mlp)
    path = tmp_path / "edited-symbol.json"
    mlp.save(str(path))
    again = GraphDocument.open(str(path))
    assert again.nodes[again.find("fc1")[0]].attrs["unicode"] == "é ✓ \U0001f600"


def _split_graph() -> GraphDocument:
    import json

    return GraphDocument.from_json(json.dumps({
        "nodes": [{"op": "null", "name": "data", "inputs": []},
                  {"op": "SliceChannel", "name": "split", "attrs": {"num_outputs": "2"},
                   "inputs": [[0, 0, 0]]}],
        "arg_nodes": [0], "heads": [[1, 0, 0], [1, 1, 0]]}))


def test_cut_here_proposes_a_file_in_the_models_folder() -> None:
    """The proposed name came from the node's name as it was: ``../../x`` or an
    absolute name left the folder."""
    import os

    for name in ("../../x", "/etc/passwd", "..", "a/b\\c", "fc\n1\x00", "..hidden", ""):
        stem = export.file_stem(name)
        assert stem and "/" not in stem and "\\" not in stem and not stem.startswith(".")
        assert os.path.dirname(os.path.join("/models", stem + "-symbol.json")) == "/models"
    assert export.file_stem("resnetv10_pool1_fwd") == "resnetv10_pool1_fwd"
