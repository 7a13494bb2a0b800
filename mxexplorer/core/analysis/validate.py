"""MXNet's word on a node's attributes: what the attribute editor asks before an edit
(MXNet's own parameter parser, through the C API: no graph is built)."""
from __future__ import annotations

import ctypes
from typing import Mapping

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.symbol_io import mxnet_message
from mxexplorer.core.runtime.mxnet_env import import_mxnet


def validate_op_attrs(op: str, attrs: Mapping[str, str]) -> str | None:
    """MXNet's reason for refusing these operator attributes, or None when valid.

    Hidden ``__key__`` attributes are not operator parameters and are not checked.
    """
    if op == "null" or not opinfo.is_registered(op):
        return None
    mx = import_mxnet()
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
