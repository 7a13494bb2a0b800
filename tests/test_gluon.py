"""Planning a Gluon HybridBlock (issue 28): the block's graph planned in memory and
handed back as a Module that trains with the plan and a SymbolBlock over the block's own
parameters."""
from __future__ import annotations

import numpy as np
import pytest

import mxexplorer

mx = pytest.importorskip("mxnet")

SHAPE = (4, 3, 64, 64)


@pytest.fixture(scope="module")
def planned():
    from mxnet.gluon.model_zoo import vision

    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(-1, 1, SHAPE)
    y = net(x)
    plan = mxexplorer.plan_block(
        net, data=SHAPE, search="fast",
        loss=lambda out: mx.sym.SoftmaxOutput(out, name="softmax"))
    return net, x, y, plan


def test_the_block_is_planned_with_mxnets_figures(planned) -> None:
    _, _, _, plan = planned
    report = plan.report
    assert report.planned_mb < report.baseline_mb
    sym = plan.symbol()
    assert sym.list_outputs() == ["softmax_output"]
    assert "softmax_label" in sym.list_arguments()
    assert any(sym.get_internals()[k].attr("force_mirroring") == "True"
               for k in range(len(sym.get_internals().list_outputs())))


def test_the_module_runs_the_blocks_values_and_trains(planned) -> None:
    net, x, y, plan = planned
    mod = plan.module()
    batch = mx.io.DataBatch([x], [mx.nd.array([1, 2, 3, 4])])
    mod.forward(batch, is_train=False)
    expected = mx.nd.softmax(y).asnumpy()
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), expected, rtol=1e-4,
                               atol=1e-5)
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    before = mod.get_params()[0]
    name = next(n for n in before if n.endswith("dense0_weight"))
    first = before[name].asnumpy().copy()
    for _ in range(2):
        mod.forward_backward(batch)
        mod.update()
    assert np.abs(mod.get_params()[0][name].asnumpy() - first).max() > 0


def test_the_symbol_block_shares_the_blocks_parameters(planned) -> None:
    net, x, y, plan = planned
    block = plan.symbol_block()
    np.testing.assert_allclose(block(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    shared = next(iter(net.collect_params().values()))
    assert block.collect_params()[shared.name] is shared


def test_a_plain_block_is_refused_in_one_line() -> None:
    class Plain(mx.gluon.Block):
        def forward(self, x):
            return x

    with pytest.raises(mxexplorer.UserError, match="HybridBlock"):
        mxexplorer.plan_block(Plain(), data=(1, 2))
