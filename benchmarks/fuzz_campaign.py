"""A long campaign of hostile files: structure-aware mutations of real symbol files
(tests/mutate.py) run through ``mxexplorer info``, ``infer`` and ``render`` in fresh
processes, and a table of what came of them.

Outcomes: ``ok`` (exit 0), ``refused`` (exit 2, one line ``mxexplorer: error: ...``),
and the ones that must never happen: ``internal`` (exit 1), ``crash`` (a signal),
``hang`` (over the time limit), ``unclear`` (exit 2 in more than one line, or a
traceback).

Run: ``python benchmarks/fuzz_campaign.py [CASES_PER_COMMAND] [WORKERS]`` (300, 2).
"""
from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
TIME_LIMIT = 120.0
BAD = ("internal", "crash", "hang", "unclear")


def cases(count: int) -> list[tuple[str, str, str]]:
    """(file text, command, --shape) triples drawn by hypothesis."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.mutate import mutated_files, shape_args

    out: list[tuple[str, str, str]] = []

    @settings(max_examples=count * 3, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(text=mutated_files(), command=st.sampled_from(["info", "infer", "render"]),
           shape=shape_args())
    def collect(text: str, command: str, shape: str) -> None:
        out.append((text, command, shape))

    collect()
    by_command: dict[str, list[tuple[str, str, str]]] = collections.defaultdict(list)
    for case in out:
        by_command[case[1]].append(case)
    return [c for cmd in ("info", "infer", "render") for c in by_command[cmd][:count]]


def run_case(case: tuple[str, str, str], folder: str, k: int) -> tuple[str, str, float, str]:
    text, command, shape = case
    path = os.path.join(folder, f"case{k}-symbol.json")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(text)
    args = [sys.executable, "-m", "mxexplorer", command, path]
    if command == "infer":
        args += ["--shape", shape]
    if command == "render":
        args += ["-o", os.path.join(folder, f"case{k}.svg"), "--time-limit", "60"]
    started = time.monotonic()
    try:
        proc = subprocess.run(args, capture_output=True, text=True, errors="replace",
                              cwd=ROOT, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return command, "hang", TIME_LIMIT, path
    seconds = time.monotonic() - started
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("[")]
    if proc.returncode == 0:
        outcome = "ok"
    elif proc.returncode == 2:
        one = len(lines) == 1 and lines[0].startswith("mxexplorer: error: ") and \
            "Traceback" not in lines[0] and "internal error" not in lines[0]
        outcome = "refused" if one else "unclear"
    elif proc.returncode == 1:
        outcome = "internal"
    else:
        outcome = "crash"
    note = lines[-1][:160] if lines and outcome in BAD else ""
    return command, outcome, seconds, note or (path if outcome in BAD else "")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    todo = cases(count)
    folder = tempfile.mkdtemp(prefix="mxexplorer-fuzz-")
    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda kc: run_case(kc[1], folder, kc[0]), enumerate(todo)))
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    slowest: dict[str, float] = collections.defaultdict(float)
    for command, outcome, seconds, _ in results:
        table[command][outcome] += 1
        slowest[command] = max(slowest[command], seconds)
    columns = ["ok", "refused", *BAD]
    print(f"{len(results)} cases in {time.monotonic() - started:.0f} s ({workers} at a time)")
    print(f"{'command':8} {'cases':>6} " + " ".join(f"{c:>9}" for c in columns)
          + f" {'slowest s':>10}")
    for command in ("info", "infer", "render"):
        row = table[command]
        print(f"{command:8} {sum(row.values()):6} " + " ".join(f"{row[c]:9}" for c in columns)
              + f" {slowest[command]:10.1f}")
    for command, outcome, _, note in results:
        if outcome in BAD:
            print(f"  {command} {outcome}: {note}")


if __name__ == "__main__":
    main()
