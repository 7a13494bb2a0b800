"""Rules for ops MXNet 1.9.1 does not register but real files use, whose semantics are
known: the SSD fork's ``MultiBoxPrior``, ``MultiBoxTarget`` and ``MultiBoxDetection``
(the names before they became ``_contrib_MultiBox*``), the mobilenet fork's
``ChannelwiseConvolution`` (a depthwise Convolution), BMXNet's ``QConvolution``,
``QFullyConnected`` and ``QActivation`` (binarized layers), and the ``WarpCTC`` plug-in.

The parser knows no fields of these ops, so the rules read the attribute texts
themselves.  An op that is a registered op under another name is inferred as that op
(its rule, or where it has none yet, the pass's oracle, ``Call.oracle``).  BMXNet's and
WarpCTC's shape functions are reproduced from their sources; BMXNet's packed weights
take 64-bit words (its desktop build, in which its published ``*_64bit`` models are
saved).  Their output and input names are the graph layer's
(:mod:`mxexplorer.core.graph.fused`).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Callable, Mapping

from mxexplorer.core.graph import fused, opinfo
from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import params, registry
from mxexplorer.core.ops.base import Call, MaybeShape, Rule, RuleError, fmt, table
from mxexplorer.core.ops.engine import NoAnswer
from mxexplorer.core.ops.params import parse_bool, parse_int, parse_tuple

FAMILY = "plugins"
#: bits in BMXNet's packed binary word, and the dtype its packed weights are stored as
BINARY_WORD_BITS = 64
BINARY_WORD_DTYPE = "float64"


# ---------------------------------------------------------------------- attributes
def _text(c: Call, key: str) -> str | None:
    value = c.attrs.get(key)
    return None if value is None else str(value)


def _int(c: Call, key: str, default: int, least: int | None = None,
         most: int | None = None) -> int:
    text = _text(c, key)
    if text is None:
        return default
    try:
        value = parse_int(text)
    except ValueError:
        raise RuleError(f"attribute {key}={text!r} is not a whole number", attr=key) from None
    if least is not None and value < least or most is not None and value > most:
        span = f"from {least} to {most}" if most is not None else f"{least} or more"
        raise RuleError(f"attribute {key}={text!r} is out of range: use {span}", attr=key)
    return value


def _bool(c: Call, key: str, default: bool) -> bool:
    text = _text(c, key)
    if text is None:
        return default
    try:
        return parse_bool(text)
    except ValueError:
        raise RuleError(f"attribute {key}={text!r} is not True or False", attr=key) from None


def _tuple(c: Call, key: str) -> tuple[int, ...]:
    text = _text(c, key)
    if text is None:
        return ()
    try:
        value = parse_tuple(text)
    except ValueError:
        value = None
    if value is None:
        raise RuleError(f"attribute {key}={text!r} is not a tuple of whole numbers such "
                        "as (3, 3)", attr=key)
    return tuple(value)


def _count(c: Call) -> None:
    """The node has the inputs its op takes with these attributes (their names:
    :func:`mxexplorer.core.graph.fused.input_slots`)."""
    names = fused.input_slots(c.op, c.attrs) or []
    if len(c.ins) != len(names):
        c.fail(f"has {len(c.ins)} inputs, but this layer takes {len(names)} "
               f"({', '.join(names)})")


# ------------------------------------------------------------ registered equivalents
def _delegate(c: Call, op: str, attrs: dict[str, str], n_outs: int) -> None:
    """Infer ``c`` as the registered ``op`` with ``attrs`` infers: by its rule, or
    where it has none, by the pass's oracle (``c.oracle``; without one nothing is
    learned this time)."""
    outs = list(c.outs[:n_outs]) + [None] * max(0, n_outs - len(c.outs))
    rule = registry.rule_for(op)
    if rule is not None:
        try:
            p = params.parse(op, attrs)
        except params.ParamError as exc:
            raise RuleError(str(exc), attr=exc.attr) from None
        sub = Call(op, p, attrs, c.ins, outs, c.slots, c.kind, c.extra,
                   getattr(c, "_sources", None), c.oracle)
        (rule.shape if c.kind == "shape" else rule.dtype)(sub)
        for i in range(min(len(c.outs), n_outs)):
            c.outs[i] = outs[i]
        return
    oracle = c.oracle
    if oracle is None:
        return
    node = Node(op, "n", dict(attrs), [(i, 0, 0) for i in range(len(c.ins))], {})
    try:
        if c.kind == "shape":
            ins, got = oracle.shapes(node, list(c.ins), outs)
        else:
            ins, got = oracle.dtypes(node, list(c.ins), outs)
    except NoAnswer:
        return
    for i, v in enumerate(ins):
        c.set_in(i, v)
    for i in range(min(len(c.outs), n_outs)):
        c.set_out(i, got[i])


def _declared(op: str, attrs: Mapping[str, str]) -> dict[str, str]:
    """The attributes ``op`` declares (a fork's extra keys dropped)."""
    spec = params.declared(op)
    fields = spec.fields if spec is not None else {}
    return {k: str(v) for k, v in attrs.items() if k in fields}


def _equivalent(op: str) -> Callable[[Call], None]:
    """The rule of a plug-in that is the registered ``op`` under another name."""
    def rule(c: Call) -> None:
        attrs = _declared(op, c.attrs)
        _delegate(c, op, attrs, opinfo.outputs(op, attrs)[0])
    return rule


def channelwise_conv(c: Call) -> None:
    """``ChannelwiseConvolution``: Convolution with one group per input channel (its
    ``num_group``, or the data's channels when not given)."""
    attrs = _declared("Convolution", c.attrs)
    if "num_group" not in attrs:
        data = c.ins[0] if c.ins else None
        layout = attrs.get("layout", "")
        axis = -1 if layout.endswith("C") else 1
        if data is None or len(data) < 2 or data[axis] < 0:
            return          # the groups are the data's channels: not known yet
        attrs["num_group"] = str(data[axis])
    _delegate(c, "Convolution", attrs, 1)


# ----------------------------------------------------------------- BMXNet's layers
def _qconv_params(c: Call) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                    tuple[int, ...], int, int, bool, bool]:
    kernel = _tuple(c, "kernel")
    if _text(c, "kernel") is None:
        c.fail("attribute kernel is required (a tuple of whole numbers such as (3, 3))",
               attr="kernel")
    k = len(kernel)
    if k not in (1, 2, 3):
        c.fail(f"kernel {kernel} has {k} dimensions: a convolution takes 1 to 3",
               attr="kernel")
    lists = []
    for key, default in (("stride", 1), ("dilate", 1), ("pad", 0)):
        value = _tuple(c, key) or (default,) * k
        lists.append(value)
    if _text(c, "num_filter") is None:
        c.fail("attribute num_filter is required (a whole number from 1 to 100000)",
               attr="num_filter")
    filters = _int(c, "num_filter", 1, 1, 100000)
    groups = _int(c, "num_group", 1, 0)
    no_bias = _bool(c, "no_bias", True)         # BMXNet's default: no bias
    packed = _bool(c, "binarized_weights_only", False)
    _int(c, "act_bit", 1, 1, 32)
    _int(c, "weight_bit", 1, 1, 32)
    return kernel, lists[0], lists[1], lists[2], filters, groups, no_bias, packed


def qconv_shape(c: Call) -> None:
    """BMXNet's ``QConvolution``: a 2-d NCHW convolution (no bias unless
    ``no_bias=False``); with ``binarized_weights_only`` its weight is the packed bits,
    (channels * num_filter * kh * kw / 64,)."""
    kernel, stride, dilate, pad, filters, groups, no_bias, packed = _qconv_params(c)
    _count(c)
    layout = _text(c, "layout")
    data = c.ins[0]
    if data is None:
        return
    if len(kernel) != 2:
        c.fail(f"kernel {kernel}: a binary convolution (QConvolution) is 2-d only",
               attr="kernel")
    if layout not in (None, "NCHW"):
        c.fail(f"layout {layout}: a binary convolution (QConvolution) takes NCHW data",
               attr="layout")
    if len(data) != 4:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but a binary convolution takes "
               "4-d (NCHW) data", input=0)
    for key, value in (("stride", stride), ("dilate", dilate), ("pad", pad)):
        if len(value) != 2:
            c.fail(f"{key} {value} has {len(value)} values, but the kernel {kernel} has 2:"
                   " give 2", attr=key)
    if min(stride) <= 0:
        c.fail(f"stride {stride} has a 0: strides must be 1 or more", attr="stride")
    if groups <= 0:
        c.fail("num_group=0: use 1 or more groups", attr="num_group")
    channels = data[1]
    if packed:
        if groups != 1:
            c.fail(f"num_group={groups}: packed binary weights (binarized_weights_only) "
                   "take one group", attr="num_group")
        words = channels * filters * kernel[0] * kernel[1] // BINARY_WORD_BITS \
            if channels >= 0 else -1
        c.set_in(1, (words,), f"the packed {BINARY_WORD_BITS}-bit weights make")
    else:
        c.set_in(1, (filters // groups * groups, channels // groups if channels >= 0 else -1,
                     kernel[0], kernel[1]), "the data and kernel make")
    if not no_bias:
        c.set_in(2, (filters,), "num_filter makes")
    if channels >= 0 and channels % groups:
        c.fail(f"{channels} input channels do not divide into {groups} groups (num_group):"
               f" use a num_group that divides {channels}", attr="num_group")
    if filters % groups:
        c.fail(f"num_filter={filters} does not divide into {groups} groups (num_group)",
               attr="num_group")
    eff = [1 + (kernel[j] - 1) * dilate[j] for j in range(2)]
    spatial = []
    for j in range(2):
        d = data[2 + j]
        spatial.append((d + 2 * pad[j] - eff[j]) // stride[j] + 1 if d >= 0 else -1)
    out = (data[0], filters, spatial[0], spatial[1])
    for j in range(2):
        if data[2 + j] >= 0 and eff[j] > data[2 + j] + 2 * pad[j]:
            c.fail(f"kernel {kernel}" + (f" with dilate {dilate}" if max(dilate) > 1 else "")
                   + " is larger than the padded input "
                   + fmt(tuple(data[2 + i] + 2 * pad[i] if data[2 + i] >= 0 else -1
                               for i in range(2))), attr="kernel")
    c.set_out(0, out)
    got = c.outs[0]
    assert got is not None
    back = [got[0], data[1], data[2], data[3]]
    for j in range(2):
        if got[2 + j] >= 0 and stride[j] == 1:
            back[2 + j] = got[2 + j] + eff[j] - 1 - 2 * pad[j]
    c.set_in(0, tuple(back), "the output size makes")


def qfc_shape(c: Call) -> None:
    """BMXNet's ``QFullyConnected``: the data flattened to (batch, features); weight
    (num_hidden, features), or the packed bits (num_hidden * features / 64,)."""
    if _text(c, "num_hidden") is None:
        c.fail("attribute num_hidden is required (a whole number, 1 or more)",
               attr="num_hidden")
    hidden = _int(c, "num_hidden", 1, 1)
    no_bias = _bool(c, "no_bias", True)
    packed = _bool(c, "binarized_weights_only", False)
    _int(c, "act_bit", 1, 1, 32)
    _int(c, "weight_bit", 1, 1, 32)
    _count(c)
    data = c.ins[0]
    if data is None:
        return
    if len(data) == 0:
        c.fail(f"{c.input_label(0)} is a scalar (0-d): a fully connected layer needs a "
               "batch dimension", input=0)
    features = 1
    for d in data[1:]:
        features = -1 if d < 0 or features < 0 else features * d
    if packed:
        c.set_in(1, ((hidden * features // BINARY_WORD_BITS) if features >= 0 else -1,),
                 f"the packed {BINARY_WORD_BITS}-bit weights make")
    else:
        c.set_in(1, (hidden, features), "num_hidden and the data make")
    if not no_bias:
        c.set_in(2, (hidden,), "num_hidden makes")
    c.outs[0] = (data[0], hidden)


def _bmxnet_type(c: Call) -> None:
    """BMXNet's type rule: the data's type for every input (known, or refused) and the
    output; packed weights are stored as 64-bit words (float64)."""
    packed = _bool(c, "binarized_weights_only", False) if c.op != "QActivation" else False
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        c.fail(f"{c.input_label(0)} has no known type, but {c.op} needs it: give the "
               "input's dtype", input=0)
    for i in range(len(c.ins)):
        if packed and i == 1:
            c.ins[i] = BINARY_WORD_DTYPE
        else:
            c.set_in(i, dtype, f"{c.op} takes one type for all its inputs:")
    c.outs[0] = dtype


def qact_shape(c: Call) -> None:
    """BMXNet's ``QActivation``: the data's shape, forward only."""
    _int(c, "act_bit", 1, 1, 32)
    _bool(c, "backward_only", False)
    _count(c)
    if c.ins[0] is not None:
        c.outs[0] = c.ins[0]


# ------------------------------------------------------------------------ WarpCTC
def warpctc_shape(c: Call) -> None:
    """The ``WarpCTC`` plug-in: the output is the data (time * batch, alphabet); the
    label (label_length * batch,), batch = rows / input_length."""
    label_length = _int(c, "label_length", 0)
    input_length = _int(c, "input_length", 0)
    _count(c)
    data = c.ins[0]
    if data is None:
        return
    if input_length == 0:
        c.fail("input_length=0: WarpCTC divides the data's rows by the input length; give "
               "input_length", attr="input_length")
    if len(data) >= 2:
        rows = data[0]
        batch = -1
        if rows >= 0:
            batch = abs(rows) // abs(input_length) * (1 if input_length > 0 else -1)
        first = label_length * batch if batch >= 0 else -1
        if batch >= 0 and first < 0:
            c.fail(f"label_length={label_length} and input_length={input_length} make a "
                   f"label of {first} values: give positive lengths", attr="label_length")
        label: MaybeShape = (first,) + (1,) * (len(data) - 2)
        c.set_in(1, label, "label_length and the data's rows make")
    c.outs[0] = data


def warpctc_type(c: Call) -> None:
    _count(c)
    c.ins[:] = ["float32", "int32"]
    c.outs[0] = "float32"


def _channelwise_type(c: Call) -> None:
    _delegate(c, "Convolution", _declared("Convolution", c.attrs), 1)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("MultiBoxPrior",), _equivalent("_contrib_MultiBoxPrior"),
            _equivalent("_contrib_MultiBoxPrior")),
    **table(FAMILY, ("MultiBoxTarget",), _equivalent("_contrib_MultiBoxTarget"),
            _equivalent("_contrib_MultiBoxTarget")),
    **table(FAMILY, ("MultiBoxDetection",), _equivalent("_contrib_MultiBoxDetection"),
            _equivalent("_contrib_MultiBoxDetection")),
    **table(FAMILY, ("ChannelwiseConvolution",), channelwise_conv, _channelwise_type),
    **table(FAMILY, ("QConvolution",), qconv_shape, _bmxnet_type),
    **table(FAMILY, ("QFullyConnected",), qfc_shape, _bmxnet_type),
    **table(FAMILY, ("QActivation",), qact_shape, _bmxnet_type),
    **table(FAMILY, ("WarpCTC",), warpctc_shape, warpctc_type),
}

__all__ = ["BINARY_WORD_BITS", "RULES"]
