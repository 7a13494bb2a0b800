"""The argument parsers: subcommands (each registered by its module) and the window's
own options.  ``--debug`` goes before or after a subcommand."""
from __future__ import annotations

import argparse
from typing import Any

from mxexplorer import __version__
from mxexplorer.cli import convert, doctor, info, plan, profile, render

#: the modules whose ``add_parser(sub)`` registers their subcommands, in help order
COMMANDS = (info, render, plan, profile, convert, doctor)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mxexplorer",
        description="Explore, fix and fit MXNet symbol graphs. Without a subcommand, "
                    "opens the GUI (on FILE if given).")
    parser.add_argument("--version", action="version", version=f"mxexplorer {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # every subcommand takes --debug too (after it, as users type it)
    original_add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        p = original_add(name, **kwargs)
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        return p

    sub.add_parser = add_parser  # type: ignore[method-assign]
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mxexplorer", description="Open the mxexplorer window.")
    parser.add_argument("files", nargs="*", metavar="FILE", help="symbol files to open")
    parser.add_argument("--shape", action="append", metavar="NAME=D1,D2,...")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="write a PNG of the window once loaded, then exit")
    parser.add_argument("--screen", metavar="WxH", type=_screen_size,
                        help="with --screenshot: the screen size the first window is "
                             "made for (1400x860)")
    parser.add_argument("--theme", choices=("system", "light", "dark"),
                        help="colours for this run (View > Theme remembers a choice)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--install-desktop", action="store_true",
                       help="register mxexplorer with the desktop for this user: menu entry, "
                       "icon, the MXNet symbol file type, default application")
    group.add_argument("--uninstall-desktop", action="store_true",
                       help="remove exactly what --install-desktop added")
    parser.add_argument("--debug", action="store_true")
    return parser


def _screen_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT") from None
    if not (320 <= width <= 16384 and 240 <= height <= 16384):
        raise argparse.ArgumentTypeError(f"{text}: width 320-16384, height 240-16384")
    return width, height
