"""Shape inference: every internal's shape as MXNet infers it, and readable errors."""
from __future__ import annotations

import mxnet as mx
import pytest

from mxexplorer.core.analysis import shapes
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import UserError
from tests.conftest import CORPUS, DATA, EXAMPLES

# corpus file -> input shapes that MXNet accepts (from ../shared/corpus/VERIFY.md)
CORPUS_SHAPES = {
    "1996scarlet__ArcFace-Multiplex-Recognition__model__arcface-symbol.json":
        {"data": (1, 3, 112, 112)},
    "apache__mxnet__tests__python__unittest__save_000800.json": {"data": (1, 100)},
    "deepinsight__insightface__deploy__mtcnn-model__det4-symbol.json": {"data": (1, 15, 24, 24)},
    "jessebrizzi__MXNet-Bug__resnet-152-symbol.json": {"data": (1, 3, 224, 224)},
    "bogireddytejareddy__retinaface-pytorch__mnet.25-symbol.json": {"data": (1, 3, 640, 640)},
    "laurentCoach__Boats-Detection-With-Google-Maps__model__model_algo_1-symbol.json":
        {"data": (1, 3, 512, 512), "label": (1, 10, 6)},
    "sterling239__omg_challenge__model-symbol.json":
        {"images": (6, 40, 3, 112, 112), "body": (6, 40, 50), "specters": (6, 9, 3, 40, 40),
         "emotions": (6, 7)},
    "awslabs__multi-model-server__examples__lstm_ptb__model__lstm_ptb-symbol.json":
        {"data": (35, 1), "softmax_label": (35, 1)},
    "xuezu29__AutorecoFram1.0.0__yolo3-symbol.json": {"data": (1, 3, 416, 416)},
}


def _mx_internal_shapes(path: str, given: dict) -> list:
    sym = mx.sym.load(path)
    _, out, _ = sym.get_internals().infer_shape_partial(**given)
    return [tuple(s) if s else None for s in out]


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(CORPUS_SHAPES), ids=lambda n: n[:60])
def test_corpus_shapes_equal_mxnets(name: str) -> None:
    path = str(CORPUS / name)
    doc = GraphDocument.open(path)
    result = shapes.infer(doc.to_json(), CORPUS_SHAPES[name])
    assert result.error is None
    assert list(result.internal_shapes) == _mx_internal_shapes(path, CORPUS_SHAPES[name])
    assert len(result.internal_shapes) == len(doc.internals())


def test_gluon_export_with_checkpoint_shapes(zoo) -> None:
    doc = GraphDocument.open(str(zoo("resnet18_v1")))
    result = shapes.infer(doc.to_json(), {"data": (2, 3, 224, 224)},
                          param_shapes=doc.param_shapes())
    assert result.complete
    assert result.output_shapes == ((2, 1000),)
    assert result.arg_shapes["resnetv10_conv0_weight"] == (64, 3, 7, 7)
    assert result.aux_shapes["resnetv10_batchnorm0_running_mean"] == (64,)
    assert set(result.internal_dtypes) == {"float32"}


def test_checkpoint_weights_reveal_a_wrong_input_shape() -> None:
    doc = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))
    result = shapes.infer(doc.to_json(), {"data": (4, 100)}, param_shapes=doc.param_shapes())
    assert result.error is not None
    assert result.error.node == "fc1" and result.error.op == "FullyConnected"
    assert "'fc1_weight' (weight)" in result.error.message
    assert result.error.provided == (64, 784) and result.error.expected == (64, 100)
    # what lies upstream of the failure is still known
    names = doc.internal_names()
    assert result.internal_shapes[names.index("data")] == (4, 100)


def test_incompatible_inputs_name_the_node_and_shapes() -> None:
    data = mx.sym.var("data")
    a = mx.sym.Convolution(data, kernel=(3, 3), num_filter=8, name="conv")
    b = mx.sym.FullyConnected(data, num_hidden=10, name="fc")
    bad = mx.sym.elemwise_add(a, b, name="add")
    doc = GraphDocument.from_json(bad.tojson())
    result = shapes.infer(doc.to_json(), {"data": (2, 3, 8, 8)})
    err = result.error
    assert err is not None and err.node == "add" and err.op == "elemwise_add"
    assert err.message == ("input 'fc' (rhs) has shape (2, 10), but input 'conv' (lhs) "
                           "has shape (2, 8, 6, 6): the inputs of elemwise_add must have one "
                           "shape")
    names = doc.internal_names()
    assert result.internal_shapes[names.index("conv_output")] == (2, 8, 6, 6)
    assert result.internal_shapes[names.index("add_output")] is None


def test_wrong_rank_message_is_plain() -> None:
    doc = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json"))
    err = shapes.infer(doc.to_json(), {"data": (1, 3, 224)}).error
    assert err is not None and err.node == "resnetv10_conv0_fwd"
    assert err.message == ("data has 3 dimensions (1, 3, 224), but the 2-D kernel (7, 7) "
                           "needs 4-D data (batch, channel, height, width): give data 4 "
                           "dimensions, or a kernel of 1 dimension")


def test_partial_inference_without_the_label() -> None:
    doc = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))
    result = shapes.infer(doc.to_json(), {"data": (8, 784)})
    assert result.error is None
    assert result.output_shapes == ((8, 10),)  # SoftmaxOutput infers its label
    two_inputs = mx.sym.elemwise_add(mx.sym.var("a"), mx.sym.var("b"), name="s")
    res = shapes.infer(GraphDocument.from_json(two_inputs.tojson()).to_json(), {})
    assert not res.complete and res.internal_shapes == (None, None, None)
    assert res.missing_inputs == ("a", "b")


def test_unknown_op_is_reported_by_inference_only() -> None:
    doc = GraphDocument.open(str(DATA / "unknown_op-symbol.json"))
    result = shapes.infer(doc.to_json(), {"data": (1, 3)})
    assert result.error is not None
    assert result.error.op == "MyFancyOp" and result.error.node == "fancy"
    assert "operator MyFancyOp is not in MXNet 1.9.1" in result.error.message
    assert "mxexplorer has no rule for it" in result.error.message


def test_unknown_input_name_and_bad_shape_text() -> None:
    doc = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))
    with pytest.raises(UserError, match="no input named 'image'"):
        shapes.infer(doc.to_json(), {"image": (1, 784)})
    for bad in ("data", "data=", "data=1,x", "=1,2", "data=1,-2", "data=0,3"):
        with pytest.raises(UserError):
            shapes.parse_shape_arg(bad)
    assert shapes.parse_shape_arg("data/0=(1, 3)") == ("data/0", (1, 3))
