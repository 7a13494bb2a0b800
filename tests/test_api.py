"""The public Python API (issue 28): the names users rely on, listed once and checked,
and each verb on real files: open, infer, plan, render, diff, export ONNX."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mxexplorer
from tests.conftest import EXAMPLES, REPO

#: the public names: moving a module under mxexplorer.core must not break any of them
PUBLIC = ["BlockPlan", "Diff", "ExportReport", "Graph", "Inference", "InferenceError",
          "Picture", "PlanReport", "ShapesMissing", "UnsupportedOps", "UserError",
          "__version__", "diff", "example", "load", "memonger", "open", "plan_block"]


def test_the_public_names_are_listed_once_and_all_resolve() -> None:
    assert sorted(mxexplorer.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(mxexplorer, name) is not None, name
    assert callable(mxexplorer.memonger.search_plan)
    with pytest.raises(AttributeError):
        mxexplorer.no_such_name  # noqa: B018


def test_import_mxexplorer_loads_nothing_until_asked(tmp_path) -> None:
    """The command line and the window import the package: the API stays unloaded."""
    code = ("import sys, mxexplorer\n"
            "heavy = [m for m in ('mxexplorer.api', 'mxexplorer.core.graph.document', "
            "'numpy', 'mxnet') if m in sys.modules]\n"
            "g = mxexplorer.open(mxexplorer.example('mlp'))\n"
            "print(heavy, 'mxnet' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[] False"     # and opening a graph needs no MXNet


def test_the_api_works_without_qt_installed(tmp_path) -> None:
    """PySide6 and pyqtgraph made unimportable, as on a machine without them."""
    code = ("import sys\n"
            "class NoQt:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6'):\n"
            "            raise ImportError('no Qt here: ' + name)\n"
            "sys.meta_path.insert(0, NoQt())\n"
            "import mxexplorer\n"
            "from mxexplorer import memonger\n"
            "g = mxexplorer.open(mxexplorer.example('resnet18_v1'))\n"
            "inf = g.infer(data=(1, 3, 224, 224))\n"
            "svg = g.render(shapes={'data': (1, 3, 224, 224)}).data\n"
            "p = g.plan(data=(2, 3, 224, 224), search='fast', isolate=False)\n"
            "print(inf.macs, svg[:5], p.planned_mb < p.baseline_mb)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["1821450216", "b'<?xml'", "True"]


def test_open_lists_what_the_file_holds() -> None:
    g = mxexplorer.open(EXAMPLES / "resnet18_v1-symbol.json")
    assert g.inputs == ["data"] and len(g.internals) == 171
    assert g.ops["Convolution"] == 20
    assert g.info()["internals"] == g.internals
    pair = mxexplorer.open(EXAMPLES / "mlp-0000.params")     # the checkpoint pair
    assert pair.path.endswith("mlp-symbol.json") and pair.params_path.endswith(".params")
    with pytest.raises(mxexplorer.UserError, match="no such file|not found|does not exist"):
        mxexplorer.open(EXAMPLES / "missing-symbol.json")


def test_infer_gives_every_internal_and_the_totals_the_cli_prints(capsys) -> None:
    from mxexplorer.cli import main

    g = mxexplorer.open(mxexplorer.example("resnet18_v1"))
    inf = g.infer(data=(1, 3, 224, 224))
    assert inf.complete and inf.error is None
    assert inf.shapes["resnetv10_dense0_fwd_output"] == (1, 1000)
    assert inf.bytes["resnetv10_dense0_fwd_output"] == 4000
    assert inf.bytes["data"] == 3 * 224 * 224 * 4
    assert inf.flops == 2 * inf.macs and inf.params == 11_689_512
    assert inf.by_op[0]["op"] == "Convolution"
    assert main(["infer", g.path, "--shape", "data=1,3,224,224", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(inf.to_dict()))
    assert "<table>" in inf._repr_html_()


def test_an_inconsistency_raises_naming_the_node() -> None:
    g = mxexplorer.open(mxexplorer.example("mlp"))
    with pytest.raises(mxexplorer.InferenceError) as info:
        g.infer(data=(8, 100))
    assert info.value.node == "fc1" and info.value.op == "FullyConnected"
    assert "fc1" in str(info.value)
    partial = g.infer(data=(8, 100), strict=False)
    assert partial.error is not None and not partial.complete
    with pytest.raises(mxexplorer.InferenceError) as drawn:
        g.render(data=(8, 100))
    assert drawn.value.node == "fc1"


@pytest.fixture(scope="module")
def resnet_plan():
    return mxexplorer.open(mxexplorer.example()).plan(data=(4, 3, 224, 224),
                                                        search="fast")


def test_plan_gives_mxnets_figures_and_a_symbol_that_costs_them(resnet_plan) -> None:
    from mxexplorer import memonger

    p = resnet_plan
    assert p.planned_mb < p.baseline_mb and 0 < p.saving < 1
    assert p.summary.startswith("Training activations need")
    sym = p.symbol()
    tags = [sym.get_internals()[k].attr("force_mirroring")
            for k in range(len(sym.get_internals().list_outputs()))]
    assert "True" in tags
    assert memonger.get_cost(sym, data=(4, 3, 224, 224)) == int(p.planned_mb)
    assert memonger.get_cost(mxexplorer.open(mxexplorer.example()).symbol(),
                             data=(4, 3, 224, 224)) == int(p.baseline_mb)
    assert p.front and all(a.cost_mb <= b.cost_mb for a, b in zip(p.front, p.front[1:]))
    assert json.loads(p.to_json())["nodes"] and p.to_dict()["planned_mb"] == p.planned_mb


def test_within_picks_the_plan_that_recomputes_least_under_a_budget(resnet_plan) -> None:
    p = resnet_plan
    roomy = p.within(p.baseline_mb - 1)
    assert roomy.planned_mb <= p.baseline_mb - 1
    assert roomy.recompute_share <= p.recompute_share
    with pytest.raises(mxexplorer.UserError, match="no plan needs"):
        p.within(1)
    # the unplanned graph fits: it is the plan that recomputes least (nothing)
    unplanned = p.within(p.baseline_mb)
    assert unplanned.plan is None and unplanned.recompute_share == 0
    assert unplanned.planned_mb == p.baseline_mb
    assert "nothing is recomputed" in unplanned.summary
    assert "force_mirroring" not in unplanned.to_json()


def test_without_a_plan_the_graph_is_written_untagged_and_indented(tmp_path) -> None:
    p = mxexplorer.open(mxexplorer.example("mlp")).plan(data=(8, 784), search="fast")
    assert p.plan is None and p.summary.startswith("No plan beats")
    text = p.to_json()
    assert text.startswith("{\n") and "force_mirroring" not in text


def test_save_never_overwrites_without_being_told(tmp_path, resnet_plan) -> None:
    target = tmp_path / "planned-symbol.json"
    resnet_plan.save(str(target))
    with pytest.raises(mxexplorer.UserError, match="exists"):
        resnet_plan.save(str(target))
    resnet_plan.save(str(target), overwrite=True)
    assert mxexplorer.open(target).to_json() == mxexplorer.load(resnet_plan.to_json()).to_json()


def test_render_writes_and_a_notebook_sees_svg(tmp_path) -> None:
    g = mxexplorer.open(mxexplorer.example("resnet18_v1"))
    pic = g.render(str(tmp_path / "net.png"), shapes={"data": (1, 3, 224, 224)})
    assert (tmp_path / "net.png").read_bytes()[:4] == b"\x89PNG" and pic.fmt == "png"
    svg = g._repr_svg_()
    assert svg.startswith("<?xml") and 'id="n' in svg


def test_a_big_graph_shows_in_a_notebook_as_blocks() -> None:
    mx = pytest.importorskip("mxnet")
    net = mx.sym.Variable("data")
    for k in range(100):
        with mx.name.Prefix(f"block{k}_"):
            a = mx.sym.FullyConnected(net, num_hidden=8, name="fc")
            net = mx.sym.Activation(a, act_type="relu", name="relu") + net
    g = mxexplorer.load(net)
    assert sum(g.ops.values()) == 300
    from mxexplorer.api import NOTEBOOK_BLOCKS_ABOVE

    pic = g.render(blocks_above=NOTEBOOK_BLOCKS_ABOVE)
    assert pic.nodes < 300 and "folded into blocks" in pic.notes[0]
    assert g.render(blocks_above=10_000).nodes > 300
    svg = g._repr_svg_()                       # what a notebook shows: the blocks
    assert svg == pic.data.decode() and g._repr_svg_() is svg     # drawn once
    assert "bytes" in repr(pic) and "<?xml" not in repr(pic)


def test_diff_matches_nodes_and_names_what_changed(tmp_path) -> None:
    a = mxexplorer.open(mxexplorer.example("mlp"))
    data = json.loads(a.to_json())
    for node in data["nodes"]:
        if node["name"] == "fc1":
            node["attrs"]["num_hidden"] = "32"
    b = mxexplorer.load(data)
    d = mxexplorer.diff(a, b)
    assert not d.same and bool(d) and d.changed[0]["a"] == "fc1"
    assert "1 changed" in d.summary
    assert mxexplorer.diff(a, a.path).same
    data["nodes"][4]["name"] = "act1"                    # relu1, renamed
    moved = mxexplorer.diff(a, mxexplorer.load(data))
    assert moved.renamed == [("relu1", "act1")] and moved.added == moved.removed == []


@pytest.mark.slow
def test_to_onnx_exports_the_bundled_mlp_and_agrees(tmp_path) -> None:
    pytest.importorskip("onnxruntime")
    g = mxexplorer.open(mxexplorer.example("mlp"))
    report = g.to_onnx(str(tmp_path / "mlp.onnx"), data=(2, 784))
    assert report.check is not None and report.check.agree, report.lines()
    assert any("softmax_label" in fix or "label" in fix for fix in report.fixes)


def test_bad_arguments_are_one_line() -> None:
    g = mxexplorer.open(mxexplorer.example("mlp"))
    with pytest.raises(mxexplorer.UserError, match="whole numbers"):
        g.infer(data=(8, -1))
    with pytest.raises(mxexplorer.ShapesMissing, match="give the input shapes"):
        g.infer()
    with pytest.raises(mxexplorer.UserError, match="for_device"):
        g.plan(data=(8, 784), for_device="tpu")


def test_a_name_used_twice_keeps_every_row() -> None:
    mx = pytest.importorskip("mxnet")
    one = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4, name="fc")
    two = mx.sym.FullyConnected(one, num_hidden=2, name="fc")
    inf = mxexplorer.load(two).infer(data=(5, 3))
    weights = [r["shape"] for r in inf.rows if r["name"] == "fc_weight"]
    assert weights == [[4, 3], [2, 4]] and len(inf.rows) == len(inf.graph.internals)


def test_the_readme_examples_run(monkeypatch) -> None:
    """The README's Python examples are doctests: they run as written (a code fence
    ends an example's expected output, as a blank line does)."""
    import doctest

    monkeypatch.chdir(REPO)
    text = "\n".join("" if line.startswith("```") else line
                     for line in (REPO / "README.md").read_text().splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, "README.md", "README.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS
                                   | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 30 and result.failed == 0


def test_a_plan_made_in_the_callers_process_never_forks_it(monkeypatch) -> None:
    """``isolate=False`` runs the search here, in a notebook's kernel say: "best" then
    runs its two searches in turn rather than forking the caller's process (the
    isolated child it forks is ours)."""
    from mxexplorer.core.runtime import forked

    def no_fork(*args, **kwargs):
        raise AssertionError("the caller's process was forked")

    monkeypatch.setattr(forked, "Beside", no_fork)
    g = mxexplorer.open(EXAMPLES / "resnet18_v1-symbol.json")
    report = g.plan(data=(2, 3, 64, 64), search="best", isolate=False)
    assert report.complete and report.planned_mb < report.baseline_mb
