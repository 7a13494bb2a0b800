"""Data shipped with mxexplorer (examples, desktop entry, MIME type, icons).

Installed as the package ``mxexplorer.resources``; read it with importlib.resources.
"""
