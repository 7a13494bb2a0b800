"""Writes that survive a kill (issue 24): one file atomic, a checkpoint pair as one
unit, leftovers of a killed save finished, undone or removed at the next start."""
from __future__ import annotations

import json
import os

import mxnet as mx
import pytest

from mxexplorer.core.graph import edits, saving
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import files, tidying
from tests.conftest import dead_pid, killed_save_journal


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
                              saving.params_writer(doc, str(tmp_path / "x-0000.params"))),
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
    said = tidying.tidy(str(journal), [str(folder)])        # killed between the renames
    assert (a.read_text(), b.read_text()) == ("new params", "new symbol")
    assert said == ["finished an interrupted save of m-0000.params, m-symbol.json"]
    assert sorted(os.listdir(folder)) == ["m-0000.params", "m-symbol.json"]
    assert not os.listdir(journal)


def test_an_uncommitted_save_cut_short_is_undone_at_the_next_start(tmp_path) -> None:
    folder, journal, a, b = _interrupted(tmp_path, "writing")
    said = tidying.tidy(str(journal), [str(folder)])
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


def test_a_committed_save_is_not_replayed_over_files_written_since(mlp_copy, tmp_path
                                                                   ) -> None:
    """The journal replays a committed save only over the files it started from: when
    a training script wrote the pair in between, theirs stay and ours is kept beside."""
    journal, _ = killed_save_journal(tmp_path, mlp_copy, "ours1")
    params = mlp_copy.parent / "mlp-0000.params"
    sym, args, aux = mx.model.load_checkpoint(str(mlp_copy)[:-len("-symbol.json")], 0)
    mx.model.save_checkpoint(str(mlp_copy)[:-len("-symbol.json")], 0, sym,
                             {k: v * 2 for k, v in args.items()}, aux)   # theirs
    theirs = mlp_copy.read_bytes(), params.read_bytes()
    said = tidying.tidy(journal, [str(mlp_copy.parent)])
    assert (mlp_copy.read_bytes(), params.read_bytes()) == theirs
    (done,) = said
    assert "was not finished: another program wrote mlp-0000.params, mlp-symbol.json" \
        in done
    kept = sorted(os.path.basename(k) for k in done.kept)
    assert len(kept) == 2 and kept[0].startswith("mlp-recovered-") \
        and kept[0].endswith("-0000.params") and kept[1].endswith("-symbol.json")
    # the kept pair is whole: it loads in MXNet with our edit
    prefix = os.path.join(str(mlp_copy.parent), kept[1][:-len("-symbol.json")])
    sym, args, _ = mx.model.load_checkpoint(prefix, 0)
    assert "ours1_weight" in sym.list_arguments() and "ours1_weight" in args
    assert not [n for n in os.listdir(mlp_copy.parent) if n.endswith(".tmp")]
    assert not os.listdir(journal)


def test_a_committed_save_over_untouched_files_is_still_finished(mlp_copy, tmp_path
                                                                 ) -> None:
    journal, _ = killed_save_journal(tmp_path, mlp_copy, "ours1")
    said = tidying.tidy(journal, [str(mlp_copy.parent)])
    assert said == ["finished an interrupted save of mlp-0000.params, mlp-symbol.json"]
    needed, have = _pair(mlp_copy)
    assert "ours1_weight" in needed and needed <= have


def test_a_save_in_progress_is_safe_from_an_instance_in_another_pid_namespace(
        tmp_path) -> None:
    """Another instance that cannot see this process (another pid namespace, made
    with unshare) tidies the folder while a save writes: its temporaries are locked,
    so they stay, and the save completes."""
    import shutil
    import subprocess
    import sys
    import threading

    from tests.conftest import REPO

    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare, "-Urpf", "--mount-proc", "true"],
                           capture_output=True) if unshare else None
    target = tmp_path / "m-symbol.json"
    target.write_text("old")
    writing, go_on = threading.Event(), threading.Event()
    cleaned: list[str] = []

    def slow(tmp: str) -> None:
        files.write_bytes_to(tmp, b"new")
        writing.set()
        assert go_on.wait(120)

    saver = threading.Thread(target=lambda: files.save_together([(str(target), slow)]))
    saver.start()
    assert writing.wait(120)
    clean = (f"import sys; sys.path.insert(0, {str(REPO)!r}); "
             "from mxexplorer.core.runtime import files; "
             f"print(files.clean_stray_temps({str(tmp_path)!r}))")
    if probe is not None and probe.returncode == 0:
        # the other instance runs where this process's pid does not exist
        cmd = [unshare, "-Urpf", "--mount-proc", sys.executable, "-c", clean]
        seen = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert seen.returncode == 0, seen.stderr
        cleaned.append(seen.stdout.strip())
    else:
        # no user namespaces here: the same tidy, its pid test fooled by a dead pid
        tmp = next(n for n in os.listdir(tmp_path) if n.endswith(".tmp"))
        fake = tmp.replace(f"-{os.getpid()}-", f"-{dead_pid()}-")
        os.rename(tmp_path / tmp, tmp_path / fake)
        files._claimed.discard(str(tmp_path / tmp))
        cleaned.append(str(files.clean_stray_temps(str(tmp_path))))
        os.rename(tmp_path / fake, tmp_path / tmp)
    go_on.set()
    saver.join(120)
    assert cleaned == ["[]"]
    assert target.read_text() == "new"
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_a_save_whose_temporaries_vanished_fails_loudly(tmp_path) -> None:
    a, b = tmp_path / "m-0000.params", tmp_path / "m-symbol.json"
    a.write_text("old params")
    b.write_text("old symbol")

    def removed_by_another_program(tmp: str) -> None:
        files.write_bytes_to(tmp, b"new symbol")
        for name in os.listdir(tmp_path):
            if name.endswith(".tmp"):
                os.unlink(tmp_path / name)

    with pytest.raises(files.SaveLost, match="removed this save's temporary files"):
        files.save_together([(str(a), lambda tmp: files.write_bytes_to(tmp, b"new params")),
                             (str(b), removed_by_another_program)], str(tmp_path / "saves"))
    assert (a.read_text(), b.read_text()) == ("old params", "old symbol")


def test_a_save_over_a_file_written_since_it_was_read_is_refused(mlp_copy) -> None:
    doc = GraphDocument.open(str(mlp_copy))
    edits.RenameNodeEdit(doc.find("fc2")[0], "dense2").apply(doc)
    params = mlp_copy.parent / "mlp-0000.params"
    params.write_bytes(params.read_bytes())               # rewritten: same bytes
    doc.save(str(mlp_copy))                                # a copy of the same: fine
    edits.RenameNodeEdit(doc.find("dense2")[0], "fc2b").apply(doc)
    raw = bytearray(params.read_bytes())
    raw[len(raw) // 2] ^= 1                                # a weight changed
    params.write_bytes(bytes(raw))                         # another program's change
    before = mlp_copy.read_bytes()
    with pytest.raises(files.ChangedOnDisk) as caught:
        doc.save(str(mlp_copy))
    assert [os.path.basename(p) for p in caught.value.paths] == ["mlp-0000.params"]
    assert mlp_copy.read_bytes() == before
    doc.save(str(mlp_copy), force=True)                    # the user's word
    assert "fc2b_weight" in _pair(mlp_copy)[0]


def test_a_replaced_file_keeps_its_group_and_extended_attributes(tmp_path) -> None:
    """A shared (setgid) folder's pair keeps the group and the extended attributes it
    had: the replace is a new file, which took the saver's own group and none of the
    old file's attributes (issue 40's files point)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    target = folder / "m-symbol.json"
    target.write_text("old")
    group = 4242 if os.getuid() == 0 else next(g for g in os.getgroups() if g != os.getgid())
    os.chown(target, -1, group)
    os.setxattr(target, "user.origin", b"training-run-7")
    files.write_atomic(str(target), "new")
    assert target.read_text() == "new"
    assert target.stat().st_gid == group
    assert os.getxattr(target, "user.origin") == b"training-run-7"


def test_a_journal_temporary_left_in_the_state_folder_is_tidied(tmp_path) -> None:
    journal = tmp_path / "saves"
    journal.mkdir()
    left = journal / f".1-1-0{files.JOURNAL_SUFFIX}.mxexplorer-{dead_pid()}-00000000.tmp"
    left.write_text('{"state": "writ')
    tidying.tidy(str(journal), [])
    assert os.listdir(journal) == []
