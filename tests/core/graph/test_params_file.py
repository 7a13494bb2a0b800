"""The .params index reader and key renamer agree with mx.nd.load / mx.nd.save."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mxexplorer.core.graph import params_file
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import SymbolFileError
from tests.conftest import EXAMPLES


def test_index_matches_mxnet_for_all_dtypes(tmp_path) -> None:
    arrays = {
        "arg:w": mx.nd.ones((3, 4)),
        "arg:h": mx.nd.ones((2, 5), dtype="float16"),
        "aux:m": mx.nd.zeros((7,), dtype="float64"),
        "arg:i": mx.nd.array([1, 2, 3], dtype="int32"),
        "arg:u": mx.nd.array([[1]], dtype="uint8"),
        "plain": mx.nd.ones((1, 2, 3, 4)),
    }
    path = tmp_path / "x-0001.params"
    mx.nd.save(str(path), arrays)
    index = {(p.kind + ":" if p.kind else "") + p.name: (p.shape, p.dtype)
             for p in params_file.read_params_index(str(path))}
    loaded = mx.nd.load(str(path))
    assert index == {k: (v.shape, np.dtype(v.dtype).name) for k, v in loaded.items()}


def test_sparse_and_list_files(tmp_path) -> None:
    path = tmp_path / "s.params"
    rsp = mx.nd.sparse.row_sparse_array((np.ones((2, 3)), [0, 3]), shape=(5, 3))
    csr = mx.nd.sparse.csr_matrix((np.ones(3), [0, 1, 2], [0, 1, 2, 3]), shape=(3, 4))
    mx.nd.save(str(path), {"arg:r": rsp, "arg:c": csr, "arg:d": mx.nd.ones((2, 2))})
    index = {p.name: p.shape for p in params_file.read_params_index(str(path))}
    assert index == {"r": (5, 3), "c": (3, 4), "d": (2, 2)}
    unnamed = tmp_path / "l.params"
    mx.nd.save(str(unnamed), [mx.nd.ones((2,)), mx.nd.ones((3, 3))])
    assert [p.shape for p in params_file.read_params_index(str(unnamed))] == [(2,), (3, 3)]


def test_rename_keys_keeps_the_arrays(tmp_path) -> None:
    src = EXAMPLES / "mlp-0000.params"
    dst = tmp_path / "renamed-0000.params"
    params_file.rename_keys(str(src), str(dst), lambda n: "net_" + n)
    before = mx.nd.load(str(src))
    after = mx.nd.load(str(dst))
    assert sorted(after) == sorted(k.split(":")[0] + ":net_" + k.split(":")[1] for k in before)
    for key, value in before.items():
        kind, name = key.split(":")
        assert np.array_equal(after[f"{kind}:net_{name}"].asnumpy(), value.asnumpy())


def test_checkpoint_pair_opens_from_either_file() -> None:
    from_symbol = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))
    from_params = GraphDocument.open(str(EXAMPLES / "mlp-0000.params"))
    for doc in (from_symbol, from_params):
        assert doc.path == str(EXAMPLES / "mlp-symbol.json")
        assert doc.params_path == str(EXAMPLES / "mlp-0000.params")
        assert doc.params_epoch == 0
        assert doc.param_shapes()["fc1_weight"] == (64, 784)


def test_newest_epoch_is_chosen(tmp_path) -> None:
    (tmp_path / "net-symbol.json").write_text((EXAMPLES / "mlp-symbol.json").read_text())
    for epoch in (1, 12, 3):
        mx.nd.save(str(tmp_path / f"net-{epoch:04d}.params"), {"arg:fc1_weight": mx.nd.ones((1,))})
    path, epoch = params_file.find_checkpoint(str(tmp_path / "net-symbol.json"))
    assert epoch == 12 and path.endswith("net-0012.params")


def test_params_without_symbol_and_garbage_params(tmp_path) -> None:
    orphan = tmp_path / "lonely-0003.params"
    mx.nd.save(str(orphan), {"arg:w": mx.nd.ones((1,))})
    with pytest.raises(SymbolFileError, match="without its -symbol.json"):
        GraphDocument.open(str(orphan))
    junk = tmp_path / "junk.params"
    junk.write_bytes(b"\x12\x01" + b"\x00" * 14 + b"\xff" * 8)
    with pytest.raises(SymbolFileError, match="not a readable MXNet .params file"):
        params_file.read_params_index(str(junk))


# ------------------------------------------------------------------ issue 24
@settings(max_examples=200, deadline=None)
@given(hnp.arrays(dtype=st.sampled_from(["float32", "float64", "float16", "int64",
                                         "uint8", "int8"]),
                  shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=6)))
def test_statistics_never_raise_on_odd_tensors(values) -> None:
    from mxexplorer.core.analysis import param_stats

    got = param_stats.tensor_stats("t", values)
    finite = int(np.isfinite(values.astype("float64")).sum()) if values.size else 0
    assert sum(got.histogram) == finite and len(got.histogram) == param_stats.BINS


@pytest.mark.parametrize("fill", [1e16, -1e16, 3e38, np.finfo("float64").max,
                                  np.finfo("float64").tiny, 0.0])
def test_statistics_of_constant_and_extreme_tensors(fill) -> None:
    from mxexplorer.core.analysis import param_stats

    values = np.full((5, 7), fill, dtype="float64")
    got = param_stats.tensor_stats("c", values)
    assert got.minimum == got.maximum == fill and sum(got.histogram) == 35
    wide = np.array([-np.finfo("float64").max, 0.0, np.finfo("float64").max])
    assert sum(param_stats.tensor_stats("w", wide).histogram) == 3
