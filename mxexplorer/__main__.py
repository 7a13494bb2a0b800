"""``python -m mxexplorer`` -> :func:`mxexplorer.cli.main`."""
from __future__ import annotations

from mxexplorer.cli import main

raise SystemExit(main())
