"""The reference the lane without MXNet checks its export against
(tests/data/onnx_top5.json) is still what MXNet computes."""
from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.onnx_top5 import mxnet_top5
from tests.conftest import REPO

TOP5 = json.loads((REPO / "tests" / "data" / "onnx_top5.json").read_text())


@pytest.mark.parametrize("row", TOP5, ids=[r["prefix"] for r in TOP5])
def test_the_stored_top5_is_mxnets(row) -> None:
    now = mxnet_top5(row["prefix"], row["shape"], *row["range"])
    assert now["top5"] == row["top5"]
    assert np.allclose(now["values"], row["values"], rtol=1e-5, atol=1e-6)
