"""The benchmark against real MXNet binds: graphs whose inputs cannot have a gradient,
MXNet's own reason when it refuses, and the timing of two graphs round by round."""
from __future__ import annotations

import mxnet as mx
import pytest

from mxexplorer.core.planning import benchmark
from mxexplorer.core.runtime.errors import UserError


def _language_model() -> str:
    """Token ids through an Embedding into a softmax over the vocabulary: MXNet refuses
    a gradient for the Embedding's data ("Embedding layer doesn't support calculate
    data gradient")."""
    data, label = mx.sym.var("data"), mx.sym.var("softmax_label")
    embed = mx.sym.Embedding(data, input_dim=50, output_dim=16, name="embed")
    fc = mx.sym.FullyConnected(mx.sym.flatten(embed), num_hidden=50, name="fc")
    return mx.sym.SoftmaxOutput(fc, label, name="softmax").tojson()


def test_a_model_whose_input_feeds_an_embedding_is_timed() -> None:
    """Inputs get no gradient (grad_req null), weights do: the Embedding graph trains."""
    result = benchmark.run(_language_model(), {"data": (4, 8)}, warmup=1, repeats=2)
    assert result.train.median_ms > 0 and result.infer.median_ms > 0
    assert result.planned_mb is not None


def test_inputs_get_no_gradient_and_weights_do() -> None:
    reqs = benchmark.grad_reqs(_language_model(), {"data": (4, 8)})
    assert reqs == {"data": "null", "embed_weight": "write", "fc_weight": "write",
                    "fc_bias": "write", "softmax_label": "null"}


def test_a_graph_mxnet_refuses_is_refused_in_mxnets_telling_line() -> None:
    bad = mx.sym.FullyConnected(mx.sym.var("data"), mx.sym.var("w", shape=(3, 5)),
                                num_hidden=4, no_bias=True, name="fc").tojson()
    with pytest.raises(UserError) as info:
        benchmark.run(bad, {"data": (2, 5)}, warmup=0, repeats=1)
    text = str(info.value)
    assert "Traceback" not in text and "\n" not in text
    assert "MXNet cannot bind the graph" in text and "fc" in text, text


def _mlp_and_plan() -> tuple[str, str]:
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import memplan
    from tests.conftest import EXAMPLES

    snap = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json")).snapshot()
    result = memplan.plan(snap, {"data": (8, 784)}, stages="auto", threshold_mb=0)
    return memplan.retagged_json(snap, None), memplan.planned_json(snap, result)


def test_the_graphs_run_in_alternating_rounds_after_an_estimate() -> None:
    original, planned = _mlp_and_plan()
    estimates, steps = [], []
    out = benchmark.compare(original, planned, {"data": (8, 784)}, warmup=1, rounds=4,
                            on_estimate=estimates.append,
                            progress=lambda d, t, m: steps.append((d, t, m)))
    # each round trains both graphs, the first of a round alternating: A B, B A, ...
    assert out.order == ("original", "planned", "planned", "original") * 2
    assert len(out.pairs) == 4 and all(a > 0 and b > 0 for a, b in out.pairs)
    assert [r.train.runs for r in out.results] == [4, 4]
    # the pairs are the runs the results summarise
    for k, r in enumerate(out.results):
        assert (r.train.min_ms, r.train.max_ms) == (min(p[k] for p in out.pairs),
                                                    max(p[k] for p in out.pairs))
    # the estimate came before any timed round, and the progress says the time left
    assert len(estimates) == 1 and estimates[0].rounds == 4 and estimates[0].graphs == 2
    timed = [s for s in steps if s[1] == 4]
    assert timed[0][0] == 0 and timed[-1][:2] == (4, 4)
    assert timed[-1][2].startswith("run 4 of 4, about 0 s left")
    assert out.stats is not None and out.ratio == out.stats.ratio
    low, high = out.ratio_interval
    assert low <= out.ratio <= high
    assert out.verdict.startswith(("No measurable difference", "Planned is"))
    data = out.to_dict()
    assert data["ratio"] == out.ratio and data["ratio_interval"] == [low, high]
    assert data["order"][:2] == ["original", "planned"] and len(data["pairs"]) == 4
    assert data["estimate"]["rounds"] == 4 and data["complete"] is True


def test_the_budget_sets_the_number_of_runs_within_bounds() -> None:
    original, planned = _mlp_and_plan()
    out = benchmark.compare(original, planned, {"data": (8, 784)}, budget_s=0.001)
    assert out.estimate is not None and out.estimate.over_budget
    assert len(out.pairs) == benchmark.MIN_ROUNDS            # never fewer
    assert out.estimate.line().startswith("about ")
    assert f"{benchmark.MIN_ROUNDS} runs of each graph (over the 0 s budget" \
        in out.estimate.line()
    # asked to stop there (the window asks the user), it does, with the estimate
    out = benchmark.compare(original, planned, {"data": (8, 784)}, budget_s=0.001,
                            stop_over_budget=True)
    assert not out.complete and out.pairs == () and out.verdict == ""
    assert out.estimate is not None and out.estimate.over_budget


def test_a_smaller_batch_is_offered_from_the_time_of_a_round() -> None:
    # ResNet-50 at batch 32 on this CPU: a round (both graphs, training and inference)
    # about 39 s; the budget 60 s, 2 s to load and bind
    assert benchmark._smaller_batch(32, 60.0, 1, 39.0) == 4
    assert benchmark._smaller_batch(32, 60.0, 1, 12.0) == 16
    assert benchmark._smaller_batch(32, 60.0, 1, 8.0) is None      # it fits
    assert benchmark._smaller_batch(1, 60.0, 1, 39.0) is None     # nothing smaller
    assert benchmark._smaller_batch(32, 60.0, 1, 390.0) == 1     # none fits: the shortest


def test_in_a_child_the_embedding_model_is_compared_and_the_estimate_comes_back() -> None:
    from mxexplorer.core.planning import jobs

    text = _language_model()
    estimates = []
    out = jobs.bench(text, None, {"data": (4, 8)}, rounds=2, on_estimate=estimates.append)
    assert [r.label for r in out.results] == ["original"] and out.results[0].train.runs == 2
    assert out.order == ("original", "original") and out.pairs == () and out.verdict == ""
    assert [e.rounds for e in estimates] == [2]


def test_a_slow_start_up_does_not_put_a_quick_graph_over_its_budget() -> None:
    """On a busy machine loading and binding took 12 s: a graph of 0.01 s rounds was
    said to run past a 5 s budget, and the window asked for a smaller batch that could
    not help.  The budget is the timed rounds'."""
    from mxexplorer.core.planning.benchresults import Estimate

    quick = Estimate(6, 0.01, 0.06, 12.0, 5.0, 2, 8)
    assert not quick.over_budget
    assert Estimate(6, 8.0, 48.0, 1.0, 5.0, 2, 8).over_budget
