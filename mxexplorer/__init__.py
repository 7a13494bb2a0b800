"""mxexplorer: see inside, fix and fit MXNet 1.x symbol graphs."""
from __future__ import annotations

__version__ = "0.1.0"
