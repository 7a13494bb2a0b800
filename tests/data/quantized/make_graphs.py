"""Writes the int8 and fused (MKL-DNN) graphs the quantized family's tests infer, with
MXNet 1.9.1's own quantization flow: ``get_backend_symbol('MKLDNN_QUANTIZE')``, then
``mx.contrib.quantization.quantize_model`` calibrated on a few random batches, then the
backend again (or ``'MKLDNN'`` alone for the fused float graphs).  ``index.json`` gives
each file's input shapes.  Run from the repository root:
``.venv/bin/python tests/data/quantized/make_graphs.py``.
"""
from __future__ import annotations

import json
import os
import warnings
from typing import Any

import mxnet as mx
import numpy as np
from mxnet.contrib import quantization as q

HERE = os.path.dirname(os.path.abspath(__file__))
warnings.simplefilter("ignore")
mx.random.seed(0)
np.random.seed(0)


def quantize(sym: Any, shapes: dict[str, tuple[int, ...]], calib_mode: str = "naive",
             dtype: str = "auto", mode: str = "smart", backend: str | None = "MKLDNN_QUANTIZE",
             granularity: str = "tensor-wise", data_names: list[str] | None = None,
             int_data: dict[str, int] | None = None) -> Any:
    names = data_names or list(shapes)
    ex = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
    args = {k: mx.nd.random.uniform(-1, 1, v.shape) for k, v in ex.arg_dict.items()
            if k not in names}
    aux = {k: mx.nd.random.uniform(0.5, 1, v.shape) for k, v in ex.aux_dict.items()}
    fused = sym.get_backend_symbol(backend) if backend else sym
    data = {}
    for k in names:
        v = shapes[k]
        if int_data and k in int_data:
            data[k] = np.random.randint(0, int_data[k], (4,) + v[1:]).astype("float32")
        else:
            data[k] = np.random.uniform(-1, 1, (4,) + v[1:]).astype("float32")
    it = mx.io.NDArrayIter(data=data, batch_size=shapes[names[0]][0])
    qsym, _, _ = q.quantize_model(
        fused, args, aux, ctx=mx.cpu(), calib_mode=calib_mode, data_names=tuple(names),
        calib_data=it if calib_mode != "none" else None, num_calib_examples=4,
        quantized_dtype=dtype, excluded_sym_names=[], excluded_op_names=[],
        quantize_mode=mode, quantize_granularity=granularity, logger=None)
    return qsym.get_backend_symbol(backend) if backend else qsym


def conv_net() -> Any:
    d = mx.sym.var("data")
    c1 = mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv1")
    b1 = mx.sym.BatchNorm(c1, name="bn1")
    r1 = mx.sym.Activation(b1, act_type="relu", name="relu1")
    c2 = mx.sym.Convolution(r1, kernel=(3, 3), num_filter=8, pad=(1, 1), name="conv2",
                            no_bias=True)
    b2 = mx.sym.BatchNorm(c2, name="bn2")
    r2 = mx.sym.Activation(b2 + r1, act_type="relu", name="relu2")
    p = mx.sym.Pooling(r2, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    f = mx.sym.Flatten(p, name="flat")
    return mx.sym.FullyConnected(f, num_hidden=10, name="fc")


def mixed_net() -> Any:
    d = mx.sym.var("data")
    a = mx.sym.Convolution(d, kernel=(3, 3), num_filter=8, pad=(1, 1), name="c1")
    b = mx.sym.Convolution(d, kernel=(1, 1), num_filter=4, name="c2")
    cat = mx.sym.concat(a, b, dim=1, name="cat")
    r = mx.sym.Activation(cat, act_type="relu", name="r")
    bn = mx.sym.BatchNorm(r, name="bn")
    e = mx.sym.elemwise_add(bn, mx.sym.Activation(cat, act_type="relu", name="r2"), name="add")
    m = mx.sym.elemwise_mul(e, e, name="mul")
    p = mx.sym.Pooling(m, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="p")
    f = mx.sym.flatten(p, name="fl")
    fc = mx.sym.FullyConnected(f, num_hidden=10, name="fc")
    fr = mx.sym.Activation(fc, act_type="relu", name="fr")
    return mx.sym.FullyConnected(fr, num_hidden=3, name="fc2")


def act_net() -> Any:
    """Convolutions fused with each activation MKL-DNN takes (uint8 or int8 outputs)."""
    d = mx.sym.var("data")
    outs = []
    acts = [("leaky", lambda x: mx.sym.LeakyReLU(x, act_type="leaky", slope=0.1, name="lk")),
            ("leaky0", lambda x: mx.sym.LeakyReLU(x, act_type="leaky", slope=0.0, name="lk0")),
            ("clip", lambda x: mx.sym.clip(x, 0, 6, name="clp")),
            ("sig", lambda x: mx.sym.Activation(x, act_type="sigmoid", name="sg")),
            ("tanh", lambda x: mx.sym.Activation(x, act_type="tanh", name="th")),
            ("elu", lambda x: mx.sym.LeakyReLU(x, act_type="elu", name="elu"))]
    for tag, act in acts:
        c = mx.sym.Convolution(d, kernel=(3, 3), num_filter=4, name=f"conv_{tag}")
        outs.append(mx.sym.Flatten(act(c), name=f"fl_{tag}"))
    f = mx.sym.concat(*outs, dim=1, name="all")
    h = mx.sym.FullyConnected(f, num_hidden=6, name="fc_a")
    h = mx.sym.LeakyReLU(h, act_type="leaky", slope=0.2, name="fc_lk")
    h = mx.sym.FullyConnected(h, num_hidden=5, name="fc_b", no_bias=True)
    h = mx.sym.clip(h, 0, 1, name="fc_clip")
    return mx.sym.FullyConnected(h, num_hidden=3, name="fc_c")


def conv3d_net() -> Any:
    d = mx.sym.var("data")
    c = mx.sym.Convolution(d, kernel=(3, 3, 3), num_filter=4, pad=(1, 1, 1), name="c3d")
    r = mx.sym.Activation(c, act_type="relu", name="r3d")
    p = mx.sym.Pooling(r, kernel=(2, 2, 2), stride=(2, 2, 2), pool_type="max", name="p3d")
    return mx.sym.FullyConnected(p, num_hidden=3, name="fc3d")


def embedding_net() -> Any:
    tok = mx.sym.var("tok")
    e = mx.sym.Embedding(tok, input_dim=20, output_dim=6, name="emb")
    return mx.sym.FullyConnected(e, num_hidden=4, name="fce", flatten=True)


def rnn_net() -> Any:
    x = mx.sym.var("data")
    return mx.sym.RNN(x, mx.sym.var("lstm_parameters"), mx.sym.var("h0"), mx.sym.var("c0"),
                      state_size=4, num_layers=1, mode="lstm", name="lstm", state_outputs=True)


def attention_net() -> Any:
    x = mx.sym.var("data")
    qkv = mx.sym.FullyConnected(x, num_hidden=3 * 2 * 4, flatten=False, name="qkv")
    qk = mx.sym.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2, name="qk")
    att = mx.sym.softmax(qk, axis=-1, name="att")
    va = mx.sym.contrib.interleaved_matmul_selfatt_valatt(qkv, att, heads=2, name="va")
    return mx.sym.FullyConnected(va, num_hidden=5, flatten=False, name="proj")


def main() -> None:
    img = {"data": (2, 3, 8, 8)}
    graphs: dict[str, tuple[Any, dict[str, tuple[int, ...]]]] = {
        "conv_auto": (quantize(conv_net(), img), img),
        "conv_int8": (quantize(conv_net(), img, dtype="int8"), img),
        "conv_uint8": (quantize(conv_net(), img, dtype="uint8"), img),
        "conv_uncalibrated": (quantize(conv_net(), img, calib_mode="none"), img),
        "conv_fused_float": (conv_net().get_backend_symbol("MKLDNN"), img),
        "conv_no_backend": (quantize(conv_net(), img, backend=None), img),
        "mixed_smart": (quantize(mixed_net(), img), img),
        "mixed_full": (quantize(mixed_net(), img, mode="full"), img),
        "mixed_channelwise": (quantize(mixed_net(), img, granularity="channel-wise"), img),
        "acts": (quantize(act_net(), img, mode="full"), img),
        "acts_fused_float": (act_net().get_backend_symbol("MKLDNN"), img),
        "conv3d": (quantize(conv3d_net(), {"data": (2, 3, 4, 6, 6)}),
                   {"data": (2, 3, 4, 6, 6)}),
        "embedding": (quantize(embedding_net(), {"tok": (2, 5)}, mode="full",
                               int_data={"tok": 20}), {"tok": (2, 5)}),
        "attention_fused_float": (attention_net().get_backend_symbol("MKLDNN"),
                                  {"data": (6, 2, 8)}),
        "attention": (quantize(attention_net(), {"data": (6, 2, 8)}, mode="full"),
                      {"data": (6, 2, 8)}),
    }
    rnn_shapes = {"data": (5, 2, 3), "h0": (1, 2, 4), "c0": (1, 2, 4)}
    graphs["lstm"] = (quantize(rnn_net(), rnn_shapes, data_names=["data"], mode="full"),
                      rnn_shapes)
    index = {}
    for name, (sym, shapes) in graphs.items():
        with open(os.path.join(HERE, f"{name}-symbol.json"), "w", encoding="utf-8") as fh:
            fh.write(sym.tojson())
        index[f"{name}-symbol.json"] = {k: list(v) for k, v in shapes.items()}
    with open(os.path.join(HERE, "index.json"), "w", encoding="utf-8") as fh:
        json.dump(index, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
