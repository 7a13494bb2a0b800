"""Colour by metric: per-node values (activation memory, MACs, parameters, measured
time), block sums, and a perceptual colour scale (viridis) with a legend's ticks.

The scale is logarithmic over three decades below the largest value: a network's
layers span orders of magnitude (a 1x1 projection beside a 7x7 stem), and on a linear
scale all but a few nodes would share the darkest colour.  Nodes without a value (not
counted, not measured) are drawn in a neutral grey.  Must not import Qt.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from mxexplorer.core.analysis.stats import GraphStats, human_bytes, human_count

#: metric key -> (what the control says, unit word)
METRICS: dict[str, tuple[str, str]] = {
    "family": ("Op family", ""),
    "memory": ("Activation memory", "bytes"),
    "macs": ("MACs", "MACs"),
    "params": ("Parameters", "parameters"),
    "time": ("Measured time", "ms"),
    "none": ("No colour", ""),
}
#: what the graph toolbar's control says (the legend gives the whole name)
SHORT = {"family": "Op family", "memory": "Memory", "macs": "MACs", "params": "Params",
         "time": "Time", "none": "No colour"}
VALUE_METRICS = ("memory", "macs", "params", "time")
NO_VALUE = "#c8c8c8"        # a node the metric says nothing about
DECADES = 3.0

# viridis, sampled at eleven even steps (matplotlib's perceptually uniform map)
_VIRIDIS = ("#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
            "#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725")


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def viridis(t: float) -> str:
    """The colour at ``t`` in [0, 1] (clamped), interpolated between samples."""
    t = min(1.0, max(0.0, t)) * (len(_VIRIDIS) - 1)
    k = min(int(t), len(_VIRIDIS) - 2)
    f = t - k
    a, b = _rgb(_VIRIDIS[k]), _rgb(_VIRIDIS[k + 1])
    r, g, bl = (round(x + (y - x) * f) for x, y in zip(a, b))
    return f"#{r:02x}{g:02x}{bl:02x}"


def text_colour(fill: str) -> str:
    """Black or white, whichever reads on ``fill``."""
    r, g, b = _rgb(fill)
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


def format_ms(value: float) -> str:
    """Milliseconds as people write them: 0.448 ms, 3.18 ms, 22.5 ms, 4,030 ms."""
    if value >= 100:
        return f"{value:,.0f} ms"
    return f"{value:.3g} ms"


def formatter(metric: str) -> Callable[[float], str]:
    if metric == "memory":
        return human_bytes
    if metric == "time":
        return format_ms
    return human_count


@dataclass(frozen=True)
class Scale:
    """Values of one metric mapped onto viridis, log scale from ``low`` to ``high``."""

    metric: str
    low: float
    high: float

    def position(self, value: float) -> float:
        if value <= 0 or self.high <= 0:
            return 0.0
        if self.high <= self.low:
            return 1.0
        return (math.log10(value) - math.log10(self.low)) / \
            (math.log10(self.high) - math.log10(self.low))

    def colour(self, value: float | None) -> str:
        if value is None or value <= 0:
            return NO_VALUE
        return viridis(self.position(value))

    def ticks(self, count: int = 4) -> list[tuple[float, str]]:
        """(position, label) for a legend: the ends and evenly spaced decades between."""
        fmt = formatter(self.metric)
        if self.high <= self.low:
            return [(1.0, fmt(self.high))]
        lo, hi = math.log10(self.low), math.log10(self.high)
        return [(k / (count - 1), fmt(10 ** (lo + (hi - lo) * k / (count - 1))))
                for k in range(count)]

    @property
    def title(self) -> str:
        return f"{METRICS[self.metric][0]} ({METRICS[self.metric][1]}, log scale)"


def scale_for(metric: str, values: Iterable[float]) -> Scale | None:
    """The scale over ``values`` (None when nothing is positive)."""
    positive = [v for v in values if v > 0]
    if not positive:
        return None
    high = max(positive)
    low = max(min(positive), high / 10 ** DECADES)
    return Scale(metric, low, high)


def node_values(metric: str, st: GraphStats | None,
                times: Mapping[int, float] | None = None) -> dict[int, float]:
    """Each operator's value of ``metric`` (time: ``times``, ms per iteration)."""
    if metric == "time":
        return dict(times or {})
    if st is None or metric not in VALUE_METRICS:
        return {}
    pick: dict[str, Callable[..., float]] = {
        "memory": lambda ns: float(ns.activation_bytes),
        "macs": lambda ns: float(ns.macs),
        "params": lambda ns: float(ns.params),
    }
    get = pick[metric]
    return {i: get(ns) for i, ns in st.per_node.items() if ns.counted or metric == "params"}


def fills(metric: str, drawn: Iterable[int], values: Mapping[int, float],
          members: Mapping[int, Iterable[int]] | None = None
          ) -> tuple[dict[int, str], Scale | None]:
    """The fill of every ``drawn`` node (a block: its ``members``' sum) for ``metric``,
    and the scale over what is drawn (None when nothing has a value: all grey)."""
    ids = list(drawn)
    summed = block_values(values, members or {})
    shown = {i: summed[i] for i in ids if i in summed}
    scale = scale_for(metric, shown.values())
    if scale is None:
        return {i: NO_VALUE for i in ids}, None
    return {i: scale.colour(shown.get(i)) for i in ids}, scale


def key(scale: Scale) -> list[tuple[str, str]]:
    """A picture's legend for ``scale``: (colour, words) rows, the title first."""
    return [("", scale.title)] + [(viridis(pos), text) for pos, text in scale.ticks()] + \
        [(NO_VALUE, "no value")]


def block_values(values: Mapping[int, float], members: Mapping[int, Iterable[int]]
                 ) -> dict[int, float]:
    """``values`` with every block (a drawn id standing for ``members``) given the sum
    of its members."""
    out = dict(values)
    for block, inside in members.items():
        got = [values[m] for m in inside if m in values]
        if got:
            out[block] = sum(got)
    return out
