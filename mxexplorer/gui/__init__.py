"""Qt widgets, models and workers of mxexplorer (PySide6)."""
