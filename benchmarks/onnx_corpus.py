"""ONNX export of real symbol files, checked against MXNet: one line per file.

For every symbol file in the folders given (default: ``benchmarks/corpus``, and
``../shared/corpus`` when it is beside the clone) that has input shapes in a
``shapes.json`` table (``benchmarks/corpus/shapes.json``, or one in the folder):

1. MXNet loads it and infers its shapes (a fresh process; files it cannot are listed
   apart and not counted);
2. ``mxexplorer onnx FILE --shape ... --check --json`` runs as a user types it, with
   random trained-looking weights (the file copied alone to a temporary folder) and,
   where a ``prefix-NNNN.params`` is beside the file, again with it.

Each run ends as: ``agree`` (within 1e-4 of the output's largest value; detection rows,
sorted by score, may come in another order where their scores are equal within that
tolerance: rounding below it decides that order; said and counted), ``differ``
(the verdict, naming the first node that differs), ``rounding`` (it differs, but the
first differing node agrees when fed MXNet's own inputs: rounding far inside the
tolerance amplified there: near-equal scores reordered at a sort or an NMS, an exp of
large values; not counted as agreeing),
``refused`` (the ops named) or ``error`` (the one-line message).  The goal of issue
26: at least 90 % of the files MXNet loads and infers export and agree.

Run: ``python benchmarks/onnx_corpus.py [DIR ...] [--jobs 2] [--markdown]``.
``--mxexplorer PATH`` runs another checkout's package (to measure "before");
``--via mx2onnx`` exports with MXNet's converters instead of ours (the default);
``--json OUT`` keeps the rows, and ``--against OTHER.json`` prints, file by file, where
this run and another (say ours and mx2onnx's) end differently, and both tables.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PARAMS = re.compile(r"^(.*)-symbol\.json$")

PROBE = """
import json, sys, warnings
warnings.simplefilter("ignore")
import mxnet as mx
sym = mx.sym.load(sys.argv[1])
shapes = json.loads(sys.argv[2])
sym.infer_shape(**{k: tuple(v) for k, v in shapes.items()})
"""


@dataclass
class Row:
    file: str
    folder: str
    loads: str = ""                   # "yes" or why not
    runs: dict[str, tuple[str, str]] = field(default_factory=dict)   # weights -> outcome, detail


def shape_tables(folders: list[str]) -> dict[str, list[tuple[str, list[int]]]]:
    table: dict[str, list[tuple[str, list[int]]]] = {}
    for path in [os.path.join(HERE, "corpus", "shapes.json")] + \
            [os.path.join(d, "shapes.json") for d in folders]:
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                table.update({k: [(p, s) for p, s in v] for k, v in json.load(fh).items()})
    return table


def input_shapes(path: str, spec: list[tuple[str, list[int]]]) -> dict[str, list[int]]:
    """The spec's regexes matched against the file's variables that are not parameters."""
    with open(path, encoding="utf-8") as fh:
        graph = json.load(fh)
    names = [n["name"] for n in graph["nodes"] if n.get("op") == "null"]
    out = {}
    for name in names:
        for pattern, shape in spec:
            if re.match(pattern, name):
                out[name] = list(shape)
                break
    return out


def probe(python: str, path: str, shapes: dict[str, list[int]], env: dict[str, str],
          timeout: float) -> str:
    try:
        done = subprocess.run([python, "-c", PROBE, path, json.dumps(shapes)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode == 0:
        return "yes"
    lines = [ln for ln in done.stderr.splitlines() if "Error" in ln] or \
        done.stderr.splitlines() or ["?"]
    return lines[-1].strip()[:160]


#: the converters asked for (None: the checkout's default)
VIA: list[str] = []


def export(python: str, path: str, shapes: dict[str, list[int]], env: dict[str, str],
           timeout: float, workdir: str) -> tuple[str, str]:
    out = os.path.join(workdir, "out.onnx")
    cmd = [python, "-m", "mxexplorer", "onnx", path, "-o", out, "--check", "--json"] + VIA
    for name, shape in shapes.items():
        cmd += ["--shape", f"{name}={','.join(str(d) for d in shape)}"]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              cwd=workdir)
    except subprocess.TimeoutExpired:
        return "error", f"no answer in {timeout:.0f} s"
    try:
        report = json.loads(done.stdout) if done.stdout.strip() else None
    except json.JSONDecodeError:
        report = None
    if isinstance(report, dict) and "unsupported" in report:
        ops = sorted({n["op"] for n in report["unsupported"]})
        return "refused", ", ".join(ops)
    if isinstance(report, dict) and report.get("check"):
        check = report["check"]
        first = check.get("first_difference") or {}
        outcome = "agree" if check["agree"] else \
            "rounding" if first.get("alone_agrees") else "differ"
        return outcome, check["verdict"]
    tail = [ln for ln in done.stderr.splitlines() if ln.strip()]
    message = tail[-1].strip() if tail else f"exit {done.returncode}"
    if done.returncode not in (0, 1, 2) or "Traceback" in done.stderr:
        return "error", f"crash (exit {done.returncode}): {message[:200]}"
    return "error", message[:240]


def run_file(row: Row, path: str, spec: list[tuple[str, list[int]]], python: str,
             env: dict[str, str], timeout: float) -> Row:
    try:
        shapes = input_shapes(path, spec)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        row.loads = f"not a symbol file: {type(exc).__name__}: {exc}"
        return row
    row.loads = probe(python, path, shapes, env, timeout)
    if row.loads != "yes":
        return row
    with tempfile.TemporaryDirectory(prefix="onnx-corpus-") as tmp:
        alone = os.path.join(tmp, "alone")
        os.mkdir(alone)
        copy = os.path.join(alone, os.path.basename(path))
        shutil.copyfile(path, copy)
        row.runs["random"] = export(python, copy, shapes, env, timeout, alone)
        match = PARAMS.match(os.path.basename(path))
        folder = os.path.dirname(path)
        if match and any(re.fullmatch(re.escape(match.group(1)) + r"-\d{4}\.params", f)
                         for f in os.listdir(folder)):
            row.runs["params"] = export(python, path, shapes, env, timeout, tmp)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--only", help="a regex on file names")
    parser.add_argument("--skip", help="a regex on file names to leave out")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--json", metavar="OUT", help="write every row as JSON")
    parser.add_argument("--mxexplorer", metavar="CHECKOUT", default=ROOT,
                        help="the checkout whose package runs (default: this one)")
    parser.add_argument("--via", choices=("mxexplorer", "mx2onnx"),
                        help="whose converters (default: the checkout's default)")
    parser.add_argument("--against", metavar="OTHER.json",
                        help="print where another run's rows end differently")
    args = parser.parse_args()
    if args.via:
        VIA[:] = ["--via", args.via]
    folders = args.folders or [os.path.join(HERE, "corpus")] + [
        d for d in [os.path.join(os.path.dirname(ROOT), "shared", "corpus")]
        if os.path.isdir(d)]
    table = shape_tables(folders)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.mxexplorer),
               PYTHONWARNINGS="ignore")
    jobs, seen = [], set()
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if name in seen or name not in table or (args.only and
                                                     not re.search(args.only, name)) or \
                    (args.skip and re.search(args.skip, name)):
                continue
            seen.add(name)
            jobs.append((Row(name, folder), os.path.abspath(os.path.join(folder, name)),
                         table[name]))
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = []
        for row in pool.map(lambda j: run_file(*j, sys.executable, env, args.timeout), jobs):
            rows.append(row)
            for weights, (outcome, detail) in row.runs.items() or [("-", ("not loaded",
                                                                          row.loads))]:
                print(f"{outcome:<10} {weights:<7} {row.file}: {detail}", flush=True)
    summarize(rows, args.markdown)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump([{"file": r.file, "folder": r.folder, "loads": r.loads,
                        "runs": r.runs} for r in rows], fh, indent=1)
    if args.against:
        against(rows, args.against)
    return 0


def against(rows: list[Row], other_path: str) -> None:
    """Both runs' counts side by side, then every file whose runs end differently."""
    with open(other_path, encoding="utf-8") as fh:
        other = {r["file"]: r for r in json.load(fh)}
    loaded = [r for r in rows if r.loads == "yes"]
    mine: collections.Counter[str] = collections.Counter()
    theirs: collections.Counter[str] = collections.Counter()
    for r in loaded:
        for weights, (outcome, _) in r.runs.items():
            mine[outcome] += 1
            got = other.get(r.file, {}).get("runs", {}).get(weights)
            theirs[got[0] if got else "missing"] += 1
    print(f"\n| runs of {len(loaded)} files | this run | {os.path.basename(other_path)} |")
    print("|---|---|---|")
    for outcome in OUTCOMES + ("missing",):
        if mine[outcome] or theirs[outcome]:
            print(f"| {outcome} | {mine[outcome]} | {theirs[outcome]} |")
    print("\n| file | weights | this run | other run |\n|---|---|---|---|")
    for r in loaded:
        for weights, (outcome, detail) in r.runs.items():
            got = other.get(r.file, {}).get("runs", {}).get(weights)
            if got is None or got[0] != outcome:
                them = f"{got[0]}: {got[1]}" if got else "missing"
                print(f"| `{r.file}` | {weights} | {outcome}: {detail[:150]} | "
                      f"{them[:150]} |".replace("\n", " "))


#: how a run ends; ``rounding``: it differs, but the first differing node agrees when
#: fed MXNet's own inputs (rounding far inside the tolerance upstream reorders
#: near-equal scores at a sort or an NMS, or an exp of large values)
OUTCOMES = ("agree", "rounding", "differ", "refused", "error")
#: what an agreeing verdict says when detection rows of equal scores came in another order
REORDERED = "rows of equal scores in another order"


def summarize(rows: list[Row], markdown: bool) -> None:
    loaded = [r for r in rows if r.loads == "yes"]
    counts: collections.Counter[str] = collections.Counter()
    for r in loaded:
        for weights, (outcome, _) in r.runs.items():
            counts[weights, outcome] += 1
    agree = sum(1 for r in loaded if r.runs and all(o == "agree" for o, _ in r.runs.values()))
    print(f"\n{len(rows)} files; {len(loaded)} load and infer in MXNet "
          f"({len(rows) - len(loaded)} do not: not counted)")
    for weights in ("random", "params"):
        line = ", ".join(f"{counts[weights, o]} {o}" for o in
                         OUTCOMES if counts[weights, o])
        if line:
            print(f"  {weights} weights: {line}")
    print(f"  export and agree (every run of the file): {agree} of {len(loaded)} "
          f"({agree / max(1, len(loaded)):.0%})")
    moved = sum(1 for r in loaded if r.runs and all(o == "agree" for o, _ in r.runs.values())
                and any(REORDERED in d for _, d in r.runs.values()))
    if moved:
        print(f"  ... of which {moved} with detection rows of equal scores matched in "
              "another order")
    near = sum(1 for r in loaded if r.runs and
               all(o in ("agree", "rounding") for o, _ in r.runs.values()))
    if near > agree:
        print(f"  ... or differ only by rounding amplified at a node (it agrees fed "
              f"MXNet's own inputs): {near} of {len(loaded)} ({near / len(loaded):.0%})")
    if markdown:
        print("\n| file | weights | outcome | detail |\n|---|---|---|---|")
        for r in rows:
            for weights, (outcome, detail) in r.runs.items() or [("-", ("not loaded",
                                                                        r.loads))]:
                print(f"| `{r.file}` | {weights} | {outcome} | {detail.replace('|', '/')} |")


if __name__ == "__main__":
    sys.exit(main())
