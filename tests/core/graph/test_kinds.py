"""Which variables are parameters when no checkpoint says so (issue 12): every signal a
real file carries, on small hand-built graphs modelled on real ones."""
from __future__ import annotations

import json

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.analysis import stats
from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind

DATA = mx.sym.var("data")


def _kinds(sym) -> dict[str, str]:
    doc = GraphDocument.from_json(sym.tojson())
    return {doc.nodes[i].name: doc.kinds()[i].value for i in range(len(doc.nodes))
            if doc.nodes[i].is_variable}


def _conv():
    return mx.sym.Convolution(DATA, kernel=(3, 3), num_filter=8, name="conv")


def test_an_l2normalization_scale_with_a_shape_is_a_parameter() -> None:
    """SSD's relu4_3_scale: a (1, C, 1, 1) variable multiplied into a normalised map."""
    scale = mx.sym.var("relu4_3_scale", shape=(1, 8, 1, 1))
    out = mx.sym.broadcast_mul(scale, mx.sym.L2Normalization(_conv(), mode="channel"))
    assert _kinds(out)["relu4_3_scale"] == "param"


def test_a_broadcast_mul_scale_with_an_initializer_is_a_parameter() -> None:
    scale = mx.sym.var("anchor", init=mx.init.Constant(2.0))
    out = mx.sym.broadcast_mul(_conv(), scale)
    assert _kinds(out)["anchor"] == "param"


def test_a_slice_like_offset_with_an_initializer_is_a_parameter() -> None:
    """YOLO-v3's offsets reach slice_like through its data slot."""
    offset = mx.sym.var("offset_0", init=mx.init.Zero(), shape=(1, 1, 32, 32, 2))
    out = mx.sym.broadcast_add(mx.sym.slice_like(offset, _conv(), axes=(2, 3)), _conv())
    assert _kinds(out)["offset_0"] == "param"


def test_real_inputs_stay_inputs() -> None:
    # a data input with lr_mult (MXNet's own tests do this), an LSTM's initial state,
    # a label, a second image input with a shape hint: all fed, none learned
    data = mx.sym.var("data", lr_mult=0.5)
    state = mx.sym.var("l0_init_c")
    second = mx.sym.var("depth", shape=(1, 1, 8, 8))
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    mixed = mx.sym.broadcast_mul(fc, state)
    both = mx.sym.Concat(mx.sym.Flatten(second), mixed, dim=1)
    out = mx.sym.SoftmaxOutput(both, mx.sym.var("softmax_label"), name="softmax")
    kinds = _kinds(out)
    assert [k for k, v in kinds.items() if v == "data"] == \
        ["depth", "data", "l0_init_c", "softmax_label"]
    assert kinds["fc_weight"] == "param"


def test_the_face_model_counts_its_scale_among_the_parameters() -> None:
    """Parameters were short on a face model: its scale was taken for an input."""
    scale = mx.sym.var("fc1_scale", shape=(1, 512), init=mx.init.One())
    emb = mx.sym.L2Normalization(mx.sym.FullyConnected(mx.sym.Flatten(_conv()),
                                                       num_hidden=512, name="fc1"))
    doc = GraphDocument.from_json(mx.sym.broadcast_mul(emb, scale).tojson())
    assert [doc.nodes[i].name for i in doc.data_inputs()] == ["data"]
    from mxexplorer.core.analysis import shapes

    result = shapes.infer(doc.to_json(), {"data": (1, 3, 8, 8)})
    assert stats.compute(doc, result).params == 8 * 3 * 9 + 8 + 8 * 36 * 512 + 512 + 512


def test_the_user_can_say_what_a_variable_is_in_one_undo_step() -> None:
    offset = mx.sym.var("offset")
    doc = GraphDocument.from_json(mx.sym.broadcast_add(_conv(), offset).tojson())
    i = doc.find("offset")[0]
    assert doc.kinds()[i] == NodeKind.DATA
    edit = edits.SetVariableKindEdit(i, NodeKind.PARAM)
    edit.apply(doc)
    assert doc.kinds()[i] == NodeKind.PARAM and doc.find("offset")[0] not in doc.data_inputs()
    snap = GraphDocument.from_snapshot(doc.snapshot())     # workers see the same
    assert snap.kinds()[i] == NodeKind.PARAM
    edit.revert(doc)
    assert doc.kinds()[i] == NodeKind.DATA
    with pytest.raises(Exception, match="only variables"):
        edits.SetVariableKindEdit(doc.find("conv")[0], NodeKind.PARAM).apply(doc)
    assert "offset" not in json.loads(doc.to_json())["nodes"][i].get("attrs", {})


def test_an_unregistered_custom_op_is_unknown_and_stops_inference_in_one_line() -> None:
    conv = _conv()
    graph = json.loads(mx.sym.FullyConnected(conv, num_hidden=3, name="fc").tojson())
    # splice a Custom node (its op_type registered by nobody) between conv and fc
    nodes = graph["nodes"]
    conv_id = next(k for k, n in enumerate(nodes) if n["name"] == "conv")
    nodes.append({"op": "Custom", "name": "rois", "attrs": {"op_type": "proposal"},
                  "inputs": [[conv_id, 0, 0]]})
    fc = next(n for n in nodes if n["name"] == "fc")
    fc["inputs"][0] = [len(nodes) - 1, 0, 0]
    graph["node_row_ptr"] = list(range(len(nodes) + 1))
    doc = GraphDocument.from_json(json.dumps(graph))
    assert doc.unknown_ops() == ["Custom:proposal"]
    from mxexplorer.core.analysis import shapes

    result = shapes.infer(doc.to_json(), {"data": (1, 3, 8, 8)})
    err = result.error
    assert err is not None and (err.node, err.op) == ("rois", "Custom:proposal")
    line = err.one_line()
    assert "\n" not in line and "Traceback" not in line and ".cc" not in line
    assert result.by_entry[(conv_id, 0)] == (1, 8, 6, 6)        # what comes before it


def _normalised_classifier(**weight_attrs):
    """The head of FaceRec's MobileFaceNet (MarioBR04/FaceRec, models/model-symbol.json,
    issue 37), shrunk: the class weights reach the classifier through
    L2Normalization, so no weight slot reads the variable itself; the file carries
    ``__lr_mult__`` and ``__shape__`` on it and nothing only learned tensors carry."""
    emb = mx.sym.FullyConnected(mx.sym.Flatten(_conv()), num_hidden=16, name="pre_fc1",
                                weight=mx.sym.var("fc1_weight", lr_mult=1.0,
                                                  wd_mult=1.0, shape=(16, 288)))
    emb = mx.sym.BatchNorm(emb, fix_gamma=True, eps=2e-5, name="fc1")
    scaled = mx.sym.L2Normalization(emb, mode="instance", name="fc1n") * 64.0
    weight = mx.sym.var("fc7_weight", **weight_attrs)
    fc7 = mx.sym.FullyConnected(scaled, mx.sym.L2Normalization(weight, mode="instance"),
                                no_bias=True, num_hidden=10, name="fc7")
    label = mx.sym.var("softmax_label")
    out = mx.sym.SoftmaxOutput(fc7 - mx.sym.one_hot(label, depth=10, on_value=22.4),
                               label, normalization="valid", name="softmax")
    return mx.sym.Group([mx.sym.BlockGrad(emb), out])


@pytest.mark.parametrize("attrs", [
    {"lr_mult": 1.0},                                   # as the FaceRec file has it
    {}, {"dtype": "float32"}, {"stype": "row_sparse"}, {"init": mx.init.Normal(0.01)},
    {"wd_mult": 10.0}, {"lr_mult": 1.0, "dtype": "float16"},
], ids=lambda a: "+".join(["shape", *sorted(a)]))
def test_a_normalised_classifier_weight_counts_as_mxnet_counts_it(attrs) -> None:
    """Issue 37: 1,201,024 parameters where MXNet counts 4,144,512 (fc7_weight, read
    through L2Normalization, taken for a data input).  MXNet's count: the arguments a
    Module is not fed (data and label), at the shapes MXNet infers (``__shape__`` is
    what lets it: L2Normalization does not pass a shape back to its input)."""
    sym = _normalised_classifier(shape=(10, 16), **attrs)
    doc = GraphDocument.from_json(sym.tojson())
    assert [doc.nodes[i].name for i in doc.data_inputs()] == ["data", "softmax_label"]
    from mxexplorer.core.analysis import shapes

    given = {"data": (2, 3, 8, 8), "softmax_label": (2,)}
    assert "fc7_weight" not in shapes.guess_input_shapes(doc)
    args, _, aux = sym.infer_shape(**given)
    mx_params = sum(int(np.prod(s)) for n, s in zip(sym.list_arguments(), args)
                    if n not in given)
    st = stats.compute(doc, shapes.infer(doc.to_json(), given))
    assert st.params == mx_params == (8 * 3 * 9 + 8) + (16 * 288 + 16) + 2 * 16 + 10 * 16
    assert st.aux_values == sum(int(np.prod(s)) for s in aux)

