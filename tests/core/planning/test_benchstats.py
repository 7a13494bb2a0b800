"""The benchmark's statistics on synthetic samples: the interval of the planned/original
time ratio, the verdict that follows from it alone, and the words for a noisy machine.
No MXNet, no timing: every sample here is made up and deterministic."""
from __future__ import annotations

import math
import random

import pytest

from mxexplorer.core.planning import benchstats


def test_t_quantiles_are_the_textbook_ones() -> None:
    # two-sided 95 %: 12.706 (1), 4.303 (2), 2.571 (5), 2.228 (10), 2.042 (30)
    for df, value in ((1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228),
                      (30, 2.042), (120, 1.980)):
        assert benchstats.t_quantile(df) == pytest.approx(value, abs=1e-3)
    assert benchstats.t_quantile(4, level=0.90) == pytest.approx(2.132, abs=1e-3)


def test_noise_free_pairs_give_a_tight_interval_and_a_plain_verdict() -> None:
    pairs = [(100.0, 120.0)] * 8                       # planned always 20 % slower
    stats = benchstats.ratio_stats(pairs)
    assert stats is not None
    assert stats.ratio == pytest.approx(1.2)
    assert stats.low == pytest.approx(1.2) and stats.high == pytest.approx(1.2)
    text = benchstats.verdict(stats, ("original", "planned"))
    assert text.startswith("Planned is 20% slower per training iteration (interval 20-20 %")
    faster = benchstats.ratio_stats([(100.0, 90.0)] * 8)
    assert benchstats.verdict(faster, ("original", "planned")).startswith(
        "Planned is 10% faster per training iteration (interval 10-10 %")
    small = benchstats.ratio_stats([(100.0, 100.4), (100.0, 100.6)] * 4)
    assert benchstats.verdict(small, ("original", "planned")).startswith(
        "Planned is 0.5% slower per training iteration (interval 0.4-0.6 %, 8 paired runs)")


def test_equal_distributions_give_an_interval_containing_one() -> None:
    # the same graph twice: each round's two times differ only by noise
    noise = [0.93, 1.07, 1.02, 0.98, 1.05, 0.95, 1.01, 0.99, 1.04, 0.96]
    pairs = [(100.0, 100.0 * f) for f in noise]
    stats = benchstats.ratio_stats(pairs)
    assert stats is not None and stats.low < 1 < stats.high
    assert benchstats.verdict(stats, ("original", "planned")).startswith(
        "No measurable difference in training time: planned/original 1.00 "
        "(95% interval 0.97-1.03, 10 paired runs)")


def test_the_interval_covers_the_true_ratio_as_often_as_it_says() -> None:
    """Seeded simulations of equal graphs under log-normal noise: the 95 % interval
    holds 1 in about 95 % of benchmarks (a percentile bootstrap at 6 rounds held it
    in ~86 %)."""
    rng = random.Random(27)
    held = 0
    for _ in range(2000):
        pairs = [(rng.lognormvariate(0, 0.1) * 50, rng.lognormvariate(0, 0.1) * 50)
                 for _ in range(6)]
        stats = benchstats.ratio_stats(pairs)
        assert stats is not None
        held += stats.low <= 1 <= stats.high
    assert 0.93 <= held / 2000 <= 0.97


def test_pairing_cancels_a_machine_that_gets_busier() -> None:
    """The defect of issue 27: timed one after the other, a graph that ran while the
    machine got busy looked 'slower'.  Paired by round, both see the same load."""
    load = [1.0 + 0.25 * k for k in range(12)]          # each round slower than the last
    pairs = [(40.0 * w, 40.0 * w * (1.01 if k % 2 else 0.99)) for k, w in enumerate(load)]
    stats = benchstats.ratio_stats(pairs)
    assert stats is not None and stats.low < 1 < stats.high
    # what the same times say when one graph's runs all came first
    first, second = [p[0] for p in pairs[:6]], [p[1] for p in pairs[6:]]
    assert max(first) < min(second)                     # ranges apart: "slower" before


def test_too_few_pairs_say_so() -> None:
    assert benchstats.ratio_stats([(10.0, 11.0)]) is None
    assert benchstats.verdict(None, ("original", "planned"), rounds=1) == (
        "Too few paired runs to tell a difference (1): give the benchmark more time.")
    assert benchstats.verdict(None, ("original",), rounds=5) == ""


def test_a_busy_machine_or_a_wide_interval_is_named() -> None:
    wide = benchstats.ratio_stats([(100.0, 100.0 * f) for f in (0.7, 1.4, 0.8, 1.3, 1.0)])
    assert wide is not None and wide.high - wide.low > benchstats.WIDE
    notes = benchstats.noise_notes(wide, load=6.2, cores=2, spread={"original": 0.04})
    assert notes[0] == ("The machine is busy (load 6.2 on 2 cores): the interval is wide "
                        f"({wide.low:.2f}-{wide.high:.2f}); a quieter machine or a longer "
                        "time budget tells smaller differences.")
    quiet = benchstats.ratio_stats([(100.0, 100.0 * f) for f in (0.99, 1.01) * 4])
    assert benchstats.noise_notes(quiet, load=0.3, cores=2, spread={"original": 0.01}) == []
    # pyperf's warning: a graph's times vary by more than 10 % of their mean
    notes = benchstats.noise_notes(quiet, load=0.3, cores=2,
                                   spread={"original": 0.02, "planned": 0.23})
    assert notes == ["The planned graph's training times vary by 23% (standard deviation "
                     "over mean): the machine is unsteady; the interval accounts for it."]
    # busy, but the interval tight all the same: said, without the advice
    notes = benchstats.noise_notes(quiet, load=3.1, cores=2, spread={})
    assert notes == ["The machine is busy (load 3.1 on 2 cores); the interval accounts "
                     "for it."]


def test_spread_is_the_relative_standard_deviation() -> None:
    assert benchstats.spread([10.0, 10.0, 10.0]) == 0.0
    assert benchstats.spread([9.0, 11.0]) == pytest.approx(math.sqrt(2) / 10)
    assert benchstats.spread([5.0]) == 0.0
