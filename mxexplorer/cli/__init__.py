"""Command line: ``mxexplorer FILE`` opens the window; subcommands work headless.

``info`` and ``infer`` need no display; the GUI package is imported only when a window
is asked for.  Bad input exits 2 with one line on stderr, never a traceback.  Each
command group has its module (``info``, ``render``, ``plan``, ``profile``, ``convert``,
``doctor``); what they share is in ``common``; the parsers in ``parser``.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from mxexplorer.cli.common import fail, shape_args
from mxexplorer.core.runtime.errors import MXNetMissingError, UserError

SUBCOMMANDS = ("info", "infer", "render", "plan", "bench", "profile", "onnx", "diff",
               "doctor")


#: what a command asks of MXNet itself, when it needs MXNet (every other command runs on
#: mxexplorer's own engine)
NEEDS_MXNET = {
    "bench": "it times MXNet training the graph",
    "profile": "it times MXNet running each layer",
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    # --debug before the subcommand as after it: every internal error asks for it
    lead = 0
    while lead < len(argv) and argv[lead] == "--debug":
        lead += 1
    if lead and lead < len(argv) and argv[lead] in SUBCOMMANDS:
        argv = argv[lead:] + ["--debug"]
    if argv and argv[0] in SUBCOMMANDS:
        # a short run that makes millions of objects and no cycles: the collector's
        # passes over a growing heap were a third of `info` on a 100,000-node graph
        import gc

        gc.disable()
    for stream in (sys.stdout, sys.stderr):     # a name may hold anything: print it all
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    from mxexplorer.cli import doctor, parser

    try:
        if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "--version")):
            args = parser.build_parser().parse_args(argv)
            return int(args.func(args))
        gui_args = parser.build_gui_parser().parse_args(argv)
        if gui_args.install_desktop or gui_args.uninstall_desktop:
            return doctor.desktop(gui_args.install_desktop)
        shapes = shape_args(gui_args.shape)
        from mxexplorer.gui.app import run

        if gui_args.screen and not gui_args.screenshot:
            raise UserError("--screen goes with --screenshot (the window itself fits the "
                            "screen it opens on)")
        return run(gui_args.files, shapes=shapes, screenshot=gui_args.screenshot,
                   theme=gui_args.theme, screen=gui_args.screen)
    except MXNetMissingError as exc:
        command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
        why = NEEDS_MXNET.get(command or "")
        return fail(f"{command} needs MXNet ({why}): {exc}" if why else str(exc))
    except UserError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        return fail("out of memory: the file, or the shapes given, are larger than this "
                     "machine can hold")
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - one line for the user, unless --debug
        if debug:
            raise
        return fail(f"internal error: {type(exc).__name__}: {exc} "
                     "(run with --debug for the traceback)", 1)
