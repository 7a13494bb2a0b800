"""Saving a document's pair: the symbol file and, with a checkpoint open, its
``.params`` (keys following every rename), as one unit that a kill leaves old or new,
never over a file another program wrote since it was read here unless told to.

No Qt, no MXNet.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from mxexplorer.core.graph import params_file
from mxexplorer.core.runtime import files

if TYPE_CHECKING:
    from mxexplorer.core.graph.document import GraphDocument


def params_target(doc: GraphDocument, symbol_path: str) -> str | None:
    """Where ``doc``'s checkpoint goes beside ``symbol_path`` (same epoch), if one is
    open."""
    if not doc.params_path:
        return None
    return params_file.params_path_for(symbol_path, doc.params_epoch or 0)


def params_writer(doc: GraphDocument, target: str) -> Callable[[str], None] | None:
    """A writer of ``doc``'s checkpoint with its keys following every rename, for
    ``target``; None when that is the checkpoint itself, unrenamed."""
    assert doc.params_path is not None
    renames = dict(doc.param_renames)
    if os.path.abspath(target) == os.path.abspath(doc.params_path) and not renames:
        return None
    return params_file.renamed_copy(doc.params_path, lambda name: renames.get(name, name))


def expected(doc: GraphDocument, path: str, params_path: str | None
             ) -> dict[str, files.FileIdentity | None]:
    """The files ``doc`` read or wrote that a save to ``path`` writes over or copies
    from, as they were then."""
    touched = {os.path.abspath(p) for p in (path, params_path, doc.params_path) if p}
    return {p: w for p, w in doc.disk.items() if p in touched}


def write_pair(doc: GraphDocument, path: str, journal_dir: str | None = None,
               force: bool = False) -> str | None:
    """Write ``doc`` to ``path`` and, with a checkpoint open and ``path`` named
    ``prefix-symbol.json``, its ``prefix-NNNN.params`` beside it (returned), through
    :func:`files.save_together` (with ``journal_dir``, where the next start finds what
    a kill cut short).

    Raises
    ------
    files.ChangedOnDisk : another program wrote a file this save writes over or copies
        from since ``doc`` read it (unless ``force``: the user's word): nothing written.
    SymbolFileError : the checkpoint cannot be read to be copied.
    OSError : the files could not be written (the old ones stay).
    """
    params_path = params_target(doc, path)
    wanted = {} if force else expected(doc, path, params_path)
    files.check_unchanged(wanted)         # before the checkpoint is read to be copied
    text = doc.to_json().encode("utf-8")
    items: list[tuple[str, Callable[[str], None]]] = []
    writer = params_writer(doc, params_path) if params_path else None
    if params_path and writer is not None:
        items.append((params_path, writer))
    items.append((path, lambda tmp: files.write_bytes_to(tmp, text)))
    files.save_together(items, journal_dir, wanted)
    return params_path
