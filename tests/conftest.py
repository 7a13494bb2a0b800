"""Shared fixtures.  Qt runs offscreen; settings never touch the user's files."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
# never hand files to (or listen in place of) the user's running mxexplorer: this test
# process's own channel, in a private folder as the real one is
import tempfile  # noqa: E402

os.environ["MXEXPLORER_INSTANCE"] = os.path.join(
    tempfile.mkdtemp(prefix="mxexplorer-test-"), "instance")

import pathlib  # noqa: E402

import pytest  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
#: how long a test waits for what takes seconds on a quiet machine.  Waits end as soon
#: as their condition holds, so only a hang ever reaches this: a 2-core machine beside
#: a CPU hog ran the suite five times slower, and no wait may decide a test there.
WAIT_MS = 600_000
WAIT_S = WAIT_MS // 1000
CORPUS = REPO.parent / "shared" / "corpus"
DATA = pathlib.Path(__file__).resolve().parent / "data"
EXAMPLES = REPO / "mxexplorer" / "resources" / "examples"


@pytest.fixture
def mlp_copy(tmp_path):
    """A copy of the example checkpoint pair (symbol file + .params) in tmp_path."""
    import shutil

    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "mlp-symbol.json"


def mlp_epoch(mlp_symbol: pathlib.Path, folder: pathlib.Path, change) -> pathlib.Path:
    """Another checkpoint of the example MLP in ``folder``: ``change(arrays)`` edits
    its ``{"arg:fc1_weight": NDArray, ...}`` in place; returns its symbol path."""
    import shutil

    import mxnet as mx

    folder.mkdir(exist_ok=True)
    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(mlp_symbol.parent / name, folder / name)
    saved = mx.nd.load(str(folder / "mlp-0000.params"))
    change(saved)
    mx.nd.save(str(folder / "mlp-0000.params"), saved)
    return folder / "mlp-symbol.json"


def dead_pid() -> int:
    """The pid of a process that has ended (for files "left by a crashed run")."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def corpus_files() -> list[pathlib.Path]:
    return sorted(p for p in CORPUS.glob("*.json")) if CORPUS.is_dir() else []


def corpus_params(paths: list[pathlib.Path] | None = None) -> list:
    """Parameters for a test over corpus files: the files, or without the corpus one
    placeholder, so the test still runs and :func:`require_corpus` says why not."""
    if not CORPUS.is_dir():
        return [pytest.param(None, id="no-corpus")]
    return [pytest.param(p, id=p.name[:60]) for p in (corpus_files() if paths is None
                                                      else paths)]


def require_corpus() -> None:
    """The shared corpus of real files sits beside the clone in CI and for developers; a
    user's clone has none: its tests are skipped with the reason, but in CI (``CI`` set)
    a missing corpus fails."""
    if CORPUS.is_dir():
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set, but the corpus folder {CORPUS} is missing "
                    "(../shared/corpus beside the clone)", pytrace=False)
    pytest.skip(f"no corpus folder at {CORPUS}: the tests over real third-party files "
                "run where ../shared/corpus sits beside the clone (CI, developers)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "corpus: needs ../shared/corpus (skipped without it, "
                                       "failed without it when CI is set)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("corpus") is not None:
        require_corpus()


@pytest.fixture(scope="session")
def zoo(tmp_path_factory: pytest.TempPathFactory):
    """``zoo(name, size=224)`` -> path of a Gluon model-zoo export (random weights).

    Each network is exported once per run: in a parallel run the workers share one
    folder and a lock per network (the first exports, the others wait and read)."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent                      # shared by every worker of this run
    folder = root / "zoo"
    folder.mkdir(exist_ok=True)

    def export(name: str, size: int = 224) -> pathlib.Path:
        prefix = folder / f"{name}_{size}"
        symbol = pathlib.Path(f"{prefix}-symbol.json")
        with open(f"{prefix}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not symbol.exists():
                import mxnet as mx
                from mxnet.gluon.model_zoo import vision

                # a fresh name scope: the names a zoo export gets (resnetv10_...) do
                # not depend on the Gluon blocks made earlier in this process
                with mx.name.NameManager():
                    net = vision.get_model(name, pretrained=False)
                net.initialize()
                net.hybridize()
                net(mx.nd.zeros((1, 3, size, size)))
                net.export(str(prefix) + ".partial")
                os.replace(f"{prefix}.partial-0000.params", f"{prefix}-0000.params")
                os.replace(f"{prefix}.partial-symbol.json", symbol)
        return symbol

    return export


def killed_save_journal(tmp_path, doc_path, text: str) -> tuple[str, str]:
    """A real save of ``doc_path`` killed right after its journal said "committed"
    (in a child, SIGKILLed between the journal and the renames); returns the journal
    folder and the symbol's temporary."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    from mxexplorer.core.runtime import files

    journal = tmp_path / "saves"
    child = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from mxexplorer.core.runtime import files
        real = files._rename_all
        def killed(pairs):
            os.kill(os.getpid(), signal.SIGKILL)     # committed, nothing renamed
        files._rename_all = killed
        from mxexplorer.core.graph.document import GraphDocument
        doc = GraphDocument.open({str(doc_path)!r})
        node = doc.find("fc1")[0]
        from mxexplorer.core.graph import edits
        edits.RenameNodeEdit(node, {text!r}).apply(doc)
        doc.save({str(doc_path)!r}, journal_dir={str(journal)!r})
    """)
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == -signal.SIGKILL, run.stderr
    (record,) = [json.loads((journal / n).read_text()) for n in os.listdir(journal)
                 if n.endswith(files.JOURNAL_SUFFIX)]
    assert record["state"] == "committed"
    return str(journal), record["pairs"][-1][0]
