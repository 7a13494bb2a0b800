"""The memory planner and the benchmark against real MXNet binds."""
from __future__ import annotations

import json
import threading

import mxnet as mx
import pytest

from mxexplorer.core.analysis.shapes import infer_document
from mxexplorer.core.graph import edits, tags
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import benchmark, memplan
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken
from tests import memonger_reference
from tests.conftest import EXAMPLES

R18 = EXAMPLES / "resnet18_v1-symbol.json"
MLP = EXAMPLES / "mlp-symbol.json"
R18_SHAPES = {"data": (8, 3, 224, 224)}


def _reference_tags(sym, threshold_mb: int, shapes) -> dict[str, str]:
    """The published memonger tagging (tests/memonger_reference.py), by node name."""
    tagged, _, _ = memonger_reference.tag(sym, threshold_mb, **shapes)
    nodes = json.loads(tagged.tojson())["nodes"]
    return {n["name"]: n.get("attrs", {}).get("__force_mirroring__") for n in nodes
            if n.get("attrs", {}).get("__force_mirroring__") is not None}


def _tagged_r18(tmp_path, groups: bool) -> GraphDocument:
    """R18 with every cut vertex a stage; with ``groups``, stages named by stage block."""
    doc = GraphDocument.open(str(R18))
    for i in memplan.cut_vertices(doc):
        name = doc.nodes[i].name
        value = "True"
        if groups:
            value = next((s for s in ("stage1", "stage2", "stage3", "stage4") if s in name),
                         "stem")
        doc.nodes[i].attrs[tags.MIRROR_STAGE] = value
    path = tmp_path / ("groups" if groups else "cut") / "r18-symbol.json"
    path.parent.mkdir()
    path.write_text(doc.to_json())
    return GraphDocument.open(str(path))


@pytest.mark.parametrize("groups", [False, True])
@pytest.mark.parametrize("threshold", [0, 20, 60, 150, 400])
def test_threshold_tagging_is_exactly_the_originals(tmp_path, groups, threshold) -> None:
    doc = _tagged_r18(tmp_path, groups)
    sym = mx.sym.load(doc.path)
    shapes = infer_document(doc, R18_SHAPES)
    ours, _ = memplan.original_tags(doc, shapes.by_entry, memplan.file_stages(doc), threshold)
    expected = _reference_tags(sym, threshold, R18_SHAPES)
    assert {doc.nodes[i].name: v for i, v in ours.items()} == expected
    assert "False" in expected.values() or threshold > 100


def test_cut_vertices_of_a_resnet_are_the_chain_and_block_outputs() -> None:
    doc = GraphDocument.open(str(R18))
    cuts = {doc.nodes[i].name for i in memplan.cut_vertices(doc)}
    assert "resnetv10_conv0_fwd" in cuts and "resnetv10_pool0_fwd" in cuts
    assert "resnetv10_stage1_activation0" in cuts          # a block's output
    assert "resnetv10_stage1_conv0_fwd" not in cuts        # inside a block
    assert "resnetv10_stage2_conv2_fwd" not in cuts        # the downsample branch
    assert "resnetv10_dense0_fwd" in cuts
    # a label read only by the loss is not an input path: the MLP's layers are cuts
    mlp = GraphDocument.open(str(MLP))
    ops = [i for i in mlp.order() if not mlp.nodes[i].is_variable]
    assert memplan.cut_vertices(mlp) == ops


def test_plan_beats_the_original_search_and_never_the_baseline(tmp_path) -> None:
    """The search against memonger's, both costed by the memory model: the search's
    logic, on count budgets alone (no MXNet bind; MXNet's own figures are checked by
    the tests below)."""
    snap = GraphDocument.open(str(R18)).snapshot()
    original = memplan.plan(snap, R18_SHAPES, stages="auto", mode="original",
                            cost=memplan.model_cost)
    ours = memplan.plan(snap, R18_SHAPES, stages="auto", cost=memplan.model_cost)
    assert ours.planned_mb <= original.planned_mb < ours.baseline_mb
    assert ours.best is not None and 0 < ours.best.recompute_share <= 1.0
    kinds = {p.kind for p in ours.probes}
    assert {"baseline", "original", "solver", "local", "trim"} <= kinds
    assert all(p.ok for p in ours.probes)
    # a tiny MLP gains nothing from mirroring: the answer is "no plan", never a worse one
    mlp = GraphDocument.open(str(MLP)).snapshot()
    for cost in (memplan.model_cost, None):
        result = memplan.plan(mlp, {"data": (4, 784)}, stages="auto", mode="fast", cost=cost)
        assert result.planned_mb <= result.baseline_mb
        if result.best is None:
            assert result.planned_mb == result.baseline_mb


def test_planned_json_reloads_with_its_tags_and_costs_what_was_promised(tmp_path) -> None:
    snap = GraphDocument.open(str(R18)).snapshot()
    result = memplan.plan(snap, R18_SHAPES, stages="auto", mode="fast")
    text = memplan.planned_json(snap, result)
    sym = mx.sym.load_json(text)
    attrs = sym.attr_dict()
    assert result.best is not None
    kept = {json.loads(snap.json)["nodes"][i]["name"] for i in result.best.kept}
    assert kept and all(attrs[name]["__force_mirroring__"] == "False" for name in kept)
    assert sum(1 for a in attrs.values() if a.get("__force_mirroring__") == "True") > 20
    exe = sym.simple_bind(mx.cpu(), grad_req="write", **R18_SHAPES)
    assert memplan.parse_total_mb(exe.debug_str()) == result.planned_mb


def test_no_stages_in_the_file_is_refused_only_when_asked_for() -> None:
    snap = GraphDocument.open(str(R18)).snapshot()
    with pytest.raises(memplan.NoStagesError, match="no node carries mirror_stage"):
        memplan.plan(snap, R18_SHAPES, stages="file", cost=memplan.model_cost)
    # by default: the file's stages when it has any, else automatic ones
    result = memplan.plan(snap, R18_SHAPES, mode="original", cost=memplan.model_cost)
    assert result.stage_source == "auto"


def test_a_missing_gpu_is_one_clear_line() -> None:
    snap = GraphDocument.open(str(MLP)).snapshot()
    with pytest.raises(UserError, match="gpu:0 is not available"):
        memplan.plan(snap, {"data": (4, 784)}, ctx="gpu:0", stages="auto")


def test_cancel_stops_the_search() -> None:
    snap = GraphDocument.open(str(R18)).snapshot()
    token = CancelToken()
    seen = []

    def on_probe(probe) -> None:
        seen.append(probe)
        if len(seen) == 3:
            token.cancel()

    with pytest.raises(Cancelled):
        memplan.plan(snap, R18_SHAPES, stages="auto", token=token, on_probe=on_probe)
    assert len(seen) == 3


def test_largest_batch_within_a_budget() -> None:
    snap = GraphDocument.open(str(R18)).snapshot()
    fit = memplan.largest_batch(snap, {"data": (1, 3, 224, 224)}, 400.0, stages="auto")
    assert fit.unplanned_batch >= 1 and fit.planned_batch >= fit.unplanned_batch
    assert fit.unplanned_mb is not None and fit.unplanned_mb <= 400
    over = [c for w, b, c in fit.probes if w == "unplanned" and b == fit.unplanned_batch + 1]
    assert over and (over[0] is None or over[0] > 400)


def test_benchmark_times_original_and_planned(tmp_path) -> None:
    doc = GraphDocument.open(str(MLP))
    snap = doc.snapshot()
    shapes = {"data": (16, 784), "softmax_label": (16,)}
    result = memplan.plan(snap, {"data": (16, 784)}, stages="auto", threshold_mb=0)
    planned = memplan.planned_json(snap, result)
    seen = []
    out = benchmark.compare(doc.to_json(), planned, shapes, warmup=1, rounds=3,
                            progress=lambda d, t, m: seen.append((d, t)))
    assert [r.label for r in out.results] == ["original", "planned"]
    for r in out.results:
        assert r.train.runs == 3 and r.train.min_ms <= r.train.median_ms <= r.train.max_ms
        assert r.train_samples_per_s > 0 and r.infer.median_ms > 0
        assert r.planned_mb is not None and r.gpu_used_mb is None
    assert seen[-1][0] == seen[-1][1] == 3
    token = CancelToken()
    threading.Timer(0.0, token.cancel).start()
    with pytest.raises(Cancelled):
        benchmark.run(doc.to_json(), shapes, token=token, warmup=50, repeats=50)


def test_any_point_of_a_search_is_a_plan_that_applies_and_exports_exactly() -> None:
    doc = GraphDocument.open(str(R18))
    result = memplan.plan(doc.snapshot(), R18_SHAPES, stages="auto", mode="original")
    points = [p for p in result.probes if p.ok and p.kind != "baseline"]
    point = max(points, key=lambda p: p.cost_mb)          # not the best one
    plan = result.plan_for(doc, point)
    assert plan.kept == point.kept and plan.cost_mb == point.cost_mb
    assert 0 < plan.recompute_macs <= plan.forward_macs == result.forward_macs
    with pytest.raises(UserError):
        result.plan_for(doc, next(p for p in result.probes if p.kind == "baseline"))
    key = doc.structure_key()
    assert not memplan.is_applied(doc, plan)
    edits.set_many_attrs(memplan.plan_edits(doc, plan, result)).apply(doc)
    assert memplan.is_applied(doc, plan) and not memplan.is_applied(doc, result.best)
    assert doc.structure_key() == key               # tags only: still the same graph
    sym = mx.sym.load_json(json.dumps(memplan.planned_dict(doc, plan, result)))
    exe = sym.simple_bind(mx.cpu(), grad_req="write", **R18_SHAPES)
    assert memplan.parse_total_mb(exe.debug_str()) == point.cost_mb
    untagged = memplan.planned_dict(doc, None, result)
    assert not any("__force_mirroring__" in n.get("attrs", {}) for n in untagged["nodes"])
    conv = next(i for i, n in enumerate(doc.nodes) if n.op == "Convolution")
    edits.set_attr((conv,), "num_filter", "32").apply(doc)
    assert doc.structure_key() != key


def test_benchmark_refuses_a_graph_against_itself() -> None:
    text = GraphDocument.open(str(MLP)).to_json()
    with pytest.raises(UserError, match="nothing to compare"):
        benchmark.compare(text, json.dumps(json.loads(text)), {"data": (4, 784)})


def _mobilenet_v2() -> GraphDocument:
    """Gluon's MobileNetV2 (0.25): depthwise convolutions, ReLU6, no residual on every
    block."""
    from mxnet.gluon.model_zoo import vision

    net = vision.mobilenet_v2_0_25(classes=10)
    return GraphDocument.from_json(net(mx.sym.var("data")).tojson())


def _memonger_resnet() -> GraphDocument:
    """memonger's own example network (LeakyReLU, bottlenecks, its mirror_stage tags)."""
    from tests.test_memonger import EXAMPLE

    namespace: dict = {}
    exec(compile(EXAMPLE.split("layers = [2, 2, 2, 2]")[0].replace(
        "from mxexplorer import memonger", ""), "example", "exec"), namespace)
    return GraphDocument.from_json(namespace["get_symbol"]([1, 1, 1, 1], 8).tojson())


@pytest.mark.parametrize("make", [lambda: GraphDocument.open(str(R18)), _mobilenet_v2,
                                  _memonger_resnet],
                         ids=["resnet18_v1", "mobilenetv2_0.25", "memonger_resnet"])
def test_a_plan_changes_no_number_that_training_computes(make) -> None:
    """One training step with and without the plan, from the same weights and inputs:
    outputs, every gradient and the BatchNorm statistics come out bit for bit the same
    (a plan only recomputes; issue 27 keeps this guarantee), on three networks."""
    import numpy as np

    doc = make()
    size = 224 if "global_pool_output" in doc.internal_names() else 64
    shapes = {"data": (2, 3, size, size)}
    snap = doc.snapshot()
    result = memplan.plan(snap, shapes, stages="auto", mode="fast")
    planned = memplan.planned_json(snap, result)
    assert result.planned_mb < result.baseline_mb

    def step(text: str) -> tuple[list, dict, dict]:
        sym = mx.sym.load_json(text)
        exe = sym.simple_bind(mx.cpu(), grad_req="write", **shapes)
        rng = np.random.default_rng(5)
        for name, arr in sorted(exe.arg_dict.items()) + sorted(exe.aux_dict.items()):
            value = rng.uniform(0.5 if name.endswith("_var") else -1, 1, arr.shape)
            arr[:] = (0 * value if name.endswith("_label") else value).astype("float32")
        outs = exe.forward(is_train=True)
        exe.backward([mx.nd.ones(o.shape) for o in outs])
        mx.nd.waitall()
        return ([o.asnumpy() for o in outs],
                {k: g.asnumpy() for k, g in exe.grad_dict.items() if g is not None},
                {k: a.asnumpy() for k, a in exe.aux_dict.items()})

    (out_a, grad_a, aux_a), (out_b, grad_b, aux_b) = step(snap.json), step(planned)
    assert all(np.array_equal(a, b) for a, b in zip(out_a, out_b))
    assert grad_a.keys() == grad_b.keys() and len(grad_a) > 20
    assert [k for k in grad_a if not np.array_equal(grad_a[k], grad_b[k])] == []
    assert [k for k in aux_a if not np.array_equal(aux_a[k], aux_b[k])] == []


def test_a_probe_mxnet_refuses_records_mxnets_telling_line() -> None:
    """Issue 27: a failed probe's reason was often only "Traceback (most recent call
    last):", the first line of MXNet's text.  Two real MXNet failures: a bind MXNet
    refuses inside a search's probe (a tag value it cannot read), and an operator's
    check, whose text starts with the traceback header."""
    from mxexplorer.core.analysis import stats
    from mxexplorer.core.runtime.mxnet_env import failure
    from mxexplorer.core.runtime.progress import no_progress

    doc = GraphDocument.open(str(MLP))
    shapes = {"data": (4, 784)}
    analysis = infer_document(doc, shapes)
    stages = {i: "True" for i in memplan.cut_vertices(doc)}
    search = memplan.Search(doc, analysis.by_entry, stages, "auto",
                            memplan.mxnet_cost(doc, analysis.by_entry, shapes, "cpu",
                                               "float32"),
                            stats.compute(doc, analysis), no_progress, CancelToken(), None)
    node = next(iter(stages))
    assert search.cost_of((), "local", None, {node: "maybe"}) is None
    probe = search.probes[-1]
    assert not probe.ok
    assert probe.reason == ("Invalid Parameter format for __force_mirroring__ expect "
                            "boolean but value='maybe'"), probe.reason
    # a good probe after it still costs (the failure is data, the search goes on)
    assert search.cost_of((node,), "local", None) is not None
    with pytest.raises(mx.MXNetError) as info:
        (mx.nd.ones((2, 3)) + mx.nd.ones((3, 2))).wait_to_read()
    assert str(info.value).startswith("Traceback (most recent call last):")
    assert failure(info.value) == ("Check failed: l == 1 || r == 1: operands could not be "
                                   "broadcast together with shapes [2,3] [3,2]")
