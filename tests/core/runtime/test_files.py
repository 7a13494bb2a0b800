"""Writes that survive a kill (issue 24): one file atomic, a checkpoint pair as one
unit, leftovers of a killed save finished, undone or removed at the next start."""
from __future__ import annotations

import json
import os

import mxnet as mx
import pytest

from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import files
from tests.conftest import dead_pid


def _pair(doc_path) -> tuple[set[str], set[str]]:
    """Argument names the symbol file needs and the keys its checkpoint has."""
    sym = mx.sym.load(str(doc_path))
    params = mx.nd.load(str(doc_path).replace("-symbol.json", "-0000.params"))
    needed = {n for n in sym.list_arguments() + sym.list_auxiliary_states()
              if n not in ("data", "softmax_label")}
    return needed, {k.split(":", 1)[1] for k in params}


def test_a_checkpoint_pair_is_saved_as_one_unit(mlp_copy, tmp_path) -> None:
    doc = GraphDocument.open(str(mlp_copy))
    fc1 = doc.find("fc1")[0]
    edits.RenameNodeEdit(fc1, "dense1").apply(doc)
    journal = tmp_path / "saves"
    doc.save(str(mlp_copy), journal_dir=str(journal))
    needed, have = _pair(mlp_copy)
    assert needed <= have and "dense1_weight" in have
    assert not [n for n in os.listdir(mlp_copy.parent) if n.endswith(".tmp")]
    assert not os.listdir(journal)                      # the journal went with the save


def test_a_failing_write_leaves_the_old_pair_and_no_temporary(mlp_copy, tmp_path) -> None:
    before = {p.name: p.read_bytes() for p in mlp_copy.parent.iterdir() if p.is_file()}
    doc = GraphDocument.open(str(mlp_copy))

    def breaks(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        files.save_together([(str(mlp_copy).replace("-symbol.json", "-0000.params"),
                              doc.params_writer(str(tmp_path / "x-0000.params"))),
                             (str(mlp_copy), breaks)], str(tmp_path / "saves"))
    assert {p.name: p.read_bytes() for p in mlp_copy.parent.iterdir() if p.is_file()} == before
    assert not os.listdir(tmp_path / "saves")


def _interrupted(tmp_path, state: str):
    """A save of two files that a kill cut short, after both temporaries were written."""
    folder = tmp_path / "model"
    folder.mkdir()
    a, b = folder / "m-0000.params", folder / "m-symbol.json"
    a.write_text("old params")
    b.write_text("old symbol")
    pid = dead_pid()
    tmp_a = folder / f".m-0000.params.mxexplorer-{pid}-0123abcd.tmp"
    tmp_b = folder / f".m-symbol.json.mxexplorer-{pid}-4567cdef.tmp"
    tmp_a.write_text("new params")
    tmp_b.write_text("new symbol")
    journal = tmp_path / "saves"
    journal.mkdir()
    (journal / f"{pid}-1-0{files.JOURNAL_SUFFIX}").write_text(json.dumps(
        {"state": state, "pid": pid, "started": None,
         "pairs": [[str(tmp_a), str(a)], [str(tmp_b), str(b)]]}))
    return folder, journal, a, b


def test_a_committed_save_cut_short_is_finished_at_the_next_start(tmp_path) -> None:
    folder, journal, a, b = _interrupted(tmp_path, "committed")
    os.replace(folder / next(n for n in os.listdir(folder) if n.startswith(".m-0000")), a)
    said = files.tidy(str(journal), [str(folder)])        # killed between the renames
    assert (a.read_text(), b.read_text()) == ("new params", "new symbol")
    assert said == ["finished an interrupted save of m-0000.params, m-symbol.json"]
    assert sorted(os.listdir(folder)) == ["m-0000.params", "m-symbol.json"]
    assert not os.listdir(journal)


def test_an_uncommitted_save_cut_short_is_undone_at_the_next_start(tmp_path) -> None:
    folder, journal, a, b = _interrupted(tmp_path, "writing")
    said = files.tidy(str(journal), [str(folder)])
    assert (a.read_text(), b.read_text()) == ("old params", "old symbol")
    assert said[0].startswith("undid an interrupted save")
    assert sorted(os.listdir(folder)) == ["m-0000.params", "m-symbol.json"]


def test_only_our_dead_temporaries_are_removed(tmp_path) -> None:
    dead, live = dead_pid(), os.getpid()
    names = [f".a.json.mxexplorer-{dead}-00000000.tmp",     # a killed write: removed
             f".b.json.mxexplorer-{live}-00000000.tmp",     # a write going on now: kept
             ".c.json.mxexplorer-x-00000000.tmp",            # not one of ours: kept
             "d.json"]
    for name in names:
        (tmp_path / name).write_text("x")
    (tmp_path / f".e.json.mxexplorer-{dead}-00000000.tmp").mkdir()   # a folder: kept
    assert files.clean_stray_temps(str(tmp_path)) == [names[0]]
    assert sorted(os.listdir(tmp_path)) == sorted(names[1:] + [
        f".e.json.mxexplorer-{dead}-00000000.tmp"])


def test_each_write_cleans_what_a_killed_one_left_in_its_folder(tmp_path) -> None:
    left = tmp_path / f".x.json.mxexplorer-{dead_pid()}-00000000.tmp"
    left.write_text("half of a killed write")
    files.write_atomic(str(tmp_path / "y.json"), "{}")
    assert sorted(os.listdir(tmp_path)) == ["y.json"]


def test_write_atomic_replaces_and_keeps_original_on_failure(tmp_path) -> None:
    target = tmp_path / "a-symbol.json"
    target.write_text("original")
    target.chmod(0o640)
    files.write_atomic(str(target), "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    # a new file gets what open() would give under the umask, not mkstemp's 0600
    old = os.umask(0o022)
    try:
        files.write_atomic(str(tmp_path / "new.svg"), "x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.svg").stat().st_mode & 0o777 == 0o644
    # a write that cannot happen (the "folder" is a file) raises and leaves no debris
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("keep")
    with pytest.raises(OSError):
        files.write_atomic(str(blocker / "b.json"), "lost?")
    assert blocker.read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".mxexplorer-")] == []
