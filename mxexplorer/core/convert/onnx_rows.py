"""Detection outputs compared as far as MXNet defines them: rows sorted by score,
whose order among scores equal within the check's tolerance is decided by rounding
below it.

``_contrib_MultiBoxDetection`` and ``_contrib_box_nms`` write their rows sorted by
score.  Two scores one or two ulps apart (a softmax of near-equal logits, as random
weights give, rounded otherwise by onnxruntime) come out in either order, and compared
element by element the swap reads as a difference as large as the rows themselves (a
class id of 16 against -1).  Here an output that holds such rows (the node's own, or
what ``slice_axis`` takes of its rows or columns, through ``MakeLoss``/``BlockGrad``)
may match MXNet's with rows moved, but only among places whose scores in MXNet's output
are equal within the check's tolerance, and only if every value of each moved row
agrees within it: a row sorted above a clearly higher score, a box the NMS kept on one
side and suppressed on the other, a row that fell out of a prefix (``slice_axis`` of
the first rows) still differ.  Must not import Qt or MXNet.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from mxexplorer.core.graph import opinfo

#: ops whose output rows are detections sorted by score: the attribute naming the
#: score's column, and its default (None: a fixed column)
SORTED_ROWS: dict[str, tuple[str | None, int]] = {
    "_contrib_MultiBoxDetection": (None, 1),
    "_contrib_box_nms": ("score_index", 1),
    "_contrib_box_non_maximum_suppression": ("score_index", 1),
}
#: ops that pass their first input through at inference
THROUGH = frozenset({"MakeLoss", "make_loss", "BlockGrad", "stop_gradient", "identity",
                     "_copy"})


@dataclass(frozen=True)
class Rows:
    """An output entry that holds rows of a detection node (``source``, its output
    entry): ``score`` is the score's column in the source's rows, ``slices`` the
    ``slice_axis`` (axis, begin, end) taken on the way."""
    source: str
    score: int
    slices: tuple[tuple[int, int, int | None], ...] = ()

    def layout(self, ndim: int) -> tuple[int | None, int] | None:
        """At an entry of ``ndim`` axes: how many of the source's first rows it keeps
        (None: all) and the source's column its first column is; None when a slice
        takes anything but the first rows or a run of columns."""
        rows: int | None = None
        first = 0
        for axis, begin, end in self.slices:
            axis = axis + ndim if axis < 0 else axis
            if begin < 0 or (end is not None and end < 0):
                return None
            if axis == ndim - 1:
                first += begin
            elif axis == ndim - 2 and begin == 0:
                if end is not None:
                    rows = end if rows is None else min(rows, end)
            else:
                return None
        return rows, first


def sorted_rows(graph_json: str) -> dict[str, Rows]:
    """Every output entry of the graph (``name_output``) that holds a detection node's
    rows sorted by score."""
    nodes = json.loads(graph_json).get("nodes", [])
    found: dict[int, Rows] = {}
    for k, node in enumerate(nodes):
        op, attrs = node.get("op"), opinfo.node_attrs(node)
        inputs = node.get("inputs", [])
        fed = found.get(inputs[0][0]) if inputs and inputs[0][1] == 0 else None
        if op in SORTED_ROWS:
            key, default = SORTED_ROWS[op]
            column = int(attrs.get(key, default)) if key else default
            found[k] = Rows(f"{node['name']}_output", column)
        elif fed is not None and op in THROUGH:
            found[k] = fed
        elif fed is not None and op == "slice_axis":
            end = attrs.get("end", "None")
            try:
                step = (int(attrs.get("axis", 0)), int(attrs.get("begin", 0)),
                        None if end in (None, "None") else int(end))
            except ValueError:
                continue
            found[k] = Rows(fed.source, fed.score, fed.slices + (step,))
    return {f"{nodes[k]['name']}_output": rows for k, rows in found.items()}


def _close(ref: Any, got: Any, allow: Any) -> Any:
    """Per row (last axis): every value within its column's ``allow``, or NaN on both
    sides."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        near = np.abs(got.astype("float64") - ref.astype("float64")) <= allow
    return (near | (np.isnan(ref) & np.isnan(got))).all(axis=-1)


def allowance(ref: Any, tolerance: float) -> float:
    """The largest difference the check lets an output have: ``tolerance``, or that
    share of its largest finite magnitude if more (the check's rule)."""
    import numpy as np

    finite = ref[np.isfinite(ref)] if ref.dtype.kind == "f" else ref
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    return max(tolerance, tolerance * scale)


def match(ref: Any, got: Any, score: Any, allow: Any, tie: float) -> Any | None:
    """A permutation of ``got``'s rows that makes them ``ref``'s: ``ref`` and ``got``
    are (B, N, K), ``score`` (B, N) is ``ref``'s scores, ``allow`` (K,) each column's
    allowance.  A row of ``ref`` at place i may come from place j of ``got`` only when
    ``ref``'s scores at i and j are within ``tie`` and every value of the two rows is
    within its allowance.  Returns ``perm`` (B, N), ``got[b, perm[b, i]]`` matching
    ``ref[b, i]``, or None when there is none."""
    import numpy as np

    batches, count = score.shape
    perm = np.tile(np.arange(count), (batches, 1))
    for b in range(batches):
        loose = np.nonzero(~_close(ref[b], got[b], allow))[0]     # the rows in place stay
        if not loose.size:
            continue
        scores = score[b, loose]
        options = []
        for row, mine in zip(loose, scores):
            with np.errstate(invalid="ignore"):
                js = loose[np.abs(scores - mine) <= tie]         # NaN ties nothing
            options.append(list(js[_close(ref[b, row][None], got[b, js], allow)]))
            if not options[-1]:
                return None
        owner = _assign(options)
        if owner is None:
            return None
        for place, k in owner.items():
            perm[b, loose[k]] = place
    return perm


def _assign(options: list[list[int]]) -> dict[int, int] | None:
    """A perfect matching of rows (index in ``options``) to places (Kuhn's augmenting
    paths, iteratively): {place: row}, or None."""
    owner: dict[int, int] = {}
    for start in range(len(options)):
        parent: dict[int, tuple[int, int | None]] = {}   # place -> (row, place it freed)
        stack: list[tuple[int, int | None]] = [(start, None)]
        seen: set[int] = set()
        end: int | None = None
        while stack and end is None:
            row, came = stack.pop()
            for place in options[row]:
                if place in seen:
                    continue
                seen.add(place)
                parent[place] = (row, came)
                if place not in owner:
                    end = place
                    break
                stack.append((owner[place], place))
        if end is None:
            return None
        place_: int | None = end
        while place_ is not None:                         # flip the path
            row, came = parent[place_]
            owner[place_] = row
            place_ = came
    return owner


def reorder(outputs: Sequence[tuple[Any, Any, int | None]], tolerance: float,
            perm: Any = None) -> tuple[Any, list[Any]] | None:
    """Outputs holding the same rows (their second-to-last axis) of one detection node:
    (MXNet's value, onnxruntime's, the score's column in it or None).  Their rows
    matched as :func:`match` allows (all the outputs' columns together; the scores from
    the first output that has them), or moved by ``perm`` (the source's, found before:
    its first rows must stay among the first).  Returns (perm, onnxruntime's values
    reordered), or None when the rows cannot match."""
    import numpy as np

    if not outputs or any(r.ndim < 2 or r.shape != g.shape for r, g, _ in outputs):
        return None
    lead = outputs[0][0].shape[:-1]
    if any(r.shape[:-1] != lead for r, _, _ in outputs):
        return None
    flat = [(r.reshape(-1, *r.shape[-2:]), g.reshape(-1, *g.shape[-2:]), s)
            for r, g, s in outputs]
    count = lead[-1]
    if perm is not None:
        perm = perm.reshape(-1, perm.shape[-1])
        if perm.shape[0] != flat[0][0].shape[0] or perm.shape[1] < count:
            return None
        perm = perm[:, :count]
        if (perm >= count).any():
            return None
    else:
        scored = [(r, s) for r, _, s in flat if s is not None]
        if not scored:
            return None
        ref = np.concatenate([r for r, _, _ in flat], axis=-1)
        got = np.concatenate([g for _, g, _ in flat], axis=-1)
        allow = np.concatenate([np.full(r.shape[-1], allowance(r, tolerance))
                                for r, _, _ in flat])
        score = scored[0][0][..., scored[0][1]].astype("float64")
        perm = match(ref, got, score, allow, allowance(score, tolerance))
        if perm is None:
            return None
    moved = [np.take_along_axis(g, perm[..., None], axis=1).reshape(r.shape)
             for (_, g, _), (r, _, _) in zip(flat, outputs)]
    return perm, moved


def grouping(rows: Rows, shape: tuple[int, ...]
             ) -> tuple[tuple[str, int], int | None] | None:
    """For an entry of ``shape`` holding ``rows``: the group of entries that hold the
    same rows (the source, and how many of its first rows: -1 for all) and the score's
    column in this one (None: it has not got it); None when its rows cannot be
    matched."""
    laid = rows.layout(len(shape)) if len(shape) >= 2 else None
    if laid is None:
        return None
    kept, first = laid
    at = rows.score - first
    return (rows.source, -1 if kept is None else kept), \
        (at if 0 <= at < shape[-1] else None)


def agrees(ref: Any, got: Any, tolerance: float) -> bool:
    """Every value within the output's allowance (the check's rule)."""
    import numpy as np

    return bool(np.all(_close(ref.reshape(-1, 1), got.reshape(-1, 1),
                              allowance(ref, tolerance))))


def reordered(pairs: Sequence[tuple[str, Any, Any]], rows: Mapping[str, Rows],
              tolerance: float) -> dict[str, tuple[Any, int]]:
    """The check's outputs (name, MXNet's value, onnxruntime's) that hold the same
    detection rows (``rows``, by name: the same node's, as many of its first rows),
    grouped; in a group where one differs, onnxruntime's rows matched to MXNet's as
    :func:`reorder` allows: {name: (onnxruntime's value reordered, rows moved)}.  A
    group whose rows cannot match is left out (and differs)."""
    import numpy as np

    groups: dict[tuple[str, int], list[tuple[str, Any, Any, int | None]]] = {}
    for name, ref, got in pairs:
        place = grouping(rows[name], ref.shape) if name in rows else None
        if place is not None:
            groups.setdefault(place[0], []).append((name, ref, got, place[1]))
    out: dict[str, tuple[Any, int]] = {}
    for group in groups.values():
        if all(agrees(ref, got, tolerance) for _, ref, got, _ in group):
            continue
        found = reorder([(ref, got, at) for _, ref, got, at in group], tolerance)
        if found is None:
            continue
        perm, values = found
        count = int((perm != np.arange(perm.shape[-1])).sum())
        out.update((name, (value, count)) for (name, *_), value in zip(group, values))
    return out


def entry_matched(rows: Rows | None, ref: Any, got: Any, tolerance: float,
                  perms: dict[str, Any]) -> Any | None:
    """The first-difference search's comparison of one entry that holds detection rows:
    onnxruntime's value with its rows matched to MXNet's, as its source's rows were
    (``perms``, filled when a source's own rows match) or by its own scores; None when
    they cannot match (or it holds none)."""
    place = grouping(rows, ref.shape) if rows is not None else None
    if rows is None or place is None:
        return None
    known = perms.get(rows.source) if rows.slices else None
    found = reorder([(ref, got, place[1])], tolerance, known)
    if found is None and known is not None and place[1] is not None:
        found = reorder([(ref, got, place[1])], tolerance)
    if found is None:
        return None
    if not rows.slices:
        perms[rows.source] = found[0]
    return found[1][0]
