"""What a benchmark's times say: the planned/original time ratio with its confidence
interval, a verdict that follows from the interval alone, and words for a noisy machine.

The interval is a t-interval on the logs of the per-round ratios: each round times the
original and the planned graph one after the other (:mod:`benchmark`), so whatever the
machine does to both within a round (another program, a frequency change) cancels in
their ratio.  Logs make a ratio's noise additive and the interval symmetric between
"slower" and "faster"; the t-interval is deterministic (no resampling seed) and right
for the few rounds a long graph affords (6-20), where a bootstrap's percentile interval
is too narrow (it held the true ratio in about 86 % of simulated 6-round benchmarks
instead of 95 %).  The noise checks follow pyperf's: a standard deviation above 10 % of
the mean is "unstable"; to those, a load average above the core count and an interval
wider than :data:`WIDE`.  Pure Python: no MXNet, no Qt.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

#: the confidence level of the interval
LEVEL = 0.95
#: an interval wider than this (in ratio: 0.10 is ten points) cannot tell a small price
WIDE = 0.10
#: a graph's times varying by more than this (standard deviation over mean) are
#: unsteady: pyperf's threshold for "the benchmark seems unstable"
UNSTABLE = 0.10


@dataclass(frozen=True)
class RatioStats:
    """The planned/original time ratio (geometric mean of the rounds) and its interval."""

    ratio: float
    low: float
    high: float
    n: int
    level: float = LEVEL

    def contains_one(self) -> bool:
        return self.low <= 1.0 <= self.high


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` degrees of freedom (Abramowitz & Stegun
    26.7.3-4: a finite series for whole ``df``)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2:
        total = 0.0
        if df > 1:
            term = total = c
            for k in range(3, df - 1, 2):
                term *= c * c * (k - 1) / k
                total += term
        return 2.0 / math.pi * (theta + s * total)
    term = total = 1.0
    for k in range(2, df - 1, 2):
        term *= c * c * (k - 1) / k
        total += term
    return s * total


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The ``t`` with P(|T| <= t) = ``level`` (two-sided), by bisection."""
    if df < 1:
        raise ValueError("t_quantile needs at least one degree of freedom")
    lo, hi = 0.0, 1e4
    for _ in range(100):
        mid = (lo + hi) / 2
        if _t_two_sided(mid, df) < level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def ratio_stats(pairs: Sequence[tuple[float, float]], level: float = LEVEL
                ) -> RatioStats | None:
    """The ratio second/first of paired times and its ``level`` interval; None with
    fewer than two pairs (no spread to judge by)."""
    logs = [math.log(b / a) for a, b in pairs if a > 0 and b > 0]
    n = len(logs)
    if n < 2:
        return None
    mean = statistics.fmean(logs)
    half = t_quantile(n - 1, level) * statistics.stdev(logs) / math.sqrt(n)
    return RatioStats(math.exp(mean), math.exp(mean - half), math.exp(mean + half), n,
                      level)


def spread(values: Sequence[float]) -> float:
    """Standard deviation over mean (0 for fewer than two values)."""
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else 0.0


def verdict(stats: RatioStats | None, labels: Sequence[str], rounds: int = 0) -> str:
    """One sentence on the second graph's training time against the first's, from the
    interval only: "no measurable difference" when it holds 1."""
    if len(labels) < 2:
        return ""
    first, second = labels[0], labels[1]
    if stats is None:
        return (f"Too few paired runs to tell a difference ({rounds}): give the benchmark "
                "more time.")
    runs = f"{stats.n} paired runs"
    if stats.contains_one():
        return (f"No measurable difference in training time: {second}/{first} "
                f"{stats.ratio:.2f} ({stats.level:.0%} interval {stats.low:.2f}-"
                f"{stats.high:.2f}, {runs}).")
    if stats.ratio > 1:
        word, a, b, change = "slower", stats.low - 1, stats.high - 1, stats.ratio - 1
    else:
        word, a, b, change = "faster", 1 - stats.high, 1 - stats.low, 1 - stats.ratio
    return (f"{second.capitalize()} is {_percent(change)}% {word} per training iteration "
            f"(interval {_percent(a)}-{_percent(b)} %, {runs}).")


def _percent(share: float) -> str:
    """A share as percent: one decimal below 10 % (a 0.4 % price is not "0 %")."""
    return f"{share * 100:.1f}" if abs(share * 100) < 9.95 else f"{share * 100:.0f}"


def noise_notes(stats: RatioStats | None, load: float | None, cores: int,
                spread: Mapping[str, float]) -> list[str]:
    """What made the times noisy, when anything did: a load average above the core
    count, an interval wider than :data:`WIDE`, a graph whose times vary by more than
    :data:`UNSTABLE`.  Said instead of guessing; the verdict still follows the interval."""
    busy = load is not None and load > cores
    wide = stats is not None and stats.high - stats.low > WIDE
    advice = "a quieter machine or a longer time budget tells smaller differences."
    notes = []
    if busy:
        head = f"The machine is busy (load {load:.1f} on {cores} cores)"
        if wide and stats is not None:
            notes.append(f"{head}: the interval is wide ({stats.low:.2f}-{stats.high:.2f}); "
                         + advice)
        elif stats is not None:
            notes.append(f"{head}; the interval accounts for it.")
        else:
            notes.append(f"{head}: its times vary more than a quiet machine's.")
        return notes
    if wide and stats is not None:
        notes.append(f"The interval is wide ({stats.low:.2f}-{stats.high:.2f}): the times "
                     "vary between runs; " + advice)
    for label, value in spread.items():
        if value > UNSTABLE:
            notes.append(f"The {label} graph's training times vary by {value:.0%} (standard "
                         "deviation over mean): the machine is unsteady; the interval "
                         "accounts for it.")
    return notes
