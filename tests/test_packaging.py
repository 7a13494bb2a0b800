"""The package as users get it (issue 23).

``make`` installs mxexplorer in editable mode, so every other test runs the source tree.
Here the sdist and the wheel are built from the tree (the wheel from the sdist, as
``python -m build`` does: a file the sdist forgets is missing from the wheel too), the
wheel is checked against the tree file by file, installed (not editable) into a fresh
virtual environment outside the tree, and the first commands a new user runs are run
from there, in a folder that is not the checkout.

The fresh environment takes mxexplorer's dependencies (PySide6, numpy, MXNet) from the
test environment through a ``.pth`` line instead of downloading them again: a path
line in a ``.pth`` adds that folder to ``sys.path`` without running its ``.pth`` files,
so the editable install living there stays inert and ``import mxexplorer`` finds the
installed wheel (asserted below).
"""
from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

from tests.conftest import REPO, WAIT_S

#: files of the tree that are not part of the package
_SKIP_PARTS = {"__pycache__", ".mypy_cache", ".ruff_cache"}


def _tree_files() -> set[str]:
    """Every file the installed package must carry, as its path inside the wheel."""
    files: set[str] = set()
    for top, inside in (("mxexplorer", "mxexplorer"), ("resources", "mxexplorer/resources")):
        folder = REPO / top
        if not folder.is_dir():
            continue
        for path in folder.rglob("*"):
            if path.is_file() and not _SKIP_PARTS & set(path.parts) \
                    and path.suffix not in (".pyc", ".pyo"):
                files.add(f"{inside}/{path.relative_to(folder).as_posix()}")
    return files


#: what is not the project: environments, caches, build output
_NOT_SOURCE = shutil.ignore_patterns(".venv*", ".git", "__pycache__", "*.egg-info", "build",
                                     "dist", ".pytest_cache", ".hypothesis", ".mypy_cache",
                                     ".ruff_cache", "*.pyc")

# the tests of this module share one build: on one worker when the suite runs in parallel
pytestmark = pytest.mark.xdist_group("packaging")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """The sdist, and the wheel built from it, of a copy of the tree (setuptools writes
    its staging folder and egg-info into the folder it builds: never into the checkout,
    where a second build at the same time removed files under the first)."""
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("source") / "mxexplorer"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE, symlinks=True)
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(out), str(source)], capture_output=True, text=True,
                          env=env, timeout=WAIT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0], "log": _log(out, done)}


def _log(out: pathlib.Path, done: subprocess.CompletedProcess[str]) -> pathlib.Path:
    path = out / "build.log"
    path.write_text(done.stdout + done.stderr)
    return path


def test_the_build_prints_no_deprecation_or_ignored_package(built) -> None:
    log = built["log"].read_text()
    for banner in ("deprecated", "Package would be ignored", "SetuptoolsDeprecationWarning",
                   "is absent from the `packages` configuration"):
        assert banner not in log, f"{banner!r} in the build's output:\n{log[-3000:]}"


def test_the_wheel_carries_every_module_and_resource_of_the_tree(built) -> None:
    with zipfile.ZipFile(built["wheel"]) as whl:
        names = set(whl.namelist())
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = whl.read(meta).decode()
        licenses = [n for n in names if ".dist-info/licenses/" in n]
    carried = {n for n in names if not n.split("/")[0].endswith(".dist-info")}
    missing = sorted(_tree_files() - carried)
    assert not missing, f"{len(missing)} files of the tree are not in the wheel: {missing}"
    assert "mxexplorer/gui/panels/__init__.py" in carried
    assert "mxexplorer/resources/examples/resnet18_v1-symbol.json" in carried
    assert not {n for n in carried if n.startswith(("tests/", "benchmarks/", "tools/"))}
    # the license as a PEP 639 expression, and its text in the wheel
    assert "License-Expression: Apache-2.0" in metadata
    assert any(n.endswith("/LICENSE") for n in licenses), licenses


def test_the_wheel_installs_on_every_python_and_brings_mxnet_only_where_it_runs(built) -> None:
    """Issue 35: ``requires-python <3.12`` and a base ``numpy<1.24`` refused the install
    on Python 3.12+.  The base asks for no MXNet and any numpy; the cpu and gpu extras
    bring MXNet and its numpy pin only on Pythons and platforms MXNet 1.9.1 runs on."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    with zipfile.ZipFile(built["wheel"]) as whl:
        meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        lines = whl.read(meta).decode().splitlines()
    python = next(x.split(":", 1)[1].strip() for x in lines if x.startswith("Requires-Python:"))
    assert all(v in SpecifierSet(python) for v in ("3.9", "3.11", "3.12", "3.13"))
    needs = [Requirement(x.split(":", 1)[1].strip()) for x in lines
             if x.startswith("Requires-Dist:")]

    def wanted(extra: str, version: str, system: str, machine: str) -> dict[str, str]:
        env = {"extra": extra, "python_version": version, "sys_platform": system,
               "platform_machine": machine}
        return {r.name: str(r.specifier) for r in needs
                if r.marker is None or r.marker.evaluate(env)}
    base = wanted("", "3.13", "linux", "x86_64")
    assert base.get("numpy") == "" and "mxnet" not in base
    assert wanted("cpu", "3.11", "linux", "x86_64")["mxnet"] == "==1.9.1"
    assert "<1.24" in wanted("cpu", "3.11", "linux", "x86_64")["numpy"]
    for version, system, machine in (("3.12", "linux", "x86_64"), ("3.13", "linux", "x86_64"),
                                     ("3.11", "win32", "AMD64"), ("3.11", "darwin", "arm64")):
        for extra in ("cpu", "gpu"):
            got = wanted(extra, version, system, machine)
            assert "mxnet" not in got and "mxnet-cu112" not in got, (extra, version, system)
            assert "<1.24" not in got.get("numpy", ""), (extra, version, system)


def test_the_sdist_carries_the_sources_the_license_and_the_tests(built) -> None:
    with tarfile.open(built["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("pyproject.toml", "README.md", "LICENSE", "Makefile",
                   "mxexplorer/gui/panels/__init__.py", "tests/conftest.py"):
        assert needed in names, needed
    inside = {n.replace("resources/", "mxexplorer/resources/", 1)
              if n.startswith("resources/") else n for n in names}
    missing = sorted(_tree_files() - inside)
    assert not missing, missing


def _fresh_venv(root: pathlib.Path, wheel: pathlib.Path) -> pathlib.Path:
    """A new virtual environment with the wheel installed (not editable); the test
    environment's packages reachable for mxexplorer's dependencies."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=WAIT_S)
    python = venv / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-deps", "--no-index", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr[-3000:]
    purelib = subprocess.run([str(python), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = [p for p in site.getsitepackages() if os.path.isdir(p)] or \
        [sysconfig.get_paths()["purelib"]]
    pathlib.Path(purelib, "zz_mxexplorer_test_deps.pth").write_text("\n".join(ours) + "\n")
    return venv


def test_the_installed_wheel_runs_outside_the_tree(built, tmp_path) -> None:
    venv = _fresh_venv(tmp_path, built["wheel"])
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), capture_output=True, text=True, cwd=str(work),
                              env=env, timeout=WAIT_S)

    where = run(str(venv / "bin" / "python"), "-c",
                "import mxexplorer, mxexplorer.gui.panels as p; print(mxexplorer.__file__)")
    assert where.returncode == 0, where.stderr[-2000:]
    assert pathlib.Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    tool = str(venv / "bin" / "mxexplorer")
    version = run(tool, "--version")
    assert version.returncode == 0 and version.stdout.startswith("mxexplorer "), version
    example = run(str(venv / "bin" / "python"), "-c",
                  "from importlib import resources; print(resources.files("
                  "'mxexplorer.resources') / 'examples' / 'resnet18_v1-symbol.json')")
    example_path = example.stdout.strip()
    assert pathlib.Path(example_path).is_relative_to(venv), example
    info = run(tool, "info", example_path)
    assert info.returncode == 0 and "resnetv10_dense0_fwd" in info.stdout, info
    infer = run(tool, "infer", example_path, "--shape", "data=1,3,224,224")
    assert infer.returncode == 0 and "(1, 1000)" in infer.stdout, infer.stderr[-2000:]
    mlp = str(pathlib.Path(example_path).with_name("mlp-symbol.json"))
    if importlib.util.find_spec("mxnet") is not None:
        onnx = run(tool, "onnx", mlp, "--shape", "data=2,784", "-o", str(work / "mlp.onnx"),
                   "--check")            # the export and MXNet's check run in a child process
        assert onnx.returncode == 0 and "outputs agree within 0.0001" in onnx.stdout, \
            onnx.stderr[-2000:]
    else:                                # the lane without MXNet: plans by the memory model
        plan = run(tool, "plan", example_path, "--shape", "data=8,3,224,224", "--search",
                   "fast")
        assert plan.returncode == 0 and "costed by   the memory model" in plan.stdout, \
            plan.stderr[-2000:]
    api = run(str(venv / "bin" / "python"), "-c",
              "import mxexplorer\nfrom mxexplorer import memonger\n"
              "g = mxexplorer.open(mxexplorer.example())\n"
              "print(g.path, g.infer(data=(1, 3, 224, 224)).macs)\n")
    assert api.returncode == 0, api.stderr[-2000:]     # the library API, installed
    assert api.stdout.split() == [example_path, "1821450216"], api.stdout
    shot = work / "shot.png"
    picture = run(tool, example_path, "--shape", "data=1,3,224,224", "--screenshot", str(shot))
    assert picture.returncode == 0, picture.stderr[-3000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
