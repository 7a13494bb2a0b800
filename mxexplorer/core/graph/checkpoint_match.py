"""Whether a checkpoint's arrays belong to its graph: the parameters and auxiliary
states the ``.params`` lacks, and the arrays it holds that no variable of the graph
reads (issue 37: a ``prefix-symbol.json`` beside another network's
``prefix-0000.params`` opened as if they belonged together).  Read from the file's
index (:func:`params_file.read_params_index`), so no MXNet.  Must not import Qt or MXNet.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from mxexplorer.core.graph.params_file import ParamInfo
from mxexplorer.core.runtime.errors import UserError

if TYPE_CHECKING:
    from mxexplorer.core.graph.document import GraphDocument

#: names said in full in a list; the rest are counted
NAMED = 3


@dataclass(frozen=True)
class CheckpointMismatch:
    """What a checkpoint and its graph disagree on (names as the graph calls them now:
    the checkpoint's keys follow unsaved renames)."""

    params_file: str
    #: the graph's parameters and auxiliary states the checkpoint lacks, in graph order
    lacking_args: tuple[str, ...]
    lacking_aux: tuple[str, ...]
    #: the checkpoint's arrays no variable of the graph reads, in file order
    unused: tuple[str, ...]
    #: how many parameters and auxiliary states the graph has, arrays the file holds
    args: int
    aux: int
    arrays: int

    @property
    def lacking(self) -> tuple[str, ...]:
        return self.lacking_args + self.lacking_aux

    def headline(self) -> str:
        """One short line with counts only (a window's notice)."""
        name = os.path.basename(self.params_file)
        unused = f"{len(self.unused)} array{'s' if len(self.unused) != 1 else ''}"
        if not self.lacking:
            return f"{name} holds {unused} the graph does not use"
        text = (f"{name} does not match the graph: it lacks {len(self.lacking)} of the "
                f"graph's arrays")
        return text + (f" and holds {unused} the graph does not use" if self.unused else "")

    def words(self, named: int = NAMED) -> str:
        """One line naming a few arrays of each kind and counting the rest."""
        name = os.path.basename(self.params_file)
        lacks = []
        if self.lacking_args:
            lacks.append(f"{len(self.lacking_args)} of the graph's {self.args} parameters "
                         f"({_few(self.lacking_args, named)})")
        if self.lacking_aux:
            whose = "its" if lacks else "the graph's"
            lacks.append(f"{len(self.lacking_aux)} of {whose} {self.aux} auxiliary states "
                         f"({_few(self.lacking_aux, named)})")
        unused = ""
        if self.unused:
            verb = "is" if len(self.unused) == 1 else "are"
            unused = (f"{len(self.unused)} of its {self.arrays} arrays {verb} not in the "
                      f"graph ({_few(self.unused, named)})")
        if not lacks:
            return f"{name} holds arrays the graph does not use: {unused}"
        text = f"{name} does not match the graph: it lacks " + " and ".join(lacks)
        return text + (f"; {unused}" if unused else "")

    def to_dict(self) -> dict[str, Any]:
        return {"params_file": self.params_file, "lacking_args": list(self.lacking_args),
                "lacking_aux": list(self.lacking_aux), "unused": list(self.unused),
                "words": self.words()}


def _few(names: Sequence[str], named: int) -> str:
    more = f", +{len(names) - named} more" if len(names) > named else ""
    return ", ".join(names[:named]) + more


def compare(params_file: str, index: Iterable[ParamInfo], renames: Mapping[str, str],
            args: Sequence[str], aux: Sequence[str],
            variables: Iterable[str]) -> CheckpointMismatch | None:
    """How the checkpoint at ``params_file`` (its ``index``; ``renames``: checkpoint key ->
    the variable's current name) and a graph (its parameters ``args`` and auxiliary
    states ``aux``, and every variable it reads, data inputs included) disagree; None
    when every parameter and auxiliary state is there and every array is read."""
    held = [renames.get(p.name, p.name) for p in index]
    have = set(held)
    lacking_args = tuple(n for n in args if n not in have)
    lacking_aux = tuple(n for n in aux if n not in have)
    read = set(variables)
    unused = tuple(n for n in held if n not in read)
    if not (lacking_args or lacking_aux or unused):
        return None
    return CheckpointMismatch(params_file, lacking_args, lacking_aux, unused,
                              len(args), len(aux), len(held))


def describe(doc: GraphDocument) -> tuple[str, str]:
    """(one short line, the whole of it) on the checkpoint beside ``doc``: what it
    lacks and what it holds for nothing, or that it can no longer be read (another
    program rewrote it since it was opened); ("", "") when it belongs to the graph."""
    try:
        found = doc.checkpoint_mismatch()
    except UserError as exc:
        return f"{os.path.basename(doc.params_path or '')} cannot be read", str(exc)
    if doc.params_error:
        return f"{os.path.basename(doc.params_path or '')} cannot be read", doc.params_error
    return (found.headline(), found.words()) if found is not None else ("", "")
