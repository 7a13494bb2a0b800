"""dmlc's memonger search, written here from its published algorithm, as the yardstick
``mxexplorer.memonger`` must meet (issue 28): the same tagging walk, the same threshold
sequence (three guesses from the plans' sizes, then a grid of ``ntrial``), each plan
costed by MXNet's bind report on the CPU, the cheapest plan kept (the unplanned graph is
not among its candidates, as in memonger)."""
from __future__ import annotations

import math
import re

PARAM_SUFFIXES = ("weight", "bias", "beta", "gamma")


def _is_param(name):
    return name != "data" and name.endswith(PARAM_SUFFIXES)


def tag(sym, threshold_mb, **shapes):
    """memonger's ``make_mirror_plan``: (tagged copy, max_size, save_size)."""
    sym = sym.__copy__()
    internals = sym.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shapes)
    limit = threshold_mb << 20
    local = saved = largest = 0
    last_stage, decision = "", ""
    for k, (name, shape) in enumerate(zip(internals.list_outputs(), out_shapes)):
        if _is_param(name):
            continue
        node = internals[k]
        size = 4 * math.prod(shape)
        local += size
        node._set_attr(force_mirroring="True")
        stage = node.attr("mirror_stage")
        if stage is None:
            continue
        if stage == "True" or stage != last_stage:
            decision = "True"
            if local > limit:
                saved += size
                largest = max(largest, local)
                local = 0
                decision = "False"
                node._set_attr(force_mirroring="False")
            last_stage = stage
        elif decision == "False":
            saved += size
            node._set_attr(force_mirroring="False")
    return sym, largest, saved


def cost(sym, **shapes):
    import mxnet as mx

    exe = sym.simple_bind(ctx=mx.cpu(), grad_req="write", **shapes)
    return int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))


def search(sym, ntrial=6, **shapes):
    """memonger's ``search_plan``: (best cost in MB, its threshold)."""
    tried = []
    threshold, lowest = 0, None
    for _ in range(3):
        sym, largest, saved = tag(sym, threshold, **shapes)
        tried.append((cost(sym, **shapes), threshold))
        largest_mb, saved_mb = largest >> 20, saved >> 20
        lowest = largest_mb if lowest is None else min(lowest, largest_mb)
        threshold = int(math.sqrt(saved_mb * largest_mb / 2))
    step = int((threshold * math.sqrt(2) - lowest) / ntrial)
    threshold = lowest + step
    if step > 0:
        for _ in range(ntrial):
            sym, _, _ = tag(sym, threshold, **shapes)
            tried.append((cost(sym, **shapes), threshold))
            threshold += step
    return min(tried)
