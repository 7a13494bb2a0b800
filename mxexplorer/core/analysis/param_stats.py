"""Statistics of checkpoint tensors: min, max, mean, std, share of zeros, NaN and Inf
counts and a small histogram, read straight from the ``.params`` file (no MXNet).

Two passes over the values in chunks (the first for the range, sums and counts, the
second for the spread about the mean and the histogram), so a 100-million-value
weight needs no float64 copy of itself.  NaN and Inf are counted and left out of the
other figures: a broken checkpoint still shows what its finite values look like.
Must not import Qt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from mxexplorer.core.graph import params_file
from mxexplorer.core.runtime.errors import SymbolFileError

BINS = 24
CHUNK = 1 << 22


@dataclass(frozen=True)
class TensorStats:
    name: str
    shape: tuple[int, ...]
    dtype: str
    count: int
    minimum: float
    maximum: float
    mean: float
    std: float
    zeros: float            # share of values exactly 0
    nans: int
    infs: int
    histogram: tuple[int, ...]     # BINS counts of finite values from minimum to maximum

    @property
    def broken(self) -> bool:
        return self.nans > 0 or self.infs > 0

    def summary(self) -> str:
        words = (f"min {self.minimum:.4g}, max {self.maximum:.4g}, mean {self.mean:.4g}, "
                 f"std {self.std:.4g}, zeros {self.zeros:.1%}")
        if self.broken:
            words += f"; {self.nans:,} NaN, {self.infs:,} Inf"
        return words


def _chunks(flat: Any) -> Iterable[Any]:
    for start in range(0, flat.size, CHUNK):
        yield flat[start:start + CHUNK]


def tensor_stats(name: str, values: Any) -> TensorStats:
    """The statistics of one array (any numeric dtype)."""
    import numpy as np

    with np.errstate(all="ignore"):     # sums of huge values overflow to inf: said so
        return _tensor_stats(name, values, np.asarray(values).reshape(-1))


def _tensor_stats(name: str, values: Any, flat: Any) -> TensorStats:
    import numpy as np

    count, finite_n, nans, infs, zeros = flat.size, 0, 0, 0, 0
    lo, hi, total = math.inf, -math.inf, 0.0
    for part in _chunks(flat):
        part = part.astype(np.float64, copy=False)
        finite = np.isfinite(part)
        nans += int(np.isnan(part).sum())
        infs += int(np.isinf(part).sum())
        good = part[finite] if not finite.all() else part
        zeros += int(np.count_nonzero(good == 0))
        if good.size:
            finite_n += good.size
            lo, hi = min(lo, float(good.min())), max(hi, float(good.max()))
            total += float(good.sum())
    if not finite_n:
        return TensorStats(name, tuple(flat.shape), str(flat.dtype), count, math.nan,
                           math.nan, math.nan, math.nan, 0.0, nans, infs, (0,) * BINS)
    mean = total / finite_n
    spread = 0.0
    hist = np.zeros(BINS, dtype=np.int64)
    # bins over [lo, hi] by halves: hi - lo overflows for values near the float limits,
    # and lo + 1 == lo for a constant of 1e16 (np.histogram then raised IndexError)
    # (linspace of the halves is numpy's edges halved exactly, so the bins are numpy's)
    span = hi / 2 - lo / 2
    edges = np.linspace(lo / 2, hi / 2, BINS + 1)
    for part in _chunks(flat):
        part = part.astype(np.float64, copy=False)
        good = part[np.isfinite(part)]
        spread += float(((good - mean) ** 2).sum())
        if span > 0:
            where = np.searchsorted(edges, good / 2, side="right") - 1
            where = np.clip(where, 0, BINS - 1)
            hist += np.bincount(where, minlength=BINS)[:BINS]
        else:
            hist[0] += good.size
    return TensorStats(name, tuple(np.asarray(values).shape), str(flat.dtype), count, lo, hi,
                       mean, math.sqrt(spread / finite_n), zeros / count, nans, infs,
                       tuple(int(h) for h in hist))


def read_stats(path: str, names: Iterable[str]) -> dict[str, TensorStats | str]:
    """Statistics of the tensors called ``names`` (without ``arg:``/``aux:``) in the
    checkpoint at ``path``; a name gets a sentence instead when it cannot be read
    (absent, sparse, a dtype numpy lacks)."""
    index = {info.name: info for info in params_file.read_params_index(path)}
    out: dict[str, TensorStats | str] = {}
    for name in names:
        info = index.get(name)
        if info is None:
            out[name] = "not in the checkpoint"
            continue
        try:
            out[name] = tensor_stats(name, params_file.read_array(path, info))
        except SymbolFileError as exc:
            out[name] = exc.message
    return out
