"""``mxexplorer doctor`` (what a bug report needs) and the desktop registration."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common


def cmd_doctor(args: argparse.Namespace) -> int:
    from mxexplorer.core.runtime import doctor

    sections, report = doctor.gather()
    if args.json:
        common.print_json(doctor.as_dict(sections, report))
    else:
        sys.stdout.write(doctor.as_text(sections))
    return 0


def desktop(install: bool) -> int:
    from mxexplorer import desktop

    report = desktop.install() if install else desktop.uninstall()
    for line in report.lines():
        sys.stdout.write(line + "\n")
    sys.stdout.write(("installed: symbol files now open with mxexplorer\n" if install
                      else "uninstalled\n"))
    return 0


def add_parser(sub: Any) -> None:
    """Register ``doctor``."""
    p = sub.add_parser("doctor", help="what a bug report needs: Python, MXNet build, CUDA, "
                                      "GPUs and whether this MXNet runs on each, dot, Qt")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (its 'gpus' can be replayed with "
                        "MXEXPLORER_RECORDED_GPUS)")
    p.set_defaults(func=cmd_doctor)
