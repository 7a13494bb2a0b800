"""Qt-free core of mxexplorer: document, I/O, inference, statistics, planning.

Nothing in this package imports PySide6, pyqtgraph or ``mxexplorer.gui``; MXNet is
imported lazily through :mod:`mxexplorer.core.runtime.mxnet_env`.
"""
