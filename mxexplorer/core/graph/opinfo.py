"""What the document knows about MXNet operators without importing MXNet.

Owns the operator table generated from MXNet 1.9.1 by ``tools/gen_op_table.py``
(registered names, canonical names of aliases, outputs and input slots with default
attributes) and the attribute-dependent rules on top of it (``num_outputs``,
``state_outputs``, ``output_mean_var`` ...; the fused, int8 and plug-in ops' own in
:mod:`~mxexplorer.core.graph.fused`).  Must not import MXNet or Qt.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Callable, Mapping

from mxexplorer.core.graph import fused
from mxexplorer.core.graph.model import Node
from mxexplorer.core.graph.model import as_str_attrs as as_str_attrs
from mxexplorer.core.graph.model import node_attrs as node_attrs
from mxexplorer.core.runtime.errors import SymbolFileError

#: Input slots whose variables are trained parameters.
PARAM_SLOTS = frozenset({"weight", "bias", "gamma", "beta", "parameters", "weights",
                         "alpha", "offset_weight", "offset_bias",
                         # the int8 ops' ranges of their quantized weights
                         "min_weight", "max_weight", "min_bias", "max_bias"})
#: Name endings that mark a parameter when the consuming op is unknown.
PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta", "_alpha", "_parameters",
                  "_i2h_weight", "_h2h_weight")
AUX_SUFFIXES = ("_moving_mean", "_moving_var", "_running_mean", "_running_var",
                "_moving_avg")
#: Hidden attribute keys MXNet stores as ``__key__`` (see the legacy upgrader).
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


@dataclass(frozen=True)
class OpSpec:
    """Static facts about one registered op (with default attributes)."""

    name: str
    canonical: str
    total: int | None
    names: tuple[str, ...] | None
    inputs: tuple[str, ...] | None
    aux: tuple[int, ...]


@functools.lru_cache(maxsize=1)
def _raw() -> dict[str, dict[str, Any]]:
    raw = json.loads(resources.files("mxexplorer.core").joinpath("data/mxnet_ops.json")
                     .read_text(encoding="utf-8"))
    ops: dict[str, dict[str, Any]] = raw["ops"]
    return ops


def raw_entry(op: str) -> dict[str, Any] | None:
    """The table's entry for ``op``'s canonical op (declared parameters included), or
    None for an op MXNet 1.9.1 does not register."""
    ops = _raw()
    found = ops.get(op)
    if found is None:
        return None
    canon: dict[str, Any] = ops.get(found.get("canonical", op), found)
    return canon


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, OpSpec]:
    table: dict[str, OpSpec] = {}
    for name, entry in _raw().items():
        table[name] = OpSpec(
            name=name,
            canonical=entry.get("canonical", name),
            total=entry.get("total"),
            names=tuple(entry["names"]) if "names" in entry else None,
            inputs=tuple(entry["inputs"]) if "inputs" in entry else None,
            aux=tuple(entry.get("aux", ())),
        )
    return table


def is_registered(op: str) -> bool:
    """Whether MXNet 1.9.1 knows ``op`` (by any alias)."""
    return op in _table()


def canonical_op(op: str) -> str:
    """The name MXNet writes back for ``op`` (``_Plus`` -> ``elemwise_add``)."""
    spec = _table().get(op)
    return spec.canonical if spec else op


def spec(op: str) -> OpSpec | None:
    table = _table()
    found = table.get(op)
    if found is None:
        return None
    return table.get(found.canonical, found)


def flag(attrs: Mapping[str, str], key: str, default: bool = False) -> bool:
    """Parse a boolean operator attribute the way dmlc does ("True", "1", "true")."""
    value = attrs.get(key)
    if value is None:
        return default
    return str(value).strip().lower() in ("true", "1")


def int_attr(attrs: Mapping[str, str], key: str, default: int = 0) -> int:
    value = attrs.get(key)
    if value is None:
        return default
    text = str(value).strip().rstrip("Ll")
    if not text.lstrip("+-").isascii() or len(text) > 40:
        return default                    # MXNet reads ASCII digits only; no 10**40
    try:
        return int(text)
    except ValueError:
        return default


def tuple_attr(attrs: Mapping[str, str], key: str) -> tuple[int | None, ...] | None:
    """Parse ``(3, 3)``, ``[3L, 3L]``, ``3`` or ``(None, 2)`` into a tuple."""
    value = attrs.get(key)
    if value is None:
        return None
    text = str(value).strip().strip("()[]")
    if not text:
        return ()
    out: list[int | None] = []
    for part in text.split(","):
        part = part.strip().rstrip("Ll")
        if not part:
            continue
        if part == "None":
            out.append(None)
            continue
        if not part.lstrip("+-").isascii() or len(part) > 40:
            return None                   # not a number MXNet reads
        try:
            out.append(int(part))
        except ValueError:
            return None
    return tuple(out)


#: what a node may declare; a file past these is refused before anything is made of
#: its counts (a SliceChannel declaring 10**11 outputs hung the loader)
MAX_OUTPUTS = 100_000
MAX_INPUTS = 1_000_000
_COUNT_KEYS = ("num_outputs", "sections", "num_args")


def check_declared(op: str, attrs: Mapping[str, str], name: str, n_inputs: int,
                   row_hint: int | None) -> None:
    """Refuse a node whose declared counts no real graph has (UserError naming it)."""
    for key in _COUNT_KEYS:
        value = int_attr(attrs, key, 0)
        limit = MAX_INPUTS if key == "num_args" else MAX_OUTPUTS
        if value > limit:
            what = "inputs" if key == "num_args" else "outputs"
            raise SymbolFileError(f"{op} {name!r} declares {value:,} {what} ({key}); "
                                  f"at most {limit:,} are supported")
    if row_hint is not None and not 0 <= row_hint <= MAX_OUTPUTS:
        raise SymbolFileError(f"node_row_ptr gives {op} {name!r} {row_hint:,} outputs; "
                              f"at most {MAX_OUTPUTS:,} are supported")
    if n_inputs > MAX_INPUTS:
        raise SymbolFileError(f"{op} {name!r} has {n_inputs:,} inputs; at most {MAX_INPUTS:,} "
                        "are supported")


def _numbered(n: int) -> list[str]:
    return ["output"] if n == 1 else [f"output{i}" for i in range(n)]


def _norm_mean_var(second: str) -> Callable[[Mapping[str, str]], tuple[int, list[str]]]:
    def rule(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
        names = ["output", "mean", second]
        return 3, names if flag(attrs, "output_mean_var") else names[:1]
    return rule


def _rnn(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    if not flag(attrs, "state_outputs"):
        return 1, ["output"]
    if str(attrs.get("mode", "")).strip() == "lstm":
        return 3, ["output", "state_output", "statecell_output"]
    return 2, ["output", "state_output"]


def _slice_channel(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    n = max(int_attr(attrs, "num_outputs", 1), 1)
    return n, [f"output{i}" for i in range(n)]


def _split_v2(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    sections = int_attr(attrs, "sections", 0)
    indices = tuple_attr(attrs, "indices") or ()
    n = sections if sections > 0 else max(len(indices), 1)
    return n, _numbered(n)


def _num_outputs(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    n = max(int_attr(attrs, "num_outputs", 1), 1)
    return n, _numbered(n)


def _topk(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    ret = str(attrs.get("ret_typ", "")).strip().strip("'\"")
    if ret == "both":
        return 2, ["output0", "output1"]
    if ret == "value":          # the indices stay, hidden: MXNet numbers the names
        return 2, ["output0"]
    return 1, ["output"]


def _leaky(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    if str(attrs.get("act_type", "")).strip() == "rrelu":
        return 2, ["output", "mask"]
    return 1, ["output"]


def _proposal(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    return 2, ["output", "score"] if flag(attrs, "output_score") else ["output"]


def _pooling(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    # The MKL-DNN build keeps a workspace output for max pooling where MKL-DNN pools: a
    # kernel of 1 to 3 dimensions and a channels-first layout (a global pool given no
    # kernel, or NHWC, has none)
    pool_type = str(attrs.get("pool_type", "max")).strip().strip("'\"")
    kernel = tuple_attr(attrs, "kernel") or ()
    layout = str(attrs.get("layout", "None")).strip().strip("'\"")
    mkldnn = 1 <= len(kernel) <= 3 and layout in ("None", "", "NCW", "NCHW", "NCDHW")
    return (2 if pool_type == "max" and mkldnn else 1), ["output"]


def _num_args(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    n = max(int_attr(attrs, "num_args", 1), 1)
    return n, _numbered(n)


def _unique(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    n = 1 + sum(flag(attrs, k) for k in ("return_index", "return_inverse", "return_counts"))
    return n, _numbered(n)


def _sampler(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    # a hidden second output (the noise MXNet keeps for the gradient); numbered names
    return 2, ["output0"]


def _counted(key: str, times: int = 1, less: int = 0, per: int = 1,
             mapping: bool = False) -> Callable[[Mapping[str, str]], tuple[int, list[str]]]:
    """``times x (attrs[key] - less) // per`` outputs (doubled with ``return_mapping``):
    the multi-tensor updates (one per weight) and DGL's samplers and subgraphs."""
    def rule(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
        n = max(times * (int_attr(attrs, key, 1) - less) // per, 1)
        n *= 2 if mapping and flag(attrs, "return_mapping") else 1
        return n, _numbered(n)
    return rule


def _multinomial(attrs: Mapping[str, str]) -> tuple[int, list[str]]:
    # the samples, and with get_prob their log-likelihoods (numbered names)
    if flag(attrs, "get_prob"):
        return 2, ["output0", "output1"]
    return 1, ["output"]


_RULES: dict[str, Callable[[Mapping[str, str]], tuple[int, list[str]]]] = {
    "_sample_multinomial": _multinomial,
    **{op: _counted("num_weights") for op in (
        "_multi_adamw_update", "_multi_mp_adamw_update", "multi_sgd_update",
        "multi_sgd_mom_update", "multi_mp_sgd_update", "multi_mp_sgd_mom_update",
        "preloaded_multi_sgd_update", "preloaded_multi_sgd_mom_update",
        "preloaded_multi_mp_sgd_update", "preloaded_multi_mp_sgd_mom_update")},
    "_multi_lamb_update": _counted("num_tensors"),
    "_multi_mp_lamb_update": _counted("num_tensors"),
    "_contrib_dgl_csr_neighbor_uniform_sample": _counted("num_args", 3, 1),
    "_contrib_dgl_csr_neighbor_non_uniform_sample": _counted("num_args", 4, 2),
    "_contrib_dgl_subgraph": _counted("num_args", less=1, mapping=True),
    "_contrib_dgl_graph_compact": _counted("num_args", per=2, mapping=True),
    "_sample_unique_zipfian": lambda attrs: (2, ["output0", "output1"]),
    "_np_atleast_1d": _num_args,
    "_np_atleast_2d": _num_args,
    "_np_atleast_3d": _num_args,
    "_npi_hsplit": _split_v2,
    "_npi_dsplit": _split_v2,
    "_npi_unique": _unique,
    "_npi_normal": _sampler,
    "_npi_normal_n": _sampler,
    "_npi_logistic": _sampler,
    "_npi_gumbel": _sampler,
    "Pooling": _pooling,
    "BatchNorm": _norm_mean_var("var"),
    "BatchNorm_v1": _norm_mean_var("var"),
    "CuDNNBatchNorm": _norm_mean_var("var"),
    "_contrib_SyncBatchNorm": _norm_mean_var("var"),
    # four outputs (a hidden workspace beside BatchNorm's three)
    "_contrib_BatchNormWithReLU": lambda attrs: (4, _norm_mean_var("var")(attrs)[1]),
    "LayerNorm": _norm_mean_var("std"),
    "GroupNorm": _norm_mean_var("std"),
    "RNN": _rnn,
    "SliceChannel": _slice_channel,
    "_split_v2": _split_v2,
    "amp_multicast": _num_outputs,
    "_foreach": _num_outputs,
    "_while_loop": _num_outputs,
    "_cond": _num_outputs,
    "topk": _topk,
    "LeakyReLU": _leaky,
    "_contrib_Proposal": _proposal,
    "_contrib_MultiProposal": _proposal,
}


def outputs(op: str, attrs: Mapping[str, str], total_hint: int | None = None
            ) -> tuple[int, list[str]]:
    """Total output count and the names of the *visible* outputs of a node.

    Parameters
    ----------
    op : the op name as written in the file (aliases are resolved).
    attrs : the node's attributes.
    total_hint : the output count written in the file (``node_row_ptr``), used for
        ops the table does not describe (custom and unknown plug-in ops; a known
        plug-in's count where the file says otherwise).
    """
    canon = canonical_op(op)
    special = fused.outputs(canon, attrs)
    if special is not None and not (canon in fused.PLUGIN_OPS and total_hint
                                    and total_hint > 0 and total_hint != special[0]):
        return special
    rule = _RULES.get(canon)
    if rule is not None:
        return rule(attrs)
    found = spec(op)
    if found is not None and found.total is not None and found.names is not None:
        return found.total, list(found.names)
    n = total_hint if total_hint and total_hint > 0 else 1
    return n, _numbered(n)


@functools.lru_cache(maxsize=None)
def static_output_count(op: str) -> int | None:
    """The output count of an op whose count no attribute changes (a registered op with
    no rule above, not fused, not a plug-in), else None: what a 261,000-node graph asks
    once per op instead of once per node."""
    canon = canonical_op(op)
    if canon in _RULES or fused.outputs(canon, {}) is not None:
        return None
    found = spec(op)
    return found.total if found is not None and found.names is not None else None


def input_slots(op: str, attrs: Mapping[str, str], n_inputs: int,
                subgraphs: Any = None) -> list[str]:
    """Names of a node's input slots (``data``, ``weight`` ...), best effort: MXNet's
    ``list_arguments`` names.  ``subgraphs``: a fused node's ``subgraphs`` field."""
    return _padded(_declared_slots(op, attrs, subgraphs, n_inputs), n_inputs)


def input_roles(op: str, attrs: Mapping[str, str], n_inputs: int,
                subgraphs: Any = None) -> list[str]:
    """What each input is to the node (``data``, ``weight``, ``moving_mean`` ...): its
    slot name, but for a fused op the slot it feeds in the graph the op fuses (MXNet names
    a fused fully connected layer's inputs by the fused graph's variables)."""
    roles = fused.input_roles(canonical_op(op), attrs, subgraphs, _inner_slots, n_inputs)
    if roles is None:
        return input_slots(op, attrs, n_inputs, subgraphs)
    return _padded(roles, n_inputs)


def _inner_slots(node: Node) -> list[str]:
    return input_slots(node.op, node.attrs, len(node.inputs))


def _padded(names: list[str], n_inputs: int) -> list[str]:
    while len(names) < n_inputs:
        names.append(f"arg{len(names)}")
    return names[:n_inputs]


def _declared_slots(op: str, attrs: Mapping[str, str], subgraphs: Any = None,
                    n_inputs: int | None = None) -> list[str]:
    canon = canonical_op(op)
    special = fused.input_slots(canon, attrs, subgraphs, n_inputs)
    if special is not None:
        return special
    found = spec(op)
    names = list(found.inputs) if found is not None and found.inputs else []
    if canon in ("Convolution", "Deconvolution", "FullyConnected", "Convolution_v1",
                 "_contrib_DeformableConvolution") and flag(attrs, "no_bias"):
        names = [n for n in names if n != "bias"]
    if canon == "Deconvolution" and not flag(attrs, "no_bias", True) and len(names) == 2:
        names.append("bias")
    if canon == "LeakyReLU" and str(attrs.get("act_type", "")).strip() == "prelu":
        names = ["data", "gamma"]
    if canon == "RNN" and str(attrs.get("mode", "")).strip() != "lstm":
        names = ["data", "parameters", "state"]
    if canon in ("im2col", "col2im"):        # the table's probe gives no names
        names = ["data"]
    # inputs that come with a flag (the table holds the default attributes' names)
    if canon in ("RNN", "SequenceMask", "SequenceLast", "SequenceReverse") and \
            flag(attrs, "use_sequence_length"):
        names.append("sequence_length")
    if canon in ("softmax", "log_softmax", "softmin") and flag(attrs, "use_length"):
        names.append("length")
    if canon == "CTCLoss":
        names += [n for n, key in (("data_lengths", "use_data_lengths"),
                                   ("label_lengths", "use_label_lengths"))
                  if flag(attrs, key)]
    if names and names[0] == "arg0":
        names = []
    return names


def aux_slots(op: str, subgraphs: Any = None) -> tuple[int, ...]:
    """Input positions that are auxiliary states (``list_auxiliary_states``); a fused
    node's follow the graph it fuses (its ``subgraphs`` field)."""
    special = fused.aux_slots(canonical_op(op), subgraphs, _table_aux)
    return special if special is not None else _table_aux(op)


def _table_aux(op: str) -> tuple[int, ...]:
    found = spec(op)
    return found.aux if found is not None else ()


def expected_inputs(op: str, attrs: Mapping[str, str], subgraphs: Any = None
                    ) -> list[str] | None:
    """Input slot names MXNet expects for an op whose inputs are fixed, or None."""
    canon = canonical_op(op)
    if canon in fused.FUSED_OPS:
        return _declared_slots(op, attrs, subgraphs)
    found = spec(op)
    if found is None or not found.inputs or found.inputs[0] == "arg0":
        return None
    return _declared_slots(op, attrs, subgraphs)
