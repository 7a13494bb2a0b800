"""The fused ``RNN`` op (lstm, gru, rnn_relu, rnn_tanh; layers, both directions) as one
ONNX LSTM / GRU / RNN per layer.  Imported by :mod:`sequence`.

MXNet's ``parameters`` is one flat vector: every layer's weights (per layer, per
direction: W_x (G*H, input) then W_h (G*H, H)), then every layer's biases (per layer,
per direction: b_x (G*H) then b_h (G*H)); G gates in MXNet's order (LSTM i, f, g, o;
GRU r, z, n), which ONNX orders i, o, f, c and z, r, h.  MXNet's GRU applies the reset
gate after the recurrent product (``linear_before_reset=1``).  Data, states and output
are TNC, ONNX's layout 0; a layer's output (T, N, D*H) is its forward then backward
halves, ONNX's Y (T, D, N, H) transposed.  Dropout between layers acts in training
only.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]

#: mode -> (ONNX op, gates, MXNet's gate blocks in ONNX's order, activation)
MODES = {"lstm": ("LSTM", 4, [0, 3, 1, 2], None),
         "gru": ("GRU", 3, [1, 0, 2], None),
         "rnn_relu": ("RNN", 1, [0], "Relu"),
         "rnn_tanh": ("RNN", 1, [0], "Tanh")}


def _gates(w: Any, hidden: int, order: list[int]) -> Any:
    """The gate blocks (rows of ``hidden``) of ``w`` in ONNX's order."""
    import numpy as np

    return np.concatenate([w[k * hidden:(k + 1) * hidden] for k in order], axis=0)


def unpack(flat: Any, mode: str, layers: int, dirs: int, inputs: int, hidden: int
           ) -> list[tuple[Any, Any, Any]]:
    """Per layer, ONNX's (W [D, G*H, in], R [D, G*H, H], B [D, 2*G*H]) from MXNet's
    flat parameter vector."""
    import numpy as np

    _, g, order, _ = MODES[mode]
    gh = g * hidden
    flat = np.asarray(flat).reshape(-1)
    at = 0
    weights = []
    for layer in range(layers):
        size = inputs if layer == 0 else hidden * dirs
        per_dir = []
        for _ in range(dirs):
            wx = flat[at:at + gh * size].reshape(gh, size)
            at += gh * size
            wh = flat[at:at + gh * hidden].reshape(gh, hidden)
            at += gh * hidden
            per_dir.append((wx, wh))
        weights.append(per_dir)
    out = []
    for layer in range(layers):
        ws, rs, bs = [], [], []
        for d in range(dirs):
            bx = flat[at:at + gh]
            bh = flat[at + gh:at + 2 * gh]
            at += 2 * gh
            wx, wh = weights[layer][d]
            ws.append(_gates(wx, hidden, order))
            rs.append(_gates(wh, hidden, order))
            bs.append(np.concatenate([_gates(bx, hidden, order),
                                      _gates(bh, hidden, order)]))
        out.append((np.stack(ws), np.stack(rs), np.stack(bs)))
    if at != flat.size:
        raise ValueError(f"{flat.size} parameters where {at} were expected")
    return out


@converts("RNN")
def rnn(cx: Ctx, node: OpNode) -> Out:
    """One ONNX LSTM/GRU/RNN per layer, the weights unpacked from ``parameters`` (a
    constant); outputs: the last layer's steps, and with ``state_outputs`` the final
    states of every layer (hy, and cy for an LSTM)."""
    p = node.p
    mode = str(p.get("mode", "lstm"))
    if mode not in MODES:
        raise node.refuse(f"mode {mode}")
    if p.get("projection_size") not in (None, 0):
        raise node.refuse(f"projection_size={p['projection_size']} (an LSTM with a "
                          "projection: ONNX's LSTM has none)")
    for clip in ("lstm_state_clip_min", "lstm_state_clip_max"):
        if p.get(clip) is not None:
            raise node.refuse(f"{clip}={p[clip]} (MXNet clips the cell state; ONNX's "
                              "LSTM clip bounds the gates' inputs)")
    if p.get("use_sequence_length"):
        raise node.refuse("use_sequence_length=True (MXNet runs it with cuDNN only)")
    flat = cx.value(node.inputs[1])
    if flat is None:
        raise node.refuse("its parameters are not a constant (weights computed in the "
                          "graph cannot be unpacked into ONNX's W, R and B)")
    if node.rank() != 3:
        raise node.refuse(f"{node.rank()}-D data (MXNet reads (steps, batch, input))")
    op, _, _, act = MODES[mode]
    layers, hidden = int(p.get("num_layers", 1)), int(p["state_size"])
    dirs = 2 if p.get("bidirectional") else 1
    steps, batch, inputs = node.in_shapes[0]
    dtype = node.in_dtypes[0] or "float32"
    try:
        packed = unpack(flat, mode, layers, dirs, inputs, hidden)
    except ValueError as exc:
        raise node.refuse(f"parameters: {exc}") from None
    state_out = len(node.outputs) > 1
    lstm = mode == "lstm"
    x = node.inputs[0]
    hs: list[str] = []
    cs: list[str] = []
    attrs: dict[str, Any] = {"hidden_size": hidden,
                             "direction": "bidirectional" if dirs == 2 else "forward"}
    if act:
        attrs["activations"] = [act] * dirs
    if mode == "gru":
        attrs["linear_before_reset"] = 1
    for layer, (w, r, b) in enumerate(packed):
        ins = [x, cx.const(w.astype(dtype), hint=f"{node.name}__W{layer}"),
               cx.const(r.astype(dtype), hint=f"{node.name}__R{layer}"),
               cx.const(b.astype(dtype), hint=f"{node.name}__B{layer}"), ""]
        for k in ([2, 3] if lstm else [2]):           # this layer's begin states
            ins.append(cx.one("Slice", [node.inputs[k], cx.ints([layer * dirs]),
                                        cx.ints([(layer + 1) * dirs]), cx.ints([0])],
                              hint=f"{node.name}__state{k}_{layer}"))
        count = 3 if lstm else 2
        made = cx.add(op, ins, count, hint=f"{node.name}__l{layer}", **attrs)
        last = layer == layers - 1
        y = cx.one("Transpose", [made[0]], hint=f"{node.name}__y{layer}", perm=[0, 2, 1, 3])
        x = cx.reshape(y, [steps, batch, dirs * hidden], node.outputs[0] if last else None)
        hs.append(made[1])
        if lstm:
            cs.append(made[2])
    result: Out = [x]
    if state_out:
        finals = [hs] + ([cs] if lstm else [])
        for k, parts in enumerate(finals, start=1):
            if k < len(node.outputs):
                result.append(cx.one("Concat", parts, node.outputs[k], axis=0)
                              if len(parts) > 1 else cx.identity(parts[0], node.outputs[k]))
    return result + [None] * (len(node.outputs) - len(result))
