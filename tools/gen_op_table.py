"""Generate ``mxexplorer/core/data/mxnet_ops.json`` from the installed MXNet.

Run with MXNet 1.9.1 installed: ``python tools/gen_op_table.py``.  The table lets the
document answer, without importing MXNet, which op names MXNet knows, their canonical
name (aliases such as ``_Plus`` are written back as ``elemwise_add``), and how many
outputs an op has with its default attributes and what they are called, and each op's
parameters (name, MXNet's type text with its default) and whether it refuses attributes
it does not declare: what the engine (``mxexplorer.core.ops``) parses attributes by.  Attribute-
dependent counts (``num_outputs``, ``state_outputs``, ...) are rules in
``mxexplorer.core.graph.opinfo``; ``tests/core/graph/test_opinfo.py`` checks both against MXNet.
"""
from __future__ import annotations

import ctypes
import json
import logging
import pathlib
import re
import sys

import mxnet as mx
from mxnet.base import _LIB, c_str, check_call, py_str


def all_op_names() -> list[str]:
    size = ctypes.c_uint()
    plist = ctypes.POINTER(ctypes.c_char_p)()
    check_call(_LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist)))
    return sorted(py_str(plist[i]) for i in range(size.value))


def op_info(op: str) -> tuple[str, list[tuple[str, str]]] | None:
    """The registered name behind an alias (aliases share one Op handle) and the op's
    declared arguments as MXNet describes them: (name, type text), e.g.
    ``("kernel", "Shape(tuple), required")``; inputs have types such as
    ``NDArray-or-Symbol``."""
    handle = mx.base.OpHandle()
    try:
        check_call(_LIB.NNGetOpHandle(c_str(op), ctypes.byref(handle)))
        name = ctypes.c_char_p()
        desc = ctypes.c_char_p()
        num_args = ctypes.c_uint()
        arg_names = ctypes.POINTER(ctypes.c_char_p)()
        arg_types = ctypes.POINTER(ctypes.c_char_p)()
        arg_descs = ctypes.POINTER(ctypes.c_char_p)()
        ret_type = ctypes.c_char_p()
        check_call(_LIB.NNGetOpInfo(handle, ctypes.byref(name), ctypes.byref(desc),
                                    ctypes.byref(num_args), ctypes.byref(arg_names),
                                    ctypes.byref(arg_types), ctypes.byref(arg_descs),
                                    ctypes.byref(ret_type)))
    except mx.MXNetError:
        return None
    args = [(py_str(arg_names[i]), py_str(arg_types[i])) for i in range(num_args.value)]
    return py_str(name.value), args


#: argument types that are inputs, not parameters
INPUT_TYPES = ("NDArray-or-Symbol", "NDArray-or-Symbol[]", "NDArray", "Symbol",
               "Symbol or Symbol[]", "Symbol[]", "ptr", "")


def parameters(op: str, args: list[tuple[str, str]], listed: bool = False
               ) -> list[list[object]]:
    """The parameters among an op's arguments: [name, type text] (type text as MXNet
    gives it: kind, then required or the default), with a third item {"min": x, "max": y}
    for a number whose parser has bounds (found by asking MXNet for an extreme value:
    its refusal names the bound) or {"none_items": true} for a tuple whose items may be
    None.  ``listed``: the arguments are the parser's own listing (all parameters, some
    with an empty type text)."""
    out: list[list[object]] = []
    for name, text in args:
        kind = text.split(",")[0].strip()
        if kind in INPUT_TYPES and not listed:
            continue
        entry: list[object] = [name, text]
        if kind == "Shape(tuple)":
            # slice's begin/end/step are tuples of optional numbers: (None, 1)
            said = refusal(op, {name: "(None,)"})
            if said is None or f"Invalid Parameter format for {name}" not in said:
                entry.append({"none_items": True})
        if kind.replace(" or None", "").split(" (")[0] in ("int", "long", "float", "double"):
            bounds = {}
            probes = [("-1000000000", "min")]
            if not kind.startswith(("int", "long")):   # a count of 10**9 allocates
                probes.append(("1000000000", "max"))
            for value, key in probes:
                said = refusal(op, {name: value})
                found = re.search(r"should be (?:greater|less) equal to (\S+)", said or "")
                if found is not None:
                    bounds[key] = float(found.group(1).rstrip(","))
                ranged = re.search(r"exceed bound \[([^,\]]+),([^\]]+)\]", said or "")
                if ranged is not None:           # set_range: both bounds at once
                    bounds["min"], bounds["max"] = (float(ranged.group(1)),
                                                    float(ranged.group(2)))
            if bounds:
                entry.append(bounds)
        out.append(entry)
    return out


def refusal(op: str, attrs: dict[str, str]) -> str | None:
    """MXNet's message when it refuses to build ``op`` with ``attrs`` (and the required
    parameters of :data:`REQUIRED`), else None."""
    params = dict(REQUIRED.get(op, {}))
    params.update(attrs)
    keys = (ctypes.c_char_p * len(params))(*[c_str(k) for k in params])
    vals = (ctypes.c_char_p * len(params))(*[c_str(v) for v in params.values()])
    handle = mx.base.SymbolHandle()
    creator = mx.base.OpHandle()
    try:
        check_call(_LIB.NNGetOpHandle(c_str(op), ctypes.byref(creator)))
        check_call(_LIB.MXSymbolCreateAtomicSymbol(creator, len(params), keys, vals,
                                                   ctypes.byref(handle)))
    except mx.MXNetError as exc:
        return str(exc)
    _LIB.NNSymbolFree(handle)
    return None


def parser_fields(op: str) -> list[tuple[str, str]] | None:
    """The fields of the parser MXNet really runs for ``op``, read from its refusal of
    an undeclared attribute ("Possible Arguments:" then ``name : type text`` lines), or
    None for an op without a parser (it ignores such keys).  The declared argument list
    can differ (``_npi_concatenate`` declares ``dim``; its parser reads ``axis``)."""
    said = refusal(op, {"zz_not_a_parameter": "1"}) or ""
    if "Cannot find argument 'zz_not_a_parameter'" not in said:
        return None             # taken, or refused for another reason: no strict parser
    listing = said.split("Possible Arguments:", 1)[-1].split(", in operator")[0]
    fields = []
    for line in listing.splitlines():
        found = re.match(r"^(\w+) : (.+)$", line)
        if found is not None:
            fields.append((found.group(1), found.group(2).strip()))
    return fields


# Required parameters for the probe of ops that refuse to be built without them.
REQUIRED = {
    "Convolution": {"kernel": "(3, 3)", "num_filter": "4"},
    "Convolution_v1": {"kernel": "(3, 3)", "num_filter": "4"},
    "Deconvolution": {"kernel": "(3, 3)", "num_filter": "4"},
    "FullyConnected": {"num_hidden": "4"},
    "Pooling": {"kernel": "(2, 2)"},
    "Pooling_v1": {"kernel": "(2, 2)"},
    "Embedding": {"input_dim": "4", "output_dim": "4"},
    "_contrib_SparseEmbedding": {"input_dim": "4", "output_dim": "4"},
    "RNN": {"state_size": "4", "num_layers": "1", "mode": "lstm"},
    "SliceChannel": {"num_outputs": "2"},
    "Cast": {"dtype": "float32"},
    "_contrib_SyncBatchNorm": {"key": "k"},
    "ROIPooling": {"pooled_size": "(2, 2)", "spatial_scale": "1"},
    "GridGenerator": {"transform_type": "affine", "target_shape": "(2, 2)"},
    "SpatialTransformer": {"transform_type": "affine", "sampler_type": "bilinear",
                           "target_shape": "(2, 2)"},
    "_contrib_DeformablePSROIPooling": {"spatial_scale": "1", "output_dim": "2",
                                        "group_size": "1", "pooled_size": "2"},
    "_contrib_DeformableConvolution": {"kernel": "(3, 3)", "num_filter": "4"},
    "_contrib_ModulatedDeformableConvolution": {"kernel": "(3, 3)", "num_filter": "4"},
    "UpSampling": {"scale": "2", "sample_type": "nearest", "num_args": "1"},
    "Concat": {"num_args": "2"},
    "Reshape": {"shape": "(0, -1)"},
    "_contrib_ROIAlign": {"pooled_size": "(2, 2)", "spatial_scale": "1"},
    "_contrib_RROIAlign": {"pooled_size": "(2, 2)", "spatial_scale": "1"},
    "_random_randint": {"low": "0", "high": "5"},
    # the optimizer updates: their states (mean, var, mom ...) are mutated inputs,
    # auxiliary states to MXNet
    **{op: {"lr": "0.1"} for op in (
        "sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update",
        "nag_mom_update", "mp_nag_mom_update", "signsgd_update", "signum_update",
        "rmsprop_update", "rmspropalex_update", "adam_update", "ftml_update",
        "ftrl_update", "_sparse_adagrad_update")},
    "ftml_update": {"lr": "0.1", "t": "1"},
    "_adamw_update": {"lr": "0.1", "eta": "1"},
    "_mp_adamw_update": {"lr": "0.1", "eta": "1"},
    "lamb_update_phase1": {"t": "1", "wd": "0"},
    "mp_lamb_update_phase1": {"t": "1", "wd": "0"},
    "lamb_update_phase2": {"lr": "0.1"},
    "mp_lamb_update_phase2": {"lr": "0.1"},
    "_contrib_group_adagrad_update": {"lr": "0.1"},
    "_sample_unique_zipfian": {"range_max": "10", "shape": "(2, 3)"},
    "_npi_choice": {"a": "5", "size": "(2,)"},
    "_npi_multinomial": {"n": "3", "pvals": "(0.5, 0.5)"},
    "_contrib_PSROIPooling": {"spatial_scale": "1", "output_dim": "2", "pooled_size": "2"},
    "amp_multicast": {"num_outputs": "2"},
    "_split_v2": {"indices": "()", "sections": "2"},
    "_contrib_quantized_conv": {"kernel": "(3, 3)", "num_filter": "4"},
    "_contrib_quantized_fully_connected": {"num_hidden": "4"},
    "_contrib_quantized_pooling": {"kernel": "(2, 2)"},
    "_contrib_quantized_concat": {"num_args": "2"},
    "_contrib_quantized_act": {"act_type": "relu"},
    "Activation": {"act_type": "relu"},
    "LRN": {"nsize": "3"},
    "Crop": {"num_args": "1"},
    "_contrib_bipartite_matching": {"threshold": "0.5"},
    "ElementWiseSum": {"num_args": "2"},
    "Pad": {"mode": "constant", "pad_width": "(0, 0, 0, 0, 1, 1, 1, 1)"},
    "_contrib_quantized_embedding": {"input_dim": "4", "output_dim": "4"},
}


#: ops whose parser MXNet cannot describe (a hand-written parser: no "Possible
#: Arguments" listing, and the probe cannot build them without a subgraph): their fields
#: as MXNet's source declares them (src/operator/subgraph/mkldnn/); ``with_relu`` and
#: ``with_postsum_relu`` are older files' names MXNet renames before it parses
OVERRIDES: dict[str, dict[str, object]] = {
    "_sg_mkldnn_conv": {"strict": True, "params": [
        ["with_bn", "boolean, optional, default=0"],
        ["with_act", "boolean, optional, default=0"],
        ["with_sum", "boolean, optional, default=0"],
        ["with_postsum_act", "boolean, optional, default=0"],
        ["quantized", "boolean, optional, default=0"],
        ["min_calib_range", "float or None, optional, default=None"],
        ["max_calib_range", "float or None, optional, default=None"],
        ["with_relu", "boolean, optional, default=0"],
        ["with_postsum_relu", "boolean, optional, default=0"]]},
    "_sg_mkldnn_fully_connected": {"strict": True, "params": [
        ["quantized", "boolean, optional, default=0"],
        ["enable_float_output", "boolean, optional, default=0"],
        ["with_eltwise", "boolean, optional, default=0"],
        ["min_calib_range", "float or None, optional, default=None"],
        ["max_calib_range", "float or None, optional, default=None"],
        ["channel_wise_quantize", "boolean or None, optional, default=None"],
        ["with_relu", "boolean, optional, default=0"]]},
}


def outputs_with_defaults(op: str) -> dict[str, object] | None:
    handle = mx.base.SymbolHandle()
    params = REQUIRED.get(op, {})
    keys = (ctypes.c_char_p * len(params))(*[c_str(k) for k in params])
    vals = (ctypes.c_char_p * len(params))(*[c_str(v) for v in params.values()])
    try:
        creator = mx.base.OpHandle()
        check_call(_LIB.NNGetOpHandle(c_str(op), ctypes.byref(creator)))
        check_call(_LIB.MXSymbolCreateAtomicSymbol(creator, len(params), keys, vals,
                                                   ctypes.byref(handle)))
        sym = mx.sym.Symbol(handle)
        try:
            check_call(_LIB.NNSymbolCompose(handle, c_str("n"), 0, None, None))
        except mx.MXNetError:
            # ops without FListInputNames (the optimizer updates) take no automatic
            # variables: give one per declared single input, named as declared
            info = op_info(op)
            if info is None:
                raise
            inputs = [name for name, kind in info[1] if kind.startswith("NDArray-or-Symbol")
                      and not kind.startswith("NDArray-or-Symbol[]")]
            handle = mx.base.SymbolHandle()
            check_call(_LIB.MXSymbolCreateAtomicSymbol(creator, len(params), keys, vals,
                                                       ctypes.byref(handle)))
            sym = mx.sym.Symbol(handle)
            sym._compose(*[mx.sym.var(f"n_{name}") for name in inputs], name="n")
        names = sym.list_outputs()
        graph = json.loads(sym.tojson())
        rows = graph["node_row_ptr"]
        total = rows[-1] - rows[-2]
        aux = sym.list_auxiliary_states()
        node = graph["nodes"][-1]
        slots = []
        for src, _, _ in node["inputs"]:
            vname = graph["nodes"][src]["name"]
            slots.append(vname[2:] if vname.startswith("n_") else vname)
        aux_slots = [i for i, (src, _, _) in enumerate(node["inputs"])
                     if graph["nodes"][src]["name"] in aux]
    except mx.MXNetError:
        return None
    return {"total": total, "names": [n[2:] for n in names], "inputs": slots, "aux": aux_slots}


def probe(ops: list[str]) -> None:
    """Child mode: one JSON line per op on stdout (some ops abort natively when probed)."""
    for op in ops:
        sys.stdout.write(op + "\t")
        sys.stdout.flush()
        found = op_info(op)
        canon = found[0] if found else op
        entry: dict[str, object] = {"canonical": canon}
        if found is not None and canon == op:
            fields = parser_fields(op)
            entry["params"] = parameters(op, found[1] if fields is None else fields,
                                         listed=fields is not None)
            entry["strict"] = fields is not None
            entry.update(OVERRIDES.get(op, {}))
        outs = outputs_with_defaults(op)
        if outs is None and canon != op:
            outs = outputs_with_defaults(canon)
        if outs is not None:
            entry.update(outs)
        sys.stdout.write(json.dumps(entry) + "\n")
        sys.stdout.flush()


def main() -> int:
    import subprocess

    logging.disable(logging.CRITICAL)
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":
        probe(sys.argv[2:])
        return 0
    pending = all_op_names()
    table: dict[str, object] = {}
    while pending:
        proc = subprocess.run([sys.executable, __file__, "--probe", *pending],
                              capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            op, _, rest = line.partition("\t")
            table[op] = json.loads(rest) if rest else {"canonical": op, "probe": "crashed",
                                                       **OVERRIDES.get(op, {})}
        pending = [op for op in pending if op not in table]
    root = pathlib.Path(__file__).resolve().parents[1]
    out = root / "mxexplorer" / "core" / "data" / "mxnet_ops.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"mxnet_version": mx.__version__, "ops": table}
    out.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    print(f"{len(table)} ops written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
