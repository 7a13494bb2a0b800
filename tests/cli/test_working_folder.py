"""Nothing runs from the folder the user works in (issue 24).

Model folders downloaded from the internet are where users run the tool.  ``python -m``
and ``python -c`` put the working folder first on ``sys.path``: a ``mxnet.py`` there ran
in every MXNet job (``plan``, ``bench``, ``onnx``, ``doctor``).  Here ``mxnet.py``,
``numpy.py`` and ``json.py`` are planted in the working folder and every command runs
from it, as installed (the console script); none of them may run.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, WAIT_S

PLANTED = ("mxnet", "numpy", "json")
MLP = str(EXAMPLES / "mlp-symbol.json")
R18 = str(EXAMPLES / "resnet18_v1-symbol.json")


def plant(folder: pathlib.Path) -> pathlib.Path:
    """Modules that note they ran (in ``ran.txt``) and then break what imported them."""
    marker = folder / "ran.txt"
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write('{name}\\n')\n"
            f"raise RuntimeError('the planted {name}.py ran')\n")
    return marker


def console_script() -> str:
    script = os.path.join(os.path.dirname(sys.executable), "mxexplorer")
    if not os.path.exists(script):
        pytest.fail(f"no console script at {script}: install the package (make does)")
    return script


COMMANDS = {
    "info": ["info", MLP],
    "infer": ["infer", MLP, "--shape", "data=4,784"],
    "render": ["render", MLP, "-o", "out.svg"],
    "plan": ["plan", MLP, "--shape", "data=8,784", "--search", "original", "-o",
             "planned-symbol.json"],
    "bench": ["bench", MLP, "--shape", "data=8,784", "--repeats", "1", "--warmup", "1"],
    "profile": ["profile", MLP, "--shape", "data=8,784", "--iterations", "1"],
    "onnx": ["onnx", R18, "--shape", "data=1,3,32,32", "-o", "r18.onnx", "--check"],
    "diff": ["diff", MLP, MLP],
    "doctor": ["doctor"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_imports_from_the_working_folder(tmp_path, command) -> None:
    marker = plant(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = subprocess.run([console_script(), *COMMANDS[command]], cwd=str(tmp_path),
                          capture_output=True, text=True, env=env, timeout=WAIT_S)
    assert not marker.exists(), (command, marker.read_text(), done.stderr[-1000:])
    assert done.returncode == 0, (command, done.stderr[-2000:])


def test_a_child_job_never_imports_from_the_working_folder(tmp_path, monkeypatch) -> None:
    """The window's jobs (planning, benchmark, profile, ONNX, devices) run in
    :mod:`mxexplorer.core.runtime.isolated` children, in whatever folder the window was started."""
    from mxexplorer.core.runtime import isolated
    from mxexplorer.core.runtime.mxnet_env import list_devices

    marker = plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    devices = isolated.call(list_devices, what="the device query")
    assert devices and devices[0].spec == "cpu"
    assert not marker.exists(), marker.read_text()


def test_the_desktop_entry_starts_the_installed_command(tmp_path) -> None:
    """The menu entry and the file manager start mxexplorer in the folder of the file
    opened: not ``python -m mxexplorer`` (the folder first on sys.path)."""
    from mxexplorer import desktop

    command = desktop.launch_command()
    assert " -m mxexplorer" not in command or " -I " in command, command
    marker = plant(tmp_path)
    argv = [a.strip("'") for a in command.split()] + ["--version"]
    done = subprocess.run(argv, cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=WAIT_S)
    assert done.returncode == 0 and done.stdout.startswith("mxexplorer "), done.stderr
    assert not marker.exists()
