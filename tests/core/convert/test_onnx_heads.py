"""ONNX export of training heads and of the ops MXNet's converters lack (issue 26): each
replaced by its inference meaning or converted by our own converter, checked against
MXNet's forward of the original graph."""
from __future__ import annotations

import json

import mxnet as mx
import pytest

from mxexplorer.cli import main
from mxexplorer.core.convert import onnx_check, onnx_export, onnx_fixes
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import CORPUS, REPO
from tests.core.convert.exporting import agrees_with_mxnet, export_checked


def _margin_head():
    """A normalised-softmax face model's training head (insightface's AM-softmax, as in
    the corpus): the label feeds one_hot, subtracted from the scores."""
    data, label = mx.sym.var("data"), mx.sym.var("softmax_label")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc7")
    margin = mx.sym.one_hot(label, depth=4, on_value=0.35, name="oh")
    return mx.sym.SoftmaxOutput(mx.sym.elemwise_sub(fc, margin, name="minus"), label,
                                name="softmax")


def test_a_label_fed_to_one_hot_exports_with_every_argument_typed(tmp_path) -> None:
    """Issue 26, fault 5: the label had no dtype, so the export stopped ("Index type must
    be set for one_hot operator", shown as "'NoneType' object is not iterable"); every
    argument is float32, as simple_bind makes it."""
    report = export_checked(_margin_head(), {"data": (2, 8)}, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()


@pytest.mark.parametrize("command", [["plan", "--search", "original"], ["bench",
                                                                        "--repeats", "1"]])
def test_plan_and_bench_bind_a_label_fed_to_one_hot(tmp_path, capsys, command) -> None:
    """Issue 26, fault 5: plan and bench refused the graph simple_bind(data=...) binds."""
    path = tmp_path / "margin-symbol.json"
    _margin_head().save(str(path))
    rc = main([command[0], str(path), "--shape", "data=2,8", *command[1:]])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "one_hot" not in captured.err


@pytest.mark.parametrize("op, meaning", [
    ("LinearRegressionOutput", "its data (identity)"),
    ("MAERegressionOutput", "its data (identity)"),
    ("LogisticRegressionOutput", "sigmoid"),
    ("SVMOutput", "its data (identity)"),
])
def test_regression_and_svm_heads_export_as_their_inference_meaning(tmp_path, op,
                                                                     meaning) -> None:
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    net = getattr(mx.sym, op)(fc, name="head")
    assert "head_label" in net.list_arguments()
    agrees_with_mxnet(net, {"data": (2, 5)}, tmp_path,
                       f"{op} 'head' exported as {meaning} (its inference meaning); its "
                       "label input 'head_label' dropped")


@pytest.mark.parametrize("mode, shape", [("instance", (2, 6)), ("instance", (2, 3, 4, 4)),
                                         ("channel", (2, 3, 4, 4)), ("channel", (2, 5, 3))])
def test_softmax_activation_exports_in_both_modes(tmp_path, mode, shape) -> None:
    """MTCNN's heads: 8 of the issue's files were refused for this op alone."""
    data = mx.sym.var("data")
    net = mx.sym.SoftmaxActivation(data * 2, mode=mode, name="prob1")
    agrees_with_mxnet(net, {"data": shape}, tmp_path, "")


@pytest.mark.corpus
def test_mtcnn_det1_from_the_corpus_exports_and_agrees(tmp_path) -> None:
    path = CORPUS / "deepinsight__insightface__deploy__mtcnn-model__det1-symbol.json"
    doc = GraphDocument.open(str(path))
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (1, 3, 48, 48)},
                                         str(tmp_path / "d.onnx"), check=True)
    assert report.check is not None and report.check.agree, report.lines()


def test_image_transforms_export_as_mxnet_computes_them(tmp_path) -> None:
    data = mx.sym.var("data")
    tensor = mx.sym.image.to_tensor(data, name="totensor")
    net = mx.sym.image.normalize(tensor, mean=(0.485, 0.456, 0.406),
                                 std=(0.229, 0.224, 0.225), name="norm")
    for shape in [(8, 6, 3), (2, 8, 6, 3)]:
        agrees_with_mxnet(net, {"data": shape}, tmp_path, "")


def test_multibox_priors_export_as_constants(tmp_path) -> None:
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv")
    anchors = mx.sym.contrib.MultiBoxPrior(conv, sizes=(0.2, 0.4), ratios=(1, 2),
                                           name="anchors")
    net = mx.sym.Group([mx.sym.relu(conv, name="act"), anchors])
    agrees_with_mxnet(net, {"data": (1, 3, 8, 8)}, tmp_path,
                       "MultiBoxPrior node(s) (anchors) exported as constants")


def test_a_ctc_loss_head_exports_the_graph_that_feeds_it(tmp_path) -> None:
    data, label = mx.sym.var("data"), mx.sym.var("label")
    scores = mx.sym.Reshape(mx.sym.FullyConnected(data, num_hidden=6 * 5, name="fc"),
                            shape=(0, 6, 5), name="scores")
    steps = mx.sym.transpose(scores, axes=(1, 0, 2), name="steps")
    loss = mx.sym.MakeLoss(mx.sym.contrib.CTCLoss(steps, label, name="ctc"), name="loss")
    report = agrees_with_mxnet(loss, {"data": (2, 8), "label": (2, 3)}, tmp_path,
                                "CTCLoss 'ctc' is a training loss: the output that "
                                "feeds it ('steps') is exported in its place")
    assert report.check is not None
    assert [o.name for o in report.check.outputs] == ["steps_output"]


def test_the_first_differing_node_is_named_in_the_cli(tmp_path, capsys) -> None:
    """A differing export names its first differing node, in words and in --json."""
    data = mx.sym.var("data")
    bn = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=4, name="fc"),
                          fix_gamma=True, name="bn")
    net = mx.sym.FullyConnected(mx.sym.relu(bn, name="act"), num_hidden=2, name="head")
    report = export_checked(net, {"data": (3, 5)}, tmp_path, name="g.onnx", fix_gamma=False)
    assert report.check is not None and not report.check.agree
    first = report.check.first
    assert first is not None and (first.name, first.op, first.inputs_agree) == \
        ("bn", "BatchNorm", True)
    assert "first difference at 'bn' (BatchNorm)" in report.check.verdict()
    # run alone on MXNet's own inputs, the node still differs: the converter's fault
    assert first.alone_agrees is False
    assert "fed MXNet's own inputs it still differs" in report.check.verdict()
    assert json.loads(json.dumps(report.to_dict()))["check"]["first_difference"]["op"] == \
        "BatchNorm"


def test_the_first_difference_search_is_bounded_and_stops_at_the_first_part(
        tmp_path, monkeypatch) -> None:
    """Every intermediate output marked at once took Mask R-CNN's search past 17 GB
    (the kernel killed it): the outputs are compared in parts of at most
    ``SEARCH_BYTES`` each, in graph order, and the search stops at the first part that
    differs.  With one output per part, the fix_gamma BatchNorm is still named, after
    comparing two outputs (fc, bn) of the four."""
    data = mx.sym.var("data")
    bn = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=4, name="fc"),
                          fix_gamma=True, name="bn")
    net = mx.sym.FullyConnected(mx.sym.relu(bn, name="act"), num_hidden=2, name="head")

    def first(name: str) -> object:
        report = export_checked(net, {"data": (3, 5)}, tmp_path, name=name, fix_gamma=False)
        assert report.check is not None
        return report.check.first

    whole = first("whole.onnx")
    assert isinstance(whole, onnx_check.NodeDifference)
    assert (whole.name, whole.inputs_agree, whole.compared) == ("bn", True, 4)
    monkeypatch.setattr(onnx_check, "SEARCH_BYTES", 1)
    parted = first("parts.onnx")
    assert isinstance(parted, onnx_check.NodeDifference)
    assert (parted.name, parted.inputs_agree, parted.compared) == ("bn", True, 2)
    assert parted.max_abs == whole.max_abs


def test_a_committed_mtcnn_checkpoint_exports_with_its_weights_and_agrees(tmp_path) -> None:
    """InsightFace's MTCNN ONet (MIT, benchmarks/corpus): a SoftmaxOutput saved with its
    label and PReLU after a FullyConnected, with its trained weights; both failed
    before (IndexError)."""
    path = REPO / "benchmarks" / "corpus" / "insightface__det3-symbol.json"
    doc = GraphDocument.open(str(path))
    assert doc.params_path and doc.params_path.endswith("det3-0001.params")
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (1, 3, 48, 48)},
                                         str(tmp_path / "onet.onnx"), check=True)
    assert report.check is not None and report.check.agree, report.lines()
    assert report.weights == "weights of insightface__det3-0001.params"
    assert any("its label input 'prob1_label' dropped" in f for f in report.fixes)


def test_a_label_shape_only_the_user_can_give_reaches_mxnets_check(tmp_path) -> None:
    """go-mxnet-predictor's test graph: Reshape(-1) flattens data and label alike, so the
    label's shape is given with --shape; MXNet's check of the original graph lost it
    ("InferShape pass cannot decide shapes ... softmax_label")."""
    data = mx.sym.Reshape(mx.sym.var("data"), shape=(-1, 1), name="flat")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=10, name="fc"),
                               mx.sym.Reshape(mx.sym.var("softmax_label"), shape=(-1,),
                                              name="lab"), name="softmax")
    agrees_with_mxnet(net, {"data": (1, 12), "softmax_label": (12,)}, tmp_path,
                       "SoftmaxOutput 'softmax' exported as softmax")


@pytest.mark.parametrize("shape, data", [((-4, 4, -1, 0), (8, 6)),            # CRNN's
                                         ((0, -4, 2, -1, -2), (2, 6, 3, 3)),  # channel
                                         ((0, -3, -2), (2, 3, 4, 5, 6))])      # shuffles
def test_reshape_with_special_values_exports_its_inferred_shape(tmp_path, shape,
                                                                 data) -> None:
    """MXNet's converter refused -2, -3 and -4 ("Reshape: Shape value not supported in
    ONNX", 4 corpus files: CRNN OCR, ShuffleNet channel shuffles)."""
    net = mx.sym.Reshape(mx.sym.relu(mx.sym.var("data"), name="act"), shape=shape,
                         name="split")
    agrees_with_mxnet(net, {"data": data}, tmp_path,
                       "Reshape node(s) (split) given their inferred shape")


def test_inputs_read_as_indices_get_token_ids_and_lengths(tmp_path) -> None:
    """Uniform inputs in [-1, 1] made every token id 0 and every valid length 0 (BERT:
    every position masked, MXNet's output the same everywhere): the check proved
    little.  An input an Embedding reads gets ids below its ``input_dim``; a sequence
    length, lengths from 1 to the sequence's."""
    tokens, lengths = mx.sym.var("tokens"), mx.sym.var("lengths")
    embed = mx.sym.Embedding(tokens, input_dim=50, output_dim=4, name="embed")
    net = mx.sym.SequenceLast(embed, lengths, use_sequence_length=True, axis=1,
                              name="last")
    report = agrees_with_mxnet(net, {"tokens": (3, 7), "lengths": (3,)}, tmp_path, "")
    assert report.check is not None
    assert "token ids below 50 for 'tokens'" in report.check.verdict()
    assert "lengths 1 to 7 for 'lengths'" in report.check.verdict()
    shapes = {"tokens": (3, 7), "lengths": (3,)}
    indices = onnx_check.index_inputs(net.tojson(), onnx_fixes.InputRanks(net, shapes)
                                      .input_shape)
    assert indices == {"tokens": (0, 49), "lengths": (1, 7)}
    feed, _ = onnx_check.make_inputs(mx, shapes, None, indices=indices)
    assert feed["tokens"].min() >= 0 and feed["tokens"].max() <= 49
    assert len(set(feed["tokens"].ravel().tolist())) > 5
    assert set(feed["lengths"].tolist()) <= set(range(1, 8))


@pytest.mark.parametrize("align_corners", [True, False])
def test_bilinear_resize_exports_both_corner_modes(tmp_path, align_corners) -> None:
    """MXNet's converter wrote align_corners whatever the attribute said: with
    align_corners=False the output was 20 % off (found by probing ops)."""
    net = mx.sym.contrib.BilinearResize2D(mx.sym.var("data"), height=11, width=9,
                                          align_corners=align_corners, name="up")
    agrees_with_mxnet(net, {"data": (1, 3, 7, 7)}, tmp_path, "")


def test_a_deconvolution_without_no_bias_exports_with_mxnets_default(tmp_path) -> None:
    """MXNet's Deconvolution has no bias unless told (``no_bias`` defaults to True); its
    converter read a missing attribute as False and stopped ("Deconvolution takes 3
    input if no_bias==False")."""
    graph = json.loads(mx.sym.Deconvolution(mx.sym.var("data"), num_filter=2, kernel=(3, 3),
                                            stride=(2, 2), adj=(1, 1), pad=(1, 1),
                                            name="up").tojson())
    for node in graph["nodes"]:
        node.get("attrs", {}).pop("no_bias", None)
    net = mx.sym.load_json(json.dumps(graph))
    agrees_with_mxnet(net, {"data": (1, 3, 5, 5)}, tmp_path,
                       "Deconvolution node(s) (up) given no_bias=True")


def test_a_prelu_after_a_fully_connected_exports_when_the_dropped_label_has_a_shape(
        tmp_path) -> None:
    """sterling239's omg_challenge model: its regression head's label ('emotions') was
    given a shape and dropped with the head, so the shape inference behind every rank
    failed on the unknown name and the PReLU slope on 2-D data was reshaped for 4-D
    (onnxruntime: "GEMM: Dimension mismatch" at the next FullyConnected)."""
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    act = mx.sym.LeakyReLU(fc1, act_type="prelu", name="act")
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name="fc2")
    net = mx.sym.LinearRegressionOutput(fc2, mx.sym.var("emotions"), name="head")
    agrees_with_mxnet(net, {"data": (2, 5), "emotions": (2, 3)}, tmp_path,
                       "LinearRegressionOutput 'head' exported as its data")


@pytest.mark.parametrize("squeeze", [True, False])
def test_a_slice_channel_of_more_than_100_outputs_exports(tmp_path, squeeze) -> None:
    """tonytong's lstm_2_50_100: an unrolled LSTM splits 200 time steps with one
    SliceChannel; MXNet's converter records at most 100 outputs of a node, so the
    step reading output 199 failed ("IndexError: list index out of range")."""
    steps = mx.sym.SliceChannel(mx.sym.var("data"), num_outputs=200, axis=1,
                                squeeze_axis=squeeze, name="steps")
    net = mx.sym.Group([mx.sym.relu(steps[k], name=f"act{k}") for k in (0, 99, 100, 157, 199)])
    agrees_with_mxnet(net, {"data": (2, 200, 3)}, tmp_path,
                       "SliceChannel node(s) (steps) of more than 100 outputs split in two")


def test_a_slice_channel_of_a_prime_number_of_outputs_over_100_is_refused_by_name(
        tmp_path) -> None:
    steps = mx.sym.SliceChannel(mx.sym.var("data"), num_outputs=101, axis=1, name="steps")
    with pytest.raises(onnx_export.UserError, match="SliceChannel 'steps'.* 101 outputs"):
        export_checked(mx.sym.relu(steps[100], name="act"), {"data": (2, 101)}, tmp_path)


def test_a_converter_failure_names_the_node_and_its_op(tmp_path) -> None:
    """MXNet's converters raise bare exceptions (here its topk: ret_typ "mask"); the
    message says which node."""
    net = mx.sym.topk(mx.sym.var("data"), k=2, ret_typ="mask", name="top")
    with pytest.raises(onnx_export.UserError,
                       match=r"failed at 'top' \(topk\): NotImplementedError"):
        export_checked(net, {"data": (2, 5)}, tmp_path)


def _detections(data, flipped: bool = False):
    """Rows [class id, score, x1, y1, x2, y2] from uniform data: ids 0..2, boxes of
    width and height 0.1..0.6 in [-1, 1.6], crowded enough that many overlap (or, with
    ``flipped``, of width and height -0.4..0.6: some with x2 < x1 or y2 < y1, as a
    detector with random weights gives them)."""
    cols = mx.sym.split(data, num_outputs=6, axis=-1, name="cols")
    ids = mx.sym.floor(mx.sym.abs(cols[0]) * 2.999, name="ids")
    score = mx.sym.abs(cols[1], name="score")
    size = [(cols[k] if flipped else mx.sym.abs(cols[k])) * 0.5 + 0.1 for k in (4, 5)]
    return mx.sym.concat(ids, score, cols[2], cols[3], cols[2] + size[0], cols[3] + size[1],
                         dim=-1, name="rows")


@pytest.mark.parametrize("attrs, flipped", [
    ({"overlap_thresh": 0.3, "valid_thresh": 0.2, "topk": 30, "id_index": 0,
      "force_suppress": False}, False),                       # GluonCV SSD's, per class
    ({"overlap_thresh": 0.45, "valid_thresh": 0.01, "topk": -1, "id_index": 0,
      "force_suppress": True}, False),
    ({"overlap_thresh": 0.1, "topk": 10}, False),               # no classes
    ({"overlap_thresh": 0.3, "id_index": 0, "background_id": 1}, False),
    ({"overlap_thresh": 0.2, "id_index": 0}, True),
    ({"overlap_thresh": 0.2, "in_format": "center", "out_format": "center"}, True),
])
def test_box_nms_exports_as_mxnet_computes_it(tmp_path, attrs, flipped) -> None:
    """GluonCV's SSD exports (DJL) differed at box_nms: MXNet's converter suppresses
    across classes (it says so in a warning), keeps up to topk boxes after NMS instead of
    taking the topk best before it, and refuses a background_id; a box with x2 < x1 has
    no area for MXNet (it overlaps nothing), onnxruntime swaps its corners."""
    net = mx.sym.contrib.box_nms(_detections(mx.sym.var("data"), flipped), coord_start=2,
                                 score_index=1, name="nms", **attrs)
    agrees_with_mxnet(net, {"data": (2, 80, 6)}, tmp_path, "")


def test_a_legacy_file_keeps_its_attributes_through_the_fixes(tmp_path) -> None:
    """A file of MXNet's older format names a node's attributes ``param``; the flatten
    fix reads and writes them there (a review feared it would lose ``num_hidden``: it
    did not, this holds it)."""
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    graph = json.loads(net.tojson())
    for node in graph["nodes"]:
        if node["op"] == "FullyConnected":
            node["param"] = {k: v for k, v in node.pop("attrs").items() if k != "flatten"}
    text = json.dumps(graph)
    report = onnx_export.export(text, {"data": (2, 2, 2)}, str(tmp_path / "l.onnx"),
                                GraphDocument.from_json(text).operators(), check=True)
    assert report.check is not None and report.check.agree, report.lines()
    assert report.check.outputs[0].shape == (2, 3)
