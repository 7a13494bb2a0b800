"""The Python API on the engine: open, infer, plan, render and diff without MXNet."""
from __future__ import annotations

import mxexplorer
from tests.conftest import EXAMPLES
from tests.nomxnet.conftest import HAS_MXNET


def test_infer_gives_shapes_parameters_and_macs() -> None:
    g = mxexplorer.open(EXAMPLES / "resnet18_v1-symbol.json")
    found = g.infer(data=(2, 3, 224, 224))
    assert found.error is None and found.complete
    assert found.shapes["resnetv10_dense0_fwd_output"] == (2, 1000)
    assert found.params == 11_689_512
    assert found.inferred_by == "engine"


def test_plan_runs_and_says_whose_figures() -> None:
    g = mxexplorer.open(EXAMPLES / "resnet18_v1-symbol.json")
    report = g.plan(data=(16, 3, 224, 224), search="fast")
    assert report.costed_by == ("mxnet" if HAS_MXNET else "model")
    assert report.planned_mb < report.baseline_mb
    assert "costed by" in repr(report)


def test_render_with_shapes_and_diff(tmp_path) -> None:
    g = mxexplorer.open(EXAMPLES / "mlp-symbol.json")
    picture = g.render(tmp_path / "mlp.svg", data=(4, 784))
    assert (tmp_path / "mlp.svg").stat().st_size > 1000 and picture.data
    other = mxexplorer.open(EXAMPLES / "mlp-symbol.json")
    found = mxexplorer.diff(g, other, shapes={"data": (1, 784)})
    assert found.same and not found
