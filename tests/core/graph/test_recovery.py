"""Recovery files: written and read back whole; a live process's files are not
offered; a dead one's are, and restore the document as it was."""
from __future__ import annotations

import json
import os

from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.recovery import RecoveryStore
from tests.conftest import dead_pid


def test_this_process_files_are_not_orphans_and_a_dead_process_files_are(
        mlp_copy, tmp_path) -> None:
    store = RecoveryStore(str(tmp_path / "recovery"))
    doc = GraphDocument.open(str(mlp_copy))
    fc1 = next(i for i, n in enumerate(doc.nodes) if n.name == "fc1")
    edits.RenameNodeEdit(fc1, "dense1").apply(doc)
    key = store.new_key()
    file = store.write(key, doc)
    assert store.orphans() == []                   # we are alive
    # the same record, written by a process that has ended since
    data = json.loads(open(file).read())
    data["pid"] = dead_pid()
    with open(file, "w") as f:
        json.dump(data, f)
    (tmp_path / "recovery" / "junk.recovery.json").write_text("{not json")
    orphan, = store.orphans()                      # the damaged file is left alone
    assert orphan.path == str(mlp_copy) and "mlp-symbol.json" in orphan.label
    back = RecoveryStore.restore(orphan)
    assert back.to_json() == doc.to_json()
    assert back.param_renames == {"fc1_weight": "dense1_weight", "fc1_bias": "dense1_bias"}
    assert back.params_path == doc.params_path and back.path == doc.path
    RecoveryStore.discard(orphan)
    assert store.orphans() == [] and not os.path.exists(file)
    store.remove(key)                              # gone already: no error
