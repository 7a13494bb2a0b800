"""Rules for the fused MKL-DNN subgraph ops ``_sg_mkldnn_conv``,
``_sg_mkldnn_fully_connected``, ``_sg_mkldnn_selfatt_qk`` and
``_sg_mkldnn_selfatt_valatt``.  A fused op infers its shapes the way MXNet does: by
inferring the small graph it fuses (the node's ``subgraphs`` field: Convolution,
BatchNorm, Activation, the sum ...) with the engine's own rules (an inner op without one
is asked of the pass's oracle, ``Call.oracle``), then adding the min/max entries of the
quantized form.  How many outputs these ops have, their names, their inputs' names and
which inputs are auxiliary states are the graph layer's
(:mod:`mxexplorer.core.graph.fused`, which also reads the fusion flags and the fused
graph these rules build on).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from mxexplorer.core.graph import fused
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.base import Call, Rule, RuleError, table
from mxexplorer.core.ops.params import parse_float
from mxexplorer.core.ops.quantized.helpers import (
    F32,
    FAMILY,
    ONE,
    QUANT,
    _calibrated,
    _count,
    _need_type,
    _opt_float,
    _put_out,
    _ranges,
)


# ===================================================================== fused subgraphs
class _Sub(fused.Subgraph):
    """A node's fused graph (:class:`~mxexplorer.core.graph.fused.Subgraph`: its nodes
    in MXNet's order and its variables, the fused op's inputs), inferred by the engine's
    rules."""

    def infer(self, c: Call, ins: Sequence[Any], outs: Sequence[Any]
              ) -> tuple[list[Any], list[Any]]:
        """MXNet's ``DefaultSubgraphOpShape``/``Type``: the fused graph inferred with these
        input and output values (by the engine's rules; an inner op without one is asked
        of the outer pass's oracle, ``c.oracle``); its variables' and heads' values merged
        back."""
        if len(ins) != len(self.variables):
            raise RuleError(f"has {len(ins)} inputs, but its fused graph takes "
                            f"{len(self.variables)} ({self.names()})")
        hints = self.row_hints
        g = engine.graph_of(self.nodes, self.order,
                            (lambda nid: hints[nid]) if hints is not None else None)
        given: dict[int, Any] = {nid: v for nid, v in zip(self.variables, ins) if v is not None}
        for (nid, idx), v in zip(self.heads, outs):
            if v is not None and idx == 0 and self.nodes[nid].op != "null":
                given[nid] = v
        run = engine.infer_shapes if c.kind == "shape" else engine.infer_dtypes
        got = run(g, given, c.oracle)
        if got.failure is not None:
            bad = self.nodes[got.failure.node]
            raise RuleError(f"inside the fused layer, {bad.op} {bad.name!r}: "
                            f"{got.failure.error.message}")
        if got.unruled:         # not known here: say which layer, not a consequence later
            bad = self.nodes[got.unruled[0]]
            raise RuleError(f"mxexplorer has no {c.kind} rule for {bad.op} (inside the fused "
                            f"layer, {bad.name!r}), and MXNet, which could answer, is not "
                            "available")
        new_ins = [got.values.get((nid, 0)) for nid in self.variables]
        new_outs = [got.values.get(h) for h in self.heads]
        return new_ins, new_outs


def _fused_error(exc: fused.FusedError) -> RuleError:
    return RuleError(exc.message, attr=exc.attr)


def _subgraph(extra: Mapping[str, Any] | None) -> _Sub | None:
    try:
        return fused.read_subgraph((extra or {}).get("subgraphs"), _Sub)
    except fused.FusedError as exc:
        raise _fused_error(exc) from None


def _need_sub(c: Call) -> _Sub:
    sub = _subgraph(c.extra)
    if sub is None:
        c.fail(f"{c.op} is a fused layer, but this node has no 'subgraphs' field with the "
               "layers it fuses")
    assert sub is not None
    return sub


# ------------------------------------------------------------------ _sg_mkldnn_conv
class ConvFusion(fused.ConvFlags):
    """What ``SgMKLDNNConvParamParser`` reads from a ``_sg_mkldnn_conv`` node (the flags
    and no_bias: :class:`~mxexplorer.core.graph.fused.ConvFlags`), with the fused
    activations' MKL-DNN post-ops."""

    def __init__(self, attrs: Mapping[str, str], sub: _Sub | None):
        try:
            super().__init__(attrs, sub)
        except fused.FusedError as exc:
            raise _fused_error(exc) from None
        self.act: tuple[str, float] | None = None
        self.postsum_act: tuple[str, float] | None = None
        if sub is None:
            return
        seen_act = False
        for nid in sub.ops():
            node = sub.nodes[nid]
            if node.op == "BatchNorm" and not self.with_bn:
                raise RuleError("the fused graph holds a BatchNorm, but with_bn is not set",
                                attr="with_bn")
            if node.op in ("Activation", "LeakyReLU", "clip"):
                alg = _eltwise(node.op, node.attrs)
                if self.with_act and not seen_act:
                    self.act = alg
                else:
                    self.postsum_act = alg
                seen_act = True

    def output_uint8(self) -> bool:
        if not self.with_sum and self.with_act:
            if self.act is None:
                raise RuleError("with_act is set, but the fused graph holds no activation",
                                attr="with_act")
            return _unsigned(self.act)
        if self.with_postsum_act:
            if self.postsum_act is None:
                raise RuleError("with_postsum_act is set, but the fused graph holds no "
                                "activation after the sum", attr="with_postsum_act")
            return _unsigned(self.postsum_act)
        return False


_ACT_ALG = {"relu": "relu", "sigmoid": "logistic", "tanh": "tanh", "softrelu": "soft_relu"}
_LEAKY_ALG = {"leaky": "relu", "elu": "elu", "gelu": "gelu"}


def _eltwise(op: str, attrs: Mapping[str, str]) -> tuple[str, float]:
    """The MKL-DNN post-op an activation node becomes: (algorithm, alpha)."""
    if op == "Activation":
        kind = str(attrs.get("act_type", ""))
        if kind not in _ACT_ALG:
            raise RuleError(f"the fused activation's act_type {kind!r} cannot be fused "
                            "(relu, sigmoid, tanh or softrelu)", attr="act_type")
        return _ACT_ALG[kind], 0.0
    if op == "LeakyReLU":
        kind = str(attrs.get("act_type", "leaky"))
        if kind not in _LEAKY_ALG:
            raise RuleError(f"the fused LeakyReLU's act_type {kind!r} cannot be fused "
                            "(leaky, elu or gelu)", attr="act_type")
        slope = attrs.get("slope")
        try:
            alpha = parse_float(str(slope)) if slope is not None else 0.25
        except ValueError:
            raise RuleError(f"attribute slope={slope!r} is not a number", attr="slope") from None
        return _LEAKY_ALG[kind], alpha
    if op == "clip":
        return "bounded_relu", 0.0
    if op in ("square", "sqrt", "exp", "abs"):
        return op, 0.0
    raise RuleError(f"{op} cannot be fused into this layer")


def _unsigned(alg: tuple[str, float]) -> bool:
    name, alpha = alg
    return (name == "relu" and alpha == 0.0) or name in ("logistic", "soft_relu",
                                                         "bounded_relu")


def _as_fused(c: Call, sub: _Sub) -> None:
    """An unquantized fused node: what its inner graph infers, shapes or dtypes."""
    ins, outs = sub.infer(c, c.ins, c.outs[:1])
    for i, v in enumerate(ins):
        c.set_in(i, v, "the fused layers need")
    c.set_out(0, outs[0])


def sg_conv_shape(c: Call) -> None:
    sub = _need_sub(c)
    f = ConvFusion(c.attrs, sub)
    if not f.quantized:
        _as_fused(c, sub)
        return
    extra = 4 if f.with_sum else 2
    _count(c, len(sub.variables) + extra,
           f"{sub.names()}, then the min/max of the data" + (" and the sum"
                                                             if f.with_sum else ""))
    n_base = len(c.ins) - extra
    ins, outs = sub.infer(c, c.ins[:n_base], [c.outs[0]])
    for i in range(n_base, len(c.ins)):
        c.set_in(i, ONE, "a min/max range input is")
    c.ins[:n_base] = ins
    c.outs[0] = outs[0]
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def sg_conv_type(c: Call) -> None:
    sub = _need_sub(c)
    f = ConvFusion(c.attrs, sub)
    if not f.quantized:
        _as_fused(c, sub)
        return
    extra = 4 if f.with_sum else 2
    n_base = len(c.ins) - extra
    base = list(c.ins[:n_base])
    orig_data = base[0]
    base[0] = F32
    s = f.sum_index()
    orig_sum = base[s] if f.with_sum and s < n_base else None
    if f.with_sum and s < n_base:
        base[s] = F32
    ins, _ = sub.infer(c, base, [c.outs[0]])
    ins[0] = orig_data
    if f.with_sum and s < n_base:
        ins[s] = orig_sum
    for i in range(n_base, len(c.ins)):
        c.set_in(i, F32, "a min/max range input is")
    c.ins[:n_base] = ins
    if _opt_float(c, "min_calib_range") is not None and \
            _opt_float(c, "max_calib_range") is not None:
        c.set_out(0, "uint8" if f.output_uint8() else "int8")
    else:
        c.set_out(0, "int32")
    c.set_out(1, F32)
    c.set_out(2, F32)


# ---------------------------------------------------------- _sg_mkldnn_fully_connected
class FCFusion(fused.FCFlags):
    """What ``SgMKLDNNFCParamParser`` reads from a ``_sg_mkldnn_fully_connected`` node
    (:class:`~mxexplorer.core.graph.fused.FCFlags`), with the fused activation's post-op."""

    def __init__(self, attrs: Mapping[str, str], sub: _Sub | None):
        try:
            super().__init__(attrs, sub)
        except fused.FusedError as exc:
            raise _fused_error(exc) from None
        self.eltwise: tuple[str, float] | None = None
        if sub is None:
            return
        for nid in sub.ops():
            node = sub.nodes[nid]
            if node.op in ("Activation", "LeakyReLU", "clip", "square", "sqrt", "exp",
                           "abs"):
                self.eltwise = _eltwise(node.op, node.attrs)

    def output_uint8(self) -> bool:
        return self.with_eltwise and self.eltwise is not None and self.eltwise[0] in (
            "relu", "logistic", "soft_relu", "bounded_relu", "square", "sqrt", "exp", "abs")


def sg_fc_shape(c: Call) -> None:
    sub = _need_sub(c)
    f = FCFusion(c.attrs, sub)
    if not f.quantized:
        _as_fused(c, sub)
        return
    _count(c, f.n_inputs(), "data, weight" + ("" if f.no_bias else ", bias")
           + " and their min/max")
    n_base = 2 if f.no_bias else 3
    ins, outs = sub.infer(c, c.ins[:n_base], [c.outs[0]])
    c.ins[:n_base] = ins
    _ranges(c, n_base, len(c.ins))
    c.outs[0] = outs[0]
    if not f.float_output:
        _put_out(c, 1, ONE)
        _put_out(c, 2, ONE)


def sg_fc_type(c: Call) -> None:
    sub = _need_sub(c)
    f = FCFusion(c.attrs, sub)
    if not f.quantized:
        _as_fused(c, sub)
        return
    _need_type(c, 0, QUANT, "a quantized fully connected layer")
    n_base = 2 if f.no_bias else 3
    for i in range(1, len(c.ins)):
        if f.channel_wise or i >= n_base:
            c.set_in(i, F32, "a quantized fully connected layer takes")
        else:
            c.set_in(i, "int8", "a quantized fully connected layer takes")
    if f.float_output:
        c.set_out(0, F32)
        return
    if _opt_float(c, "min_calib_range") is not None and \
            _opt_float(c, "max_calib_range") is not None:
        c.set_out(0, "uint8" if f.output_uint8() else "int8")
    else:
        c.set_out(0, "int32")
    _put_out(c, 1, F32)
    _put_out(c, 2, F32)


# ------------------------------------------------------------- _sg_mkldnn_selfatt_*
def _selfatt_shape(base: int) -> Callable[[Call], None]:
    def rule(c: Call) -> None:
        sub = _need_sub(c)
        if not c.p.get("quantized"):
            ins, outs = sub.infer(c, c.ins, c.outs[:1])
            for i, v in enumerate(ins):
                c.set_in(i, v, "the fused layers need")
            c.set_out(0, outs[0])
            return
        _count(c, 3 * base, "the data inputs and their min/max")
        ins, outs = sub.infer(c, c.ins[:base], [c.outs[0]])
        c.ins[:base] = ins
        _ranges(c, base, len(c.ins))
        c.outs[0] = outs[0]
        if not c.p.get("enable_float_output"):
            _put_out(c, 1, ONE)
            _put_out(c, 2, ONE)
    return rule


def _selfatt_type(valatt: bool) -> Callable[[Call], None]:
    def rule(c: Call) -> None:
        if not c.p.get("quantized"):
            sub = _need_sub(c)
            ins, outs = sub.infer(c, c.ins, c.outs[:1])
            for i, v in enumerate(ins):
                c.set_in(i, v, "the fused layers need")
            c.set_out(0, outs[0])
            return
        if valatt:
            c.set_in(0, "int8", "the fused attention takes")
            c.set_in(1, "uint8", "the fused attention takes")
            _ranges(c, 2, len(c.ins), F32)
        else:
            _need_type(c, 0, ("int8",), "the fused attention")
            _ranges(c, 1, 3, F32)
        if c.p.get("enable_float_output"):
            c.set_out(0, F32)
            return
        c.set_out(0, "int8" if _calibrated(c) else "int32")
        _put_out(c, 1, F32)
        _put_out(c, 2, F32)
    return rule


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_sg_mkldnn_conv",), sg_conv_shape, sg_conv_type),
    **table(FAMILY, ("_sg_mkldnn_fully_connected",), sg_fc_shape, sg_fc_type),
    **table(FAMILY, ("_sg_mkldnn_selfatt_qk",), _selfatt_shape(1), _selfatt_type(False)),
    **table(FAMILY, ("_sg_mkldnn_selfatt_valatt",), _selfatt_shape(2), _selfatt_type(True)),
}
