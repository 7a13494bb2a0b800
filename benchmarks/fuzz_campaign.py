"""A long campaign of hostile input, and a table of what came of it.

Surfaces:

* files: structure-aware mutations of real symbol files (tests/mutate.py) through
  ``mxexplorer info``, ``infer`` and ``render`` in fresh processes;
* checkpoints: the example MLP with a damaged ``.params`` beside it (bits flipped,
  cut short, counts, dimensions, dtypes and names rewritten) through ``info`` and
  ``infer``;
* editor: attribute and name edits of odd text and numbers through the editor's
  checks; each one let through is saved and opened again (by mxexplorer and MXNet);
* socket: request lines of odd bytes, JSON and numbers to a running single-instance
  server (in a child process, offscreen Qt);
* environment: ``MXEXPLORER_RECORDED_GPUS`` naming mutated doctor reports and files
  that are not files, through ``mxexplorer doctor --json``.

Outcomes: ``ok`` (exit 0, or the edit saved and reopened, or the line answered),
``refused`` (exit 2, one line ``mxexplorer: error: ...``; an edit refused in one
line), and the ones that must never happen: ``internal`` (exit 1, an exception),
``crash`` (a signal), ``hang`` (over the time limit), ``unclear`` (exit 2 in more than
one line, a traceback, an edit saved that does not open again, a line unanswered).

Run: ``python benchmarks/fuzz_campaign.py [CASES_PER_SURFACE] [WORKERS] [SURFACE...]``
(300, 2, every surface).
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
    args = [command, path]
    if command == "infer":
        args += ["--shape", shape]
    if command == "render":
        args += ["-o", os.path.join(folder, f"case{k}.svg"), "--time-limit", "60"]
    return run_command(command, args, path)


def run_command(label: str, args: list[str], path: str,
                env: dict[str, str] | None = None) -> tuple[str, str, float, str]:
    """``mxexplorer ARGS`` in a fresh process, judged."""
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "mxexplorer", *args],
                              capture_output=True, text=True, errors="replace", cwd=ROOT,
                              timeout=TIME_LIMIT, env=env)
    except subprocess.TimeoutExpired:
        return label, "hang", TIME_LIMIT, path
    command = label
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


# ------------------------------------------------------------------ checkpoints
def params_cases(count: int, folder: str) -> list[tuple[str, list[str], str]]:
    """(label, CLI args, file) of the example MLP beside a damaged checkpoint."""
    import random
    import shutil
    import struct

    rng = random.Random(7)
    good = open(os.path.join(ROOT, "mxexplorer", "resources", "examples", "mlp-0000.params"),
                "rb").read()
    symbol = os.path.join(ROOT, "mxexplorer", "resources", "examples", "mlp-symbol.json")
    out = []
    for k in range(count):
        data = bytearray(good)
        kind = k % 6
        if kind == 0:                                  # bits flipped anywhere
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 1:                                # cut short
            data = data[:rng.randrange(len(data))]
        elif kind == 2:                                # the array count
            struct.pack_into("<Q", data, 16, rng.choice([0, 5, 10**7, 2**40, 2**64 - 1]))
        elif kind == 3:                                # a header word of the first array
            at = 24 + rng.randrange(0, 40, 4)
            struct.pack_into("<i", data, at, rng.choice([-1, -(2**31), 2**31 - 1, 33, 0]))
        elif kind == 4:                                # a dimension, 64-bit
            at = 24 + 12 + rng.randrange(0, 16, 8)
            struct.pack_into("<q", data, at, rng.choice([-(2**63), 2**40, -3, 0, 2**31]))
        else:                                          # the names' count or a length
            at = len(data) - rng.randrange(8, min(len(data), 400))
            struct.pack_into("<Q", data, at, rng.choice([0, 1, 2**32, 2**62]))
        sub = os.path.join(folder, f"ckpt{k}")
        os.makedirs(sub)
        shutil.copy(symbol, os.path.join(sub, "m-symbol.json"))
        with open(os.path.join(sub, "m-0000.params"), "wb") as fh:
            fh.write(bytes(data))
        path = os.path.join(sub, "m-symbol.json")
        args = ["info", path] if k % 2 else ["infer", path, "--shape", "data=2,784"]
        out.append((f"params {args[0]}", args, path))
    return out


# ------------------------------------------------------------------ the editor
def editor_cases(count: int) -> list[tuple[str, str, float, str]]:
    """Edits of odd text through the editor's checks; one let through is saved and
    must open again, in mxexplorer and (for an op MXNet has) in MXNet."""
    import random

    from mxexplorer.core.graph import edits
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.runtime.errors import UserError
    from tests.mutate import HUGE, ODD_TEXT, TUPLES

    rng = random.Random(11)
    texts = [t for t in ODD_TEXT if t != "\ud800"] + TUPLES + [str(h) for h in HUGE[:-1]] + \
        ["5000000", "100001", "-2", "1e400", "Infinity", "\x00", "a\x00b", "3"]
    folder = tempfile.mkdtemp(prefix="mxexplorer-fuzz-editor-")
    out = []
    for k in range(count):
        started = time.monotonic()
        doc = GraphDocument.open(os.path.join(ROOT, "mxexplorer", "resources", "examples",
                                              "mlp-symbol.json"))
        node = rng.choice([i for i, n in enumerate(doc.nodes) if not n.is_variable])
        key = rng.choice(["num_hidden", "num_outputs", "no_bias", "flatten", "note",
                          rng.choice(texts) or "k"])
        value = rng.choice(texts)
        try:
            if k % 4 == 3:
                why = edits.name_problem(value)
                edit: object = edits.RenameNodeEdit(node, value)
            else:
                why = edits.attrs_problem(doc, node, {key: value})
                edit = edits.set_attr((node,), key, value)
            if why:
                out.append(("editor", "refused", time.monotonic() - started, ""))
                continue
            try:
                edit.apply(doc)                                # type: ignore[attr-defined]
            except UserError:
                out.append(("editor", "refused", time.monotonic() - started, ""))
                continue
            path = os.path.join(folder, f"e{k}-symbol.json")
            doc.save(path)
            GraphDocument.open(path)
            outcome, note = "ok", ""
        except UserError as exc:
            outcome, note = "unclear", f"saved, not reopened: {exc}"[:160]
        except Exception as exc:  # noqa: BLE001 - what the campaign looks for
            outcome, note = "internal", f"{type(exc).__name__}: {exc}"[:160]
        out.append(("editor", outcome, time.monotonic() - started, note))
    return out


# ------------------------------------------------------------------ the socket
SERVER = r"""
import sys
sys.path.insert(0, {root!r})
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from mxexplorer.gui.instance import InstanceServer
app = QApplication([])
server = InstanceServer()
print("listening" if server.listening else "not listening: " + str(server.why_not),
      flush=True)
QTimer.singleShot(int(sys.argv[1]) * 1000, app.quit)
app.exec()
"""


def socket_cases(count: int) -> list[tuple[str, str, float, str]]:
    """Odd request lines to a single-instance server in a child process: every line
    must be answered, and the server must outlive them all."""
    import json
    import random
    import socket as sk

    rng = random.Random(13)
    folder = tempfile.mkdtemp(prefix="mxexplorer-fuzz-socket-")
    os.chmod(folder, 0o700)
    path = os.path.join(folder, "instance")
    env = dict(os.environ, MXEXPLORER_INSTANCE=path, QT_QPA_PLATFORM="offscreen")
    child = subprocess.Popen([sys.executable, "-c", SERVER.format(root=ROOT), "3600"],
                             env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().startswith("listening")
    bodies = [b"", b"{", b"null", b"[]", b"\xff\xfe\x00", b"[" * 50000,
              b'{"files": [], "shapes": {"data": [Infinity]}}', b"x" * (2 << 20)]
    out = []
    for k in range(count):
        if k % 3 == 0:
            line = rng.choice(bodies)
        else:
            value = rng.choice([1, -1, 2**31, 2**64, 1e400, "x", None, [], {}, True,
                                [1.5], ["\u0000"], "a" * 5000])
            line = json.dumps({"files": rng.choice([[], ["/x"], [value], value]),
                               "shapes": rng.choice([{}, {"data": [value]}, value])}
                              ).encode()
        started = time.monotonic()
        conn = sk.socket(sk.AF_UNIX, sk.SOCK_STREAM)
        conn.settimeout(30)
        try:
            conn.connect(path)
            try:
                conn.sendall(line + (b"" if k % 7 == 6 else b"\n"))
            except (BrokenPipeError, ConnectionResetError):
                pass              # the server stopped reading a line too long: its answer
            if k % 7 == 6 and len(line) <= (1 << 20):
                conn.shutdown(sk.SHUT_WR)              # no end of line, then gone
                outcome, note = "ok", ""
            else:
                reply = conn.recv(200)
                outcome = "ok" if reply.startswith((b"ok", b"bad request")) else "unclear"
                note = "" if outcome == "ok" else f"reply {reply[:60]!r} to {line[:60]!r}"
        except OSError as exc:
            outcome, note = ("hang" if isinstance(exc, sk.timeout) else "unclear"), \
                f"{exc} after {line[:60]!r}"
        finally:
            conn.close()
        if child.poll() is not None:
            outcome, note = "crash", f"the server ended after {line[:60]!r}"
        out.append(("socket", outcome, time.monotonic() - started, note))
        if outcome == "crash":
            break
    child.kill()
    child.wait()
    return out


# ------------------------------------------------------------------ environment
def env_cases(count: int, folder: str) -> list[tuple[str, list[str], str, dict[str, str]]]:
    """``doctor --json`` with MXEXPLORER_RECORDED_GPUS naming mutated reports."""
    import json
    import random

    rng = random.Random(17)
    real = json.load(open(os.path.join(ROOT, "tests", "data", "gpus", "cu112-six-gpus.json")))
    odd = [None, "x", -1, 2**64, 1e400, float("inf"), [], {}, True, [[[]]]]
    out = []
    for k in range(count):
        path = os.path.join(folder, f"gpus{k}.json")
        kind = k % 5
        if kind == 0:
            data = json.loads(json.dumps(real))
            row = rng.choice(data["gpus"])
            row[rng.choice(list(row))] = rng.choice(odd)
            text = json.dumps(data)
        elif kind == 1:
            text = json.dumps(real)[:rng.randrange(1, 400)]
        elif kind == 2:
            text = '{"gpus": ' + "[" * rng.choice([10, 1000, 100000]) + "]"
        elif kind == 3:
            text = json.dumps({"gpus": rng.choice(odd), "build": rng.choice(odd)})
        else:
            path = rng.choice(["/dev/zero", "/dev/null", folder, "/nonexistent/x.json"])
            text = None
        if text is not None:
            with open(path, "w") as fh:
                fh.write(text.replace("Infinity", "Infinity"))
        env = dict(os.environ, MXEXPLORER_RECORDED_GPUS=path)
        out.append(("env doctor", ["doctor", "--json"], path, env))
    return out


SURFACES = ("files", "checkpoints", "editor", "socket", "environment")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    surfaces = sys.argv[3:] or list(SURFACES)
    folder = tempfile.mkdtemp(prefix="mxexplorer-fuzz-")
    started = time.monotonic()
    results: list[tuple[str, str, float, str]] = []
    with ThreadPoolExecutor(workers) as pool:
        if "files" in surfaces:
            todo = cases(count)
            results += list(pool.map(lambda kc: run_case(kc[1], folder, kc[0]),
                                     enumerate(todo)))
        if "checkpoints" in surfaces:
            results += list(pool.map(lambda c: run_command(c[0], c[1], c[2]),
                                     params_cases(count, folder)))
        if "environment" in surfaces:
            results += list(pool.map(lambda c: run_command(c[0], c[1], c[2], c[3]),
                                     env_cases(count, folder)))
    if "editor" in surfaces:
        results += editor_cases(count)
    if "socket" in surfaces:
        results += socket_cases(count)
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    slowest: dict[str, float] = collections.defaultdict(float)
    for command, outcome, seconds, _ in results:
        table[command][outcome] += 1
        slowest[command] = max(slowest[command], seconds)
    columns = ["ok", "refused", *BAD]
    print(f"{len(results)} cases in {time.monotonic() - started:.0f} s ({workers} at a time)")
    print(f"{'surface':14} {'cases':>6} " + " ".join(f"{c:>9}" for c in columns)
          + f" {'slowest s':>10}")
    for command in table:
        row = table[command]
        print(f"{command:14} {sum(row.values()):6} " + " ".join(f"{row[c]:9}" for c in columns)
              + f" {slowest[command]:10.1f}")
    for command, outcome, _, note in results:
        if outcome in BAD:
            print(f"  {command} {outcome}: {note}")


if __name__ == "__main__":
    main()
