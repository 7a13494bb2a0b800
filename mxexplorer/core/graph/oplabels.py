"""How an op is shown: its coarse family (colours, grouping) and the short text of its
key parameters in a graph's labels.  Reads the op table through :mod:`opinfo`."""
from __future__ import annotations

from typing import Mapping

from mxexplorer.core.graph.opinfo import canonical_op, flag, int_attr, tuple_attr


def op_family(op: str) -> str:
    """A coarse family used for colours and grouping."""
    canon = canonical_op(op)
    low = canon.lower()
    if canon == "null":
        return "variable"
    if "conv" in low:
        return "convolution"
    if "fullyconnected" in low or canon in ("dot", "batch_dot", "_linalg_gemm2"):
        return "dense"
    if "norm" in low:
        return "normalization"
    if "pool" in low:
        return "pooling"
    if canon in ("Activation", "LeakyReLU", "relu", "sigmoid", "tanh", "softrelu",
                 "softsign", "_contrib_gelu", "hard_sigmoid", "clip"):
        return "activation"
    if "softmax" in low or canon.endswith("Output") or canon in ("MakeLoss", "CTCLoss"):
        return "output"
    if canon in ("Concat", "SliceChannel", "_split_v2", "stack", "slice", "slice_axis",
                 "slice_like", "Crop"):
        return "concat"
    if canon in ("Reshape", "Flatten", "transpose", "expand_dims", "SwapAxis", "squeeze",
                 "reshape_like", "Cast", "_copy", "BlockGrad", "tile", "repeat"):
        return "shape"
    if canon.startswith(("elemwise_", "broadcast_", "_plus", "_minus", "_mul", "_div",
                         "_rminus", "_rdiv", "_power", "_maximum", "_minimum", "add_n")):
        return "elementwise"
    if canon in ("RNN", "Embedding"):
        return "recurrent"
    if canon == "Dropout":
        return "dropout"
    return "other"


def describe_params(op: str, attrs: Mapping[str, str]) -> str:
    """Short label text with an op's key parameters: ``7×7/2, 64`` for a
    convolution (kernel/stride, filters), hidden units, pool type, activation..."""
    canon = canonical_op(op)

    def dims(key: str) -> str | None:
        t = tuple_attr(attrs, key)
        if not t:
            return None
        return "×".join("?" if d is None else str(d) for d in t)

    def window() -> str:
        k = dims("kernel") or ""
        s = tuple_attr(attrs, "stride")
        if s and any(d != 1 for d in s):
            k += "/" + ("×".join(str(d) for d in s) if len(set(s)) > 1 else str(s[0]))
        d = tuple_attr(attrs, "dilate")
        if d and any(x != 1 for x in d):
            k += f" d{max(x or 1 for x in d)}"
        return k

    parts: list[str] = []
    if canon in ("Convolution", "Deconvolution", "Convolution_v1"):
        parts.append(window())
        if "num_filter" in attrs:
            parts.append(str(int_attr(attrs, "num_filter")))
        if int_attr(attrs, "num_group", 1) > 1:
            parts.append(f"groups {int_attr(attrs, 'num_group')}")
    elif canon == "FullyConnected":
        parts.append(str(attrs.get("num_hidden", "?")))
    elif canon == "Pooling":
        kind = str(attrs.get("pool_type", "max"))
        parts.append(f"global {kind}" if flag(attrs, "global_pool") else f"{kind} {window()}")
    elif canon in ("Activation", "LeakyReLU"):
        parts.append(str(attrs.get("act_type", "leaky" if canon == "LeakyReLU" else "")))
    elif canon == "Dropout":
        parts.append(f"p={attrs.get('p', '0.5')}")
    elif canon in ("Concat", "concat", "SliceChannel", "_split_v2"):
        if "dim" in attrs or "axis" in attrs:
            parts.append(f"axis {attrs.get('dim', attrs.get('axis'))}")
    elif canon == "Reshape":
        if "shape" in attrs:
            parts.append(str(attrs["shape"]))
    elif canon == "RNN":
        parts.append(f"{attrs.get('mode', '')} {attrs.get('state_size', '')}")
        if int_attr(attrs, "num_layers", 1) > 1:
            parts.append(f"{int_attr(attrs, 'num_layers')} layers")
    elif canon == "Embedding":
        parts.append(f"{attrs.get('input_dim', '?')}→{attrs.get('output_dim', '?')}")
    return ", ".join(p.strip() for p in parts if p and p.strip())
