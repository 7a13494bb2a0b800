"""The word on a node's attributes that the attribute editor asks before an edit: the
engine's parser (MXNet's declared fields and its parsing rules, no MXNet), then, where
MXNet is installed, MXNet's own parser through the C API (no graph is built)."""
from __future__ import annotations

import ctypes
from typing import Mapping

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.symbol_io import mxnet_message
from mxexplorer.core.ops import params as op_params
from mxexplorer.core.runtime.errors import MXNetMissingError
from mxexplorer.core.runtime.mxnet_env import import_mxnet


def validate_op_attrs(op: str, attrs: Mapping[str, str]) -> str | None:
    """Why these operator attributes are refused, or None when valid: the engine's
    parser first (it needs no MXNet), then MXNet's own where it is installed.

    Hidden ``__key__`` attributes are not operator parameters and are not checked.
    """
    if op == "null" or not opinfo.is_registered(op):
        return None
    try:
        op_params.parse(op, {k: v for k, v in attrs.items() if not op_params.is_hidden(k)})
    except op_params.ParamError as exc:
        return str(exc)
    try:
        mx = import_mxnet()
    except MXNetMissingError:
        return None
    params = {k: v for k, v in attrs.items() if not (k.startswith("__") and k.endswith("__"))}
    keys = (ctypes.c_char_p * len(params))(*[k.encode() for k in params])
    vals = (ctypes.c_char_p * len(params))(*[str(v).encode() for v in params.values()])
    handle = mx.base.SymbolHandle()
    creator = mx.base.OpHandle()
    try:
        mx.base.check_call(mx.base._LIB.NNGetOpHandle(mx.base.c_str(op), ctypes.byref(creator)))
        mx.base.check_call(mx.base._LIB.MXSymbolCreateAtomicSymbol(
            creator, len(params), keys, vals, ctypes.byref(handle)))
    except mx.base.MXNetError as exc:
        text = mxnet_message(exc)
        # "Invalid Parameter format for kernel expect Shape(tuple) but value='x', in
        # operator Convolution(...)": keep the part before the operator dump.
        return text.split(", in operator")[0].strip()
    mx.base._LIB.NNSymbolFree(handle)
    return None
