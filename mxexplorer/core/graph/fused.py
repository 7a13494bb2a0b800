"""Names, counts and auxiliary states of the ops the op table cannot describe alone.

The op table (generated from MXNet with default attributes) cannot say what MXNet says
of three kinds of ops, and this module does (``FListOutputNames``, ``FNumVisibleOutputs``,
``FListInputNames``, ``FMutateInputs``):

- the fused MKL-DNN subgraph ops ``_sg_mkldnn_conv``, ``_sg_mkldnn_fully_connected``,
  ``_sg_mkldnn_selfatt_qk`` and ``_sg_mkldnn_selfatt_valatt``, whose inputs follow the
  small graph they fuse (the node's ``subgraphs`` field: its variables in MXNet's order,
  which of them an inner BatchNorm updates, the convolution's ``no_bias``) and their
  fusion flags (``with_bn``, ``with_sum``, ``quantized``, ``enable_float_output``,
  ``channel_wise_quantize`` ...);
- the int8 ops whose outputs or inputs depend on attributes
  (``_contrib_quantized_elemwise_mul`` with ``enable_float_output``,
  ``_contrib_quantized_rnn`` with ``state_outputs``, ``_contrib_quantized_concat``'s
  ``num_args``, ``_contrib_quantized_conv``/``fully_connected``'s ``no_bias``);
- the plug-in ops MXNet 1.9.1 does not register but real files use (the SSD fork's
  ``MultiBox*``, ``ChannelwiseConvolution``, BMXNet's ``Q*`` layers, ``WarpCTC``).

:mod:`~mxexplorer.core.graph.opinfo` asks it (so the document's internals, arguments
and auxiliary states are MXNet's); the engine's rules for these ops
(``core/ops/quantized/``, ``core/ops/plugins.py``) build on the same reading of the
flags and of the fused graph.  What is asked for names never raises: a value MXNet's
parser refuses reads as the default (the rules refuse it, naming the attribute).
Must not import MXNet or Qt.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence, TypeVar

from mxexplorer.core.graph.model import Node, as_str_attrs, node_attrs

#: the fused MKL-DNN ops, whose inputs follow the graph in their ``subgraphs`` field
FUSED_OPS = ("_sg_mkldnn_conv", "_sg_mkldnn_fully_connected", "_sg_mkldnn_selfatt_qk",
             "_sg_mkldnn_selfatt_valatt")
#: ops MXNet 1.9.1 does not register whose names and inputs are known
PLUGIN_OPS = ("MultiBoxPrior", "MultiBoxTarget", "MultiBoxDetection",
              "ChannelwiseConvolution", "QConvolution", "QFullyConnected", "QActivation",
              "WarpCTC")


class FusedError(ValueError):
    """A fused node's attribute or ``subgraphs`` field that cannot be read, in plain
    words; ``attr`` names the attribute at fault."""

    def __init__(self, message: str, attr: str | None = None):
        super().__init__(message)
        self.message = message
        self.attr = attr


# ---------------------------------------------------------------------- attributes
def read_bool(text: str) -> bool:
    """A boolean as dmlc's parser reads it (``true``/``false`` in any case, 1, 0)."""
    low = text.lower()
    if low in ("true", "1"):
        return True
    if low in ("false", "0"):
        return False
    raise ValueError(text)


def attr_flag(attrs: Mapping[str, str], key: str, default: bool = False,
              legacy: str | None = None) -> bool:
    """A boolean attribute; ``legacy``: an older file's name for it, which MXNet renames
    over the new one.  Raises :class:`FusedError` for a value MXNet refuses."""
    text = attrs.get(key)
    if legacy is not None and attrs.get(legacy) is not None:
        key = legacy
        text = attrs[legacy]
    if text is None:
        return default
    try:
        return read_bool(str(text))
    except ValueError:
        raise FusedError(f"attribute {key}={text!r} is not True or False", attr=key) from None


def _loose(attrs: Mapping[str, str], key: str, default: bool = False) -> bool:
    try:
        return attr_flag(attrs, key, default)
    except FusedError:
        return default


_INT = re.compile(r"\s*[+-]?\d+\s*\Z")


# ------------------------------------------------------------------ the fused graph
class Subgraph:
    """A fused node's graph (its ``subgraphs[0]``) in MXNet's order: nodes in post-order
    from the heads, the variables (the fused op's inputs) in that order.  Raises
    :class:`FusedError` for a field that is not a symbol graph."""

    def __init__(self, raw: Mapping[str, Any]):
        try:
            self._read(raw)
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            if isinstance(exc, FusedError):
                raise
            raise FusedError("the fused layer's 'subgraphs' field is not a symbol graph "
                             "(nodes with op, name and inputs; heads)") from None
        self.order = self._post_order()
        self.variables = [nid for nid in self.order if self.nodes[nid].op == "null"]

    def _read(self, raw: Mapping[str, Any]) -> None:
        nodes_raw = raw.get("nodes")
        heads = raw.get("heads")
        if not isinstance(nodes_raw, list) or not isinstance(heads, list) or not heads:
            raise FusedError("the fused layer's subgraph has no nodes or no heads")
        self.nodes: list[Node] = []
        for n in nodes_raw:
            if not isinstance(n, dict):
                raise FusedError("the fused layer's subgraph has a node that is not an "
                                 "object")
            attrs = as_str_attrs(node_attrs(n))
            inputs = [(int(e[0]), int(e[1]), int(e[2]) if len(e) > 2 else 0)
                      for e in n.get("inputs", [])]
            extra = {k: v for k, v in n.items()
                     if k not in ("op", "name", "attrs", "attr", "param", "inputs")}
            self.nodes.append(Node(str(n.get("op", "null")), str(n.get("name", "")), attrs,
                                   inputs, extra))
        self.heads = [(int(h[0]), int(h[1])) for h in heads]
        for nid, _ in self.heads:
            if not 0 <= nid < len(self.nodes):
                raise FusedError("the fused layer's subgraph names a head that is not a "
                                 "node")
        rp = raw.get("node_row_ptr")
        self.row_hints: list[int] | None = None
        if isinstance(rp, list) and len(rp) == len(self.nodes) + 1:
            self.row_hints = [int(rp[i + 1]) - int(rp[i]) for i in range(len(self.nodes))]

    def _post_order(self) -> list[int]:
        seen: set[int] = set()
        order: list[int] = []
        for head, _ in self.heads:
            if head in seen:
                continue
            stack: list[tuple[int, int]] = [(head, 0)]
            seen.add(head)
            while stack:
                nid, k = stack.pop()
                inputs = self.nodes[nid].inputs
                if k < len(inputs):
                    stack.append((nid, k + 1))
                    child = inputs[k][0]
                    if not 0 <= child < len(self.nodes):
                        raise FusedError("the fused layer's subgraph has an input that is "
                                         "not a node")
                    if child not in seen:
                        seen.add(child)
                        stack.append((child, 0))
                else:
                    order.append(nid)
        return order

    def ops(self) -> list[int]:
        return [nid for nid in self.order if self.nodes[nid].op != "null"]

    def find(self, *ops: str) -> list[int]:
        return [nid for nid in self.ops() if self.nodes[nid].op in ops]

    def names(self) -> str:
        return ", ".join(self.nodes[n].name for n in self.variables)

    def aux_inputs(self, aux_of: Callable[[str], Sequence[int]]) -> list[int]:
        """``DefaultSubgraphOpMutableInputs``: positions of the variables an inner op
        updates (BatchNorm's moving mean and variance); ``aux_of(op)``: the auxiliary
        input positions of an inner op."""
        mutated: set[int] = set()
        for nid in self.ops():
            node = self.nodes[nid]
            for slot in aux_of(node.op):
                if slot < len(node.inputs):
                    src = node.inputs[slot][0]
                    if self.nodes[src].op == "null":
                        mutated.add(src)
        return [k for k, nid in enumerate(self.variables) if nid in mutated]

    def input_roles(self, slots_of: Callable[[Node], Sequence[str]]) -> list[str]:
        """For each input, the slot it feeds in the first inner op that reads it
        (``weight``, ``gamma``, ``moving_mean`` ...); ``slots_of(node)``: an inner
        node's input slot names."""
        role: dict[int, str] = {}
        for nid in self.ops():
            node = self.nodes[nid]
            slots = slots_of(node)
            for k, (src, _, _) in enumerate(node.inputs):
                if src not in role and self.nodes[src].op == "null":
                    role[src] = slots[k] if k < len(slots) else f"arg{k}"
        return [role.get(nid, "data") for nid in self.variables]


S = TypeVar("S", bound=Subgraph)


def read_subgraph(subgraphs: Any, kind: type[S]) -> S | None:
    """The graph a node's ``subgraphs`` field holds (its first), as ``kind``; None when
    the field is missing or empty.  Raises :class:`FusedError` for one that is not a
    symbol graph."""
    if not isinstance(subgraphs, list) or not subgraphs or not isinstance(subgraphs[0], dict):
        return None
    return kind(subgraphs[0])


def _loose_sub(subgraphs: Any) -> Subgraph | None:
    try:
        return read_subgraph(subgraphs, Subgraph)
    except FusedError:
        return None


# ------------------------------------------------------------------- fusion flags
class ConvFlags:
    """What ``SgMKLDNNConvParamParser`` reads of a ``_sg_mkldnn_conv`` node, and its
    fused convolution's ``no_bias``.  Raises :class:`FusedError` for a flag MXNet
    refuses."""

    def __init__(self, attrs: Mapping[str, str], sub: Subgraph | None):
        self.with_bn = attr_flag(attrs, "with_bn")
        self.with_act = attr_flag(attrs, "with_act", legacy="with_relu")
        self.with_sum = attr_flag(attrs, "with_sum")
        self.with_postsum_act = attr_flag(attrs, "with_postsum_act",
                                          legacy="with_postsum_relu")
        self.quantized = attr_flag(attrs, "quantized")
        self.no_bias = False
        if sub is not None:
            for nid in sub.find("Convolution"):
                self.no_bias = attr_flag(sub.nodes[nid].attrs, "no_bias")

    def sum_index(self) -> int:
        """Position of the summed input among the fused graph's variables."""
        return 2 + (0 if self.no_bias else 1) + (4 if self.with_bn else 0)

    def input_names(self) -> list[str]:
        names = ["data", "weight"] + ([] if self.no_bias else ["bias"])
        if self.with_bn:
            names += ["gamma", "beta", "mean", "var"]
        if self.with_sum:
            names.append("sum")
        if self.quantized:
            names += ["data_min", "data_max"] + (["sum_min", "sum_max"] if self.with_sum
                                                 else [])
        return names


class FCFlags:
    """What ``SgMKLDNNFCParamParser`` reads of a ``_sg_mkldnn_fully_connected`` node,
    and its fused layer's ``no_bias``.  Raises :class:`FusedError` for a flag MXNet
    refuses."""

    def __init__(self, attrs: Mapping[str, str], sub: Subgraph | None):
        self.quantized = attr_flag(attrs, "quantized")
        self.float_output = attr_flag(attrs, "enable_float_output")
        self.with_eltwise = attr_flag(attrs, "with_eltwise", legacy="with_relu")
        text = attrs.get("channel_wise_quantize")
        self.channel_wise = False
        if text is not None and text != "None":
            self.channel_wise = attr_flag(attrs, "channel_wise_quantize")
        self.no_bias = False
        if sub is not None:
            for nid in sub.find("FullyConnected"):
                self.no_bias = attr_flag(sub.nodes[nid].attrs, "no_bias")

    def n_inputs(self) -> int:
        base = 2 if self.no_bias else 3
        if not self.quantized:
            return base
        return base + 2 if self.channel_wise else base * 3

    def range_names(self) -> list[str]:
        """The min/max inputs after the fused graph's variables."""
        if not self.quantized:
            return []
        names = ["min_data", "max_data"]
        if not self.channel_wise:
            names += ["min_weight", "max_weight"]
            if not self.no_bias:
                names += ["min_bias", "max_bias"]
        return names


F = TypeVar("F", ConvFlags, FCFlags)


def _loose_flags(kind: type[F], attrs: Mapping[str, str], sub: Subgraph | None) -> F:
    """``kind``'s reading with every value MXNet refuses read as the default."""
    try:
        return kind(attrs, sub)
    except FusedError:
        pass
    clean = {}
    for key, value in attrs.items():
        try:
            read_bool(str(value))
            clean[key] = value
        except ValueError:
            pass
    try:
        return kind(clean, sub)
    except FusedError:
        return kind(clean, None)


# ------------------------------------------------------------------------- names
#: plug-ins' outputs (one ``output`` for the others)
_PLUGIN_OUTPUTS: dict[str, list[str]] = {
    "MultiBoxTarget": ["loc_target", "loc_mask", "cls_target"],
}


#: the other plug-ins' inputs (those whose inputs depend on attributes are read below)
_PLUGIN_INPUTS: dict[str, tuple[str, ...]] = {
    "QActivation": ("data",), "WarpCTC": ("data", "label"), "MultiBoxPrior": ("data",),
    "MultiBoxTarget": ("anchor", "label", "cls_pred"),
    "MultiBoxDetection": ("cls_prob", "loc_pred", "anchor"),
}


def outputs(op: str, attrs: Mapping[str, str]) -> tuple[int, list[str]] | None:
    """Total output count and visible output names of one of this module's ops
    (``op``: its canonical name), or None for another op."""
    if op == "_sg_mkldnn_conv":
        if _loose(attrs, "quantized"):
            return 3, ["output", "output_min", "output_max"]
        return 1, ["output"]
    if op in FUSED_OPS:
        if _loose(attrs, "quantized") and not _loose(attrs, "enable_float_output"):
            return 3, ["output", "min_output", "max_output"]
        return 1, ["output"]
    if op == "_contrib_quantized_elemwise_mul":
        if _loose(attrs, "enable_float_output"):
            return 1, ["output"]
        return 3, ["output", "min_output", "max_output"]
    if op == "_contrib_quantized_rnn":
        if _loose(attrs, "state_outputs"):
            # MXNet's own spelling ("ouput") is what its internals list
            return 3, ["output", "state_output", "statecell_ouput"]
        return 1, ["output"]
    if op in PLUGIN_OPS:
        names = _PLUGIN_OUTPUTS.get(op, ["output"])
        return len(names), list(names)
    return None


def input_slots(op: str, attrs: Mapping[str, str], subgraphs: Any = None,
                n_inputs: int | None = None) -> list[str] | None:
    """MXNet's input names of one of this module's ops (``op``: its canonical name), or
    None for another op.  ``subgraphs``: a fused node's ``subgraphs`` field (it settles
    a convolution's no_bias, and a fully connected layer's names are its fused graph's
    variables); without it no_bias is deduced from ``n_inputs``."""
    if op in FUSED_OPS:
        return _fused_slots(op, attrs, subgraphs, n_inputs)
    if op == "_contrib_quantized_concat":
        text = str(attrs.get("num_args", "1"))
        if not _INT.match(text):
            return None
        n = max(int(text), 0)
        return [f"arg{i}" for i in range(n)] + [
            f"arg{i}_{m}" for i in range(n) for m in ("min", "max")]
    if op in ("_contrib_quantized_conv", "_contrib_quantized_fully_connected"):
        if _loose(attrs, "no_bias"):
            return ["data", "weight", "min_data", "max_data", "min_weight", "max_weight"]
        return ["data", "weight", "bias", "min_data", "max_data", "min_weight",
                "max_weight", "min_bias", "max_bias"]
    if op == "_contrib_quantized_rnn":
        return ["data", "parameters", "state", "state_cell", "min_data", "max_data"]
    if op in ("QConvolution", "QFullyConnected"):          # BMXNet: no bias by default
        return ["data", "weight"] + ([] if _loose(attrs, "no_bias", True) else ["bias"])
    if op == "ChannelwiseConvolution":
        return ["data", "weight"] + ([] if _loose(attrs, "no_bias") else ["bias"])
    found = _PLUGIN_INPUTS.get(op)
    return list(found) if found is not None else None


def _fused_slots(op: str, attrs: Mapping[str, str], subgraphs: Any,
                 n_inputs: int | None) -> list[str]:
    sub = _loose_sub(subgraphs)
    if op == "_sg_mkldnn_conv":
        f = _loose_flags(ConvFlags, attrs, sub)
        if sub is None and n_inputs is not None:
            fixed = 2 + 4 * f.with_bn + f.with_sum + (2 + 2 * f.with_sum) * f.quantized
            f.no_bias = n_inputs <= fixed
        return f.input_names()
    if op == "_sg_mkldnn_fully_connected":
        g = _loose_flags(FCFlags, attrs, sub)
        if sub is not None:
            names = [sub.nodes[n].name for n in sub.variables]
        else:
            count = n_inputs if n_inputs is not None else 3 * (3 if g.quantized else 1)
            g.no_bias = count in (4, 6) if g.quantized else count == 2
            names = ["data", "weight"] + ([] if g.no_bias else ["bias"])
        return names + g.range_names()
    quant = _loose(attrs, "quantized")
    if op == "_sg_mkldnn_selfatt_qk":
        return ["queries_keys_values"] + (["min_qkv", "max_qkv"] if quant else [])
    return ["queries_keys_values", "attention"] + (
        ["min_qkv", "max_qkv", "min_attention", "max_attention"] if quant else [])


def input_roles(op: str, attrs: Mapping[str, str], subgraphs: Any,
                slots_of: Callable[[Node], Sequence[str]], n_inputs: int | None = None
                ) -> list[str] | None:
    """Like :func:`input_slots` for a fused op, but each input named by the slot it feeds
    inside the fused graph (``data``, ``weight``, ``bias``, ``gamma``, ``moving_mean``
    ...), the min/max inputs by their MXNet names: what tells parameters from data.
    None for another op; ``slots_of(node)``: an inner node's input slot names;
    ``n_inputs`` as for :func:`input_slots`."""
    if op not in FUSED_OPS:
        return None
    names = _fused_slots(op, attrs, subgraphs, n_inputs)
    sub = _loose_sub(subgraphs)
    if sub is None:
        return names
    roles = sub.input_roles(slots_of)
    return roles + names[len(roles):]


def aux_slots(op: str, subgraphs: Any, aux_of: Callable[[str], Sequence[int]]
              ) -> tuple[int, ...] | None:
    """Input positions of a fused node that are auxiliary states (``FMutateInputs``:
    the fused graph's variables an inner op updates, e.g. BatchNorm's moving mean and
    variance in ``_sg_mkldnn_conv`` with_bn), or None for another op.  ``aux_of(op)``:
    an inner op's auxiliary input positions."""
    if op not in FUSED_OPS:
        return None
    if op in ("_sg_mkldnn_selfatt_qk", "_sg_mkldnn_selfatt_valatt"):
        return ()
    sub = _loose_sub(subgraphs)
    if sub is None:
        return ()
    return tuple(sub.aux_inputs(aux_of))


__all__ = ["FUSED_OPS", "PLUGIN_OPS", "ConvFlags", "FCFlags", "FusedError", "Subgraph",
           "attr_flag", "aux_slots", "input_roles", "input_slots", "outputs", "read_bool",
           "read_subgraph"]
