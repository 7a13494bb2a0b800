"""Whether a checkpoint belongs to its graph (issue 37): a ``prefix-0000.params`` whose
names are not the graph's is said at open, from the file's index alone, with MXNet as
the judge of what the graph asks for and what the file holds."""
from __future__ import annotations

import shutil

import mxnet as mx

from mxexplorer.core.graph import params_file
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import EXAMPLES


def mismatched_pair(folder, symbol=EXAMPLES / "resnet18_v1-symbol.json",
                    params=EXAMPLES / "mlp-0000.params"):
    """ResNet-18's graph beside the example MLP's checkpoint, as ``net-*``: a pair whose
    names do not belong together (both real files)."""
    shutil.copy(symbol, folder / "net-symbol.json")
    shutil.copy(params, folder / "net-0000.params")
    return folder / "net-symbol.json"


def _mxnet_verdict(symbol_path, params_path, data=("data", "softmax_label")):
    """What MXNet itself makes of the pair: the arguments (data and label left out) and
    auxiliary states ``mx.nd.load`` does not give, and the arrays no argument takes."""
    sym = mx.sym.load(str(symbol_path))
    saved = mx.nd.load(str(params_path))
    args = {k[4:] for k in saved if k.startswith("arg:")}
    aux = {k[4:] for k in saved if k.startswith("aux:")}
    lacking_args = [n for n in sym.list_arguments() if n not in data and n not in args]
    lacking_aux = [n for n in sym.list_auxiliary_states() if n not in aux]
    names = set(sym.list_arguments()) | set(sym.list_auxiliary_states())
    unused = [k.split(":", 1)[1] for k in saved if k.split(":", 1)[1] not in names]
    return lacking_args, lacking_aux, unused


def test_a_checkpoint_of_another_graph_is_named_at_open(tmp_path) -> None:
    path = mismatched_pair(tmp_path)
    doc = GraphDocument.open(str(path))
    found = doc.checkpoint_mismatch()
    assert found is not None and found.params_file == str(tmp_path / "net-0000.params")
    lacking_args, lacking_aux, unused = _mxnet_verdict(path, tmp_path / "net-0000.params")
    assert (list(found.lacking_args), list(found.lacking_aux), list(found.unused)) == \
        (lacking_args, lacking_aux, unused)
    assert (len(lacking_args), len(lacking_aux), len(unused)) == (62, 40, 10)
    # short lists: a few names, the rest counted
    words = found.words()
    assert "lacks 62 of the graph's 62 parameters (resnetv10_conv0_weight, " in words
    assert "+59 more" in words and "40 of its 40 auxiliary states" in words and \
        "+37 more" in words
    assert "10 of its 10 arrays are not in the graph (fc1_weight, fc1_bias, bn1_gamma, " \
           "+7 more)" in words
    assert "resnetv10_stage1_conv0_weight" not in words          # not the whole list


def test_the_checkpoint_that_belongs_says_nothing_and_renames_are_followed(
        mlp_copy, tmp_path) -> None:
    doc = GraphDocument.open(str(mlp_copy))
    assert doc.params_path and doc.checkpoint_mismatch() is None
    # a renamed variable keeps its array (the checkpoint's key followed back)
    doc.rename({doc.find("fc1_weight")[0]: "stem_weight"})
    assert doc.checkpoint_mismatch() is None
    # a checkpoint whose keys were renamed by the repo's own writer: one array off
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(EXAMPLES / "mlp-symbol.json", other / "mlp-symbol.json")
    params_file.rename_keys(str(EXAMPLES / "mlp-0000.params"),
                            str(other / "mlp-0000.params"),
                            lambda n: "fc2_b" if n == "fc2_bias" else n)
    found = GraphDocument.open(str(other / "mlp-symbol.json")).checkpoint_mismatch()
    assert found is not None
    assert _mxnet_verdict(other / "mlp-symbol.json", other / "mlp-0000.params") == \
        (["fc2_bias"], [], ["fc2_b"])
    assert (found.lacking_args, found.lacking_aux, found.unused) == \
        (("fc2_bias",), (), ("fc2_b",))
    assert found.headline() == ("mlp-0000.params does not match the graph: it lacks 1 of "
                                "the graph's arrays and holds 1 array the graph does not "
                                "use")
    assert found.words() == ("mlp-0000.params does not match the graph: it lacks 1 of "
                             "the graph's 8 parameters (fc2_bias); 1 of its 10 arrays "
                             "is not in the graph (fc2_b)")


def test_arrays_the_graph_does_not_use_alone_are_said_as_such(tmp_path) -> None:
    """A deploy graph cut before its training head, beside the training checkpoint:
    everything the graph needs is there, one array is left over."""
    sym = mx.sym.load(str(EXAMPLES / "mlp-symbol.json"))
    internals = sym.get_internals()
    cut = internals[internals.list_outputs().index("fc2_output")]
    (tmp_path / "mlp-symbol.json").write_text(cut.tojson())
    shutil.copy(EXAMPLES / "mlp-0000.params", tmp_path / "mlp-0000.params")
    found = GraphDocument.open(str(tmp_path / "mlp-symbol.json")).checkpoint_mismatch()
    assert found is not None and not found.lacking
    assert list(found.unused) == _mxnet_verdict(tmp_path / "mlp-symbol.json",
                                                tmp_path / "mlp-0000.params")[2] \
        == ["fc3_weight", "fc3_bias"]
    assert found.words() == ("mlp-0000.params holds arrays the graph does not use: 2 of "
                             "its 10 arrays are not in the graph (fc3_weight, fc3_bias)")
    assert found.headline() == "mlp-0000.params holds 2 arrays the graph does not use"
