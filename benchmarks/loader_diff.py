"""Where mxexplorer's loader and MXNet's disagree: mutated real files (tests/mutate.py)
read by both, and the cases counted by who accepts what, with an example of each.

MXNet reads each file in a child process (``mx.sym.load_json``), since some files end
it with a segmentation fault; a crash counts as MXNet refusing.

Run: ``python benchmarks/loader_diff.py [CASES]`` (400).
"""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MXNET_CHILD = """
import sys, json
import mxnet as mx
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8", errors="surrogatepass") as fh:
            mx.sym.load_json(fh.read())
        print(json.dumps([path, "ok", ""]), flush=True)
    except Exception as exc:
        print(json.dumps([path, "refused", str(exc).strip().splitlines()[-1][:120]]),
              flush=True)
"""


def mxnet_verdicts(paths: list[str]) -> dict[str, tuple[str, str]]:
    """MXNet's word on each file; files left when a child crashes go to a new one."""
    out: dict[str, tuple[str, str]] = {}
    todo = list(paths)
    while todo:
        proc = subprocess.run([sys.executable, "-c", MXNET_CHILD, *todo],
                              capture_output=True, text=True, errors="replace")
        for line in proc.stdout.splitlines():
            path, verdict, why = json.loads(line)
            out[path] = (verdict, why)
        done = [p for p in todo if p in out]
        todo = todo[len(done):]
        if todo and proc.returncode != 0:
            out[todo[0]] = ("refused", f"MXNet crashed (exit {proc.returncode})")
            todo = todo[1:]
    return out


def main() -> None:
    from hypothesis import HealthCheck, given, settings

    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.runtime.errors import UserError
    from tests.mutate import mutated_files

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    texts: list[str] = []

    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(text=mutated_files())
    def collect(text: str) -> None:
        texts.append(text)

    collect()
    folder = tempfile.mkdtemp(prefix="mxexplorer-diff-")
    paths = []
    ours: dict[str, tuple[str, str]] = {}
    for k, text in enumerate(texts):
        path = os.path.join(folder, f"c{k}-symbol.json")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(text)
        paths.append(path)
        try:
            GraphDocument.open(path, use_mxnet=False)
            ours[path] = ("ok", "")
        except UserError as exc:
            ours[path] = ("refused", str(exc).split(": ", 1)[-1][:120])
    theirs = mxnet_verdicts(paths)
    table: collections.Counter[tuple[str, str]] = collections.Counter()
    examples: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for path in paths:
        key = (ours[path][0], theirs[path][0])
        table[key] += 1
        if key[0] != key[1] and len(examples[key]) < 6:
            examples[key].append(f"ours: {ours[path][1] or 'ok'} | MXNet: "
                                 f"{theirs[path][1] or 'ok'}")
    print(f"{len(paths)} files")
    print(f"{'mxexplorer':12} {'MXNet':10} {'files':>6}")
    for (a, b), n in sorted(table.items()):
        print(f"{a:12} {b:10} {n:6}")
    for key, lines in examples.items():
        print(f"\nmxexplorer {key[0]}, MXNet {key[1]}:")
        for line in lines:
            print("  " + line)


if __name__ == "__main__":
    main()
