"""Close the window at a random moment of open, infer, plan or benchmark: every exit is 0.

Each trial is a process of its own, as a user runs mxexplorer: ``mxexplorer FILE``
(the real ``cli.main`` and ``gui.app.run``, offscreen, with its own settings folder and
instance channel).  A timer in that process, seeded by the trial's number, waits for
the window, presses Infer shapes, Plan and/or Benchmark (the panels' own buttons) after
a random delay, and after another random delay closes the window (File > Close Window)
or quits (File > Quit), whatever is still running then: the file's reading, the
graph's layout, MXNet's import, an inference, a plan's child process, a benchmark.

Before the fix, a close a few seconds after opening ended now and then in
``QThread: Destroyed while thread '' is still running`` and SIGABRT (exit 134).

    python benchmarks/close_at_random.py [--trials 50] [--seed 1] [--jobs 2]

Prints one line per trial (seed, what ran, when it closed, how, the exit) and a
summary; exits 1 unless every trial exited 0 having printed its last line.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(HERE, "mxexplorer", "resources", "examples")
FILES = ("mlp-symbol.json", "resnet18_v1-symbol.json")
WORK = ("open", "infer", "plan", "bench", "plan+bench")
HOW = ("close", "quit")

#: the trial's process: the seed's choices, then the real command line's main().  The
#: timer is made before main() (the app exists already: ``run`` takes it).
CHILD = r'''
import os, random, sys, time
sys.path.insert(0, {root!r})
seed, path, work, how = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
start_after, close_after = float(sys.argv[5]), float(sys.argv[6])
from PySide6.QtCore import QTimer
from mxexplorer.gui.app import ensure_app
from mxexplorer.gui.window.windows import all_windows

app = ensure_app()
begun = time.monotonic()
state = {{"pressed": [], "started_at": None, "closed": False}}
BUTTONS = {{"infer": [("shape_form", "infer_button")],
           "plan": [("memory", "start_button")],
           "bench": [("memory", "bench_button")],
           "plan+bench": [("memory", "start_button"), ("memory", "bench_button")]}}

def step():
    windows = all_windows()
    if not windows:
        return
    window = windows[0]
    now = time.monotonic()
    if work == "open":
        if now - begun >= close_after:
            finish(window)
        return
    if state["started_at"] is None:
        if window.document is None or now - begun < start_after:
            return
        state["started_at"] = now
    todo = [b for b in BUTTONS[work] if b not in state["pressed"]]
    for owner, name in todo[:1]:
        panel = getattr(window, owner)
        button = getattr(panel, name, None) if panel is not None else None
        if button is not None and button.isEnabled():
            button.click()                       # the panel's own button
            state["pressed"].append((owner, name))
    if now - state["started_at"] >= close_after:
        finish(window)

def finish(window):
    timer.stop()
    print("closing", how, "pressed", ",".join(n for _, n in state["pressed"]) or "-",
          "at", round(time.monotonic() - begun, 2), flush=True)
    window.commands[how].trigger()

timer = QTimer(interval=10)
timer.timeout.connect(step)
timer.start()
from mxexplorer.cli import main
code = main([path])
print("ended", code, flush=True)
raise SystemExit(code)
'''


@dataclass(frozen=True)
class Trial:
    """One trial's choices, all from its seed."""

    seed: int
    file: str
    work: str
    how: str
    start_after: float        # s from the start until the work's first button
    close_after: float        # s from the first button (or the start) until the close

    @classmethod
    def from_seed(cls, seed: int) -> Trial:
        rng = random.Random(seed)
        return cls(seed, rng.choice(FILES), rng.choice(WORK), rng.choice(HOW),
                   round(rng.uniform(0.0, 1.5), 3), round(rng.uniform(0.0, 4.0), 3))

    def words(self) -> str:
        return (f"seed {self.seed:4d} {self.file:24s} {self.work:10s} start "
                f"{self.start_after:4.2f}s close {self.close_after:4.2f}s by {self.how}")


@dataclass(frozen=True)
class Outcome:
    trial: Trial
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def clean(self) -> bool:
        """Exit 0, the last line printed, and no word from Qt of a thread destroyed."""
        lines = self.stdout.splitlines()
        return (self.code == 0 and bool(lines) and lines[-1] == "ended 0"
                and "QThread" not in self.stderr)


def run_trial(trial: Trial, timeout: float = 600.0) -> Outcome:
    """The trial in a process of its own (its own settings and instance channel)."""
    with tempfile.TemporaryDirectory(prefix="mxexplorer-close-") as home:
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=home,
                   XDG_CACHE_HOME=home, MXEXPLORER_INSTANCE=os.path.join(home, "instance"),
                   PYTHONFAULTHANDLER="1")
        began = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, "-c", CHILD.format(root=HERE), str(trial.seed),
                 os.path.join(EXAMPLES, trial.file), trial.work, trial.how,
                 str(trial.start_after), str(trial.close_after)],
                capture_output=True, text=True, env=env, cwd=home, timeout=timeout)
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            code = -9
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = (exc.stderr.decode() if isinstance(exc.stderr, bytes)
                   else (exc.stderr or "")) + f"\n(timed out after {timeout:.0f} s)"
        return Outcome(trial, code, out, err, time.monotonic() - began)


def run_trials(seeds: list[int], jobs: int = 2, timeout: float = 600.0) -> list[Outcome]:
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: run_trial(Trial.from_seed(s), timeout), seeds))


def describe(outcome: Outcome) -> str:
    lines = outcome.stdout.splitlines()
    closing = next((ln for ln in lines if ln.startswith("closing")), "never closed")
    return (f"{outcome.trial.words()} | {closing} | exit {outcome.code} "
            f"({outcome.seconds:.1f}s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1, help="the first trial's seed")
    parser.add_argument("--jobs", type=int, default=2, help="trials at once")
    args = parser.parse_args()
    began = time.monotonic()
    outcomes = run_trials(list(range(args.seed, args.seed + args.trials)), args.jobs)
    for outcome in outcomes:
        print(describe(outcome), flush=True)
        if not outcome.clean:
            print("    stderr: " + "\n    ".join(outcome.stderr.strip().splitlines()[-8:]))
    clean = sum(o.clean for o in outcomes)
    codes: dict[int, int] = {}
    for o in outcomes:
        codes[o.code] = codes.get(o.code, 0) + 1
    print(f"{clean}/{len(outcomes)} exited 0 cleanly; exit codes {dict(sorted(codes.items()))}; "
          f"load {os.getloadavg()[0]:.1f}; {time.monotonic() - began:.0f} s")
    return 0 if clean == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
