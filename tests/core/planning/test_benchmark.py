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

