"""The picture description and graphviz: visible nodes, stable layouts, real dot runs."""
from __future__ import annotations

import math
import threading
import time
import xml.etree.ElementTree as ET

import pytest

from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.render import drawing
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken
from tests.conftest import EXAMPLES, WAIT_S

R18 = EXAMPLES / "resnet18_v1-symbol.json"


@pytest.fixture
def r18() -> GraphDocument:
    return GraphDocument.open(str(R18))


def test_visible_graph_hides_parameters_like_plot_network(r18) -> None:
    hidden = drawing.visible_graph(r18)
    shown = drawing.visible_graph(r18, show_params=True)
    ops = [i for i in r18.order() if not r18.nodes[i].is_variable]
    assert len(hidden.nodes) == len(ops) + 1                      # + data
    assert len(shown.nodes) == len(r18.order())
    assert {n.family for n in hidden.nodes} >= {"input", "convolution", "normalization",
                                                "activation", "pooling", "dense"}
    conv = next(n for n in hidden.nodes if n.title == "Convolution")
    assert conv.detail == "7\u00d77/2, 64"
    pool = next(n for n in hidden.nodes if n.title == "Pooling")
    assert pool.detail == "max 3\u00d73/2"
    fc = next(n for n in hidden.nodes if n.title == "FullyConnected")
    assert fc.detail == "1000"
    # every edge joins two drawn nodes; hiding parameters drops exactly their edges
    ids = {n.id for n in hidden.nodes}
    assert all(e.src in ids and e.dst in ids for e in hidden.edges)
    assert len(shown.edges) - len(hidden.edges) == len(r18.parameters()) + len(r18.aux_states())


def test_layout_source_ignores_names_and_tags_but_not_attributes(r18) -> None:
    base = drawing.layout_source(drawing.visible_graph(r18))
    conv = next(i for i in r18.order() if r18.nodes[i].op == "Convolution")
    edits.RenameNodeEdit(conv, "renamed_conv").apply(r18)
    edits.mirror_stage_edit(r18, (conv,), True).apply(r18)
    graph = drawing.visible_graph(r18)
    assert drawing.layout_source(graph) == base
    assert next(n for n in graph.nodes if n.id == conv).mirror_stage
    edits.set_attr((conv,), "kernel", "(5, 5)").apply(r18)
    assert drawing.layout_source(drawing.visible_graph(r18)) != base


def test_layout_from_dot_plain_covers_every_node_and_edge(r18) -> None:
    graph = drawing.visible_graph(r18)
    layout = drawing.compute_layout(drawing.layout_source(graph))
    assert set(layout.nodes) == {n.id for n in graph.nodes}
    assert len(layout.edges) == len(graph.edges)
    assert all(len(e.points) % 3 == 1 for e in layout.edges)
    data = next(n.id for n in graph.nodes if n.family == "input")
    out = r18.heads[0][0]
    # top to bottom: the input is above the output, inside the drawing
    assert layout.nodes[data].y < layout.nodes[out].y
    for box in layout.nodes.values():
        assert 0 <= box.x <= layout.width and 0 <= box.y <= layout.height


def test_parse_plain_reads_points_with_y_down() -> None:
    text = ("graph 1 2 3\nnode n0 1 2.5 0.5 0.25 <<b>x</b>> filled box black white\n"
            "node n1 1 0.5 0.5 0.25 y filled box black white\n"
            "edge n0 n1 4 1 2.3 1 2 1 1 1 0.7 solid black\nstop\n")
    layout = drawing.parse_plain(text)
    assert layout.width == 144 and layout.height == 216
    assert layout.nodes[0] == drawing.NodeBox(72, 36, 36, 18)
    assert layout.edges[0].points[0] == pytest.approx((72, 216 - 2.3 * 72))


def test_styled_svg_has_ids_colours_shapes_and_legend(r18, tmp_path) -> None:
    conv = next(i for i in r18.order() if r18.nodes[i].op == "Convolution")
    edits.mirror_stage_edit(r18, (conv,), True).apply(r18)
    graph = drawing.visible_graph(r18)
    shapes = {(e.src, e.index): (1, 64, 56, 56) for e in graph.edges}
    out = tmp_path / "r18.svg"
    size = drawing.render_file(drawing.styled_source(r18, graph, shapes), str(out))
    assert size == out.stat().st_size
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    assert {f"n{n.id}" for n in graph.nodes} <= ids
    text = out.read_text()
    assert "1\u00d764\u00d756\u00d756" in text
    assert drawing.MIRROR_COLOUR in text and "mirror stage" in text
    assert drawing.FAMILY_COLOURS["convolution"][0] in text


@pytest.mark.parametrize("ext, magic", [("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_png_and_pdf(r18, tmp_path, ext, magic) -> None:
    out = tmp_path / f"r18.{ext}"
    drawing.render_file(drawing.styled_source(r18, drawing.visible_graph(r18)), str(out))
    assert out.read_bytes()[:4] == magic


def test_unknown_picture_format_is_one_line(tmp_path) -> None:
    with pytest.raises(UserError, match=r"\.svg, \.png or \.pdf"):
        drawing.format_for(str(tmp_path / "x.jpg"))


def test_missing_dot_names_the_install_command(monkeypatch) -> None:
    monkeypatch.setenv("MXEXPLORER_DOT", "/nonexistent/dot")
    assert drawing.dot_program() is None
    with pytest.raises(drawing.GraphvizMissing, match="install it with: .*graphviz"):
        drawing.run_dot("digraph { a }", "plain")


def test_dot_syntax_error_is_one_line() -> None:
    with pytest.raises(UserError, match="graphviz dot failed") as info:
        drawing.run_dot("digraph { a -> }", "plain")
    assert "\n" not in str(info.value)


def _big_source(n: int = 1500) -> str:
    lines = ["digraph g {"]
    for i in range(n):
        lines.append(f"n{i} -> n{(i * 7 + 3) % n}; n{i} -> n{(i * 13 + 5) % n};")
    lines.append("}")
    return "\n".join(lines)


def _stand_in(tmp_path, body: str) -> str:
    """A ``dot`` that does what ``body`` says (Python), for MXEXPLORER_DOT."""
    import sys

    path = tmp_path / "dot"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(0o755)
    return str(path)


LATE_READER = """
time.sleep(0.5)                      # busy with something else before it reads
args = [a for a in sys.argv[1:] if not a.startswith("-")]
source = open(args[0]).read() if args else sys.stdin.read()
out = next((a[2:] for a in sys.argv[1:] if a.startswith("-o")), None)
text = "graph 1 1 1\\n" + "stop\\n"
assert source.rstrip().endswith("}"), "truncated source"
(open(out, "w") if out else sys.stdout).write(text)
"""


def test_a_dot_that_reads_late_gets_its_whole_source(tmp_path, monkeypatch) -> None:
    """The old loop gave ``communicate`` the source once, then None after the first
    50 ms timeout: CPython then stops writing, and a dot that had not read the source
    over the pipe's 64 KiB by then waited on stdin for good."""
    monkeypatch.setenv("MXEXPLORER_DOT", _stand_in(tmp_path, LATE_READER))
    source = "digraph g {\n" + "".join(f"n{i} -> n{i + 1};\n" for i in range(20000)) + "}\n"
    assert len(source) > 4 * 65536
    result: dict = {}

    def run() -> None:
        try:
            result["out"] = drawing.run_dot(source, "plain")
        except BaseException as exc:  # noqa: BLE001 - reported below
            result["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(WAIT_S)
    assert not worker.is_alive(), "run_dot hangs on a dot that reads its input late"
    assert "error" not in result, result.get("error")
    assert result["out"].startswith(b"graph 1 1 1")


def _endless_dot(tmp_path) -> str:
    """A ``dot`` that says where it runs and then never finishes: a shell script (it
    starts in a millisecond, where a Python stand-in took seconds on a busy machine);
    the pid goes to a temporary name, then to ``dot.pid``: a file that is there is
    whole."""
    path = tmp_path / "dot"
    path.write_text('#!/bin/sh\necho $$ > "$DOT_PID_FILE.part"\n'
                    'mv "$DOT_PID_FILE.part" "$DOT_PID_FILE"\nexec sleep 3600\n')
    path.chmod(0o755)
    return str(path)


def _when_exists(path, then) -> threading.Thread:
    """Call ``then()`` once ``path`` exists (checked every 10 ms, for up to WAIT_S)."""
    def watch() -> None:
        deadline = time.monotonic() + WAIT_S
        while not path.exists() and time.monotonic() < deadline:
            stop.wait(0.01)
        then()

    stop = threading.Event()
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _gone(pid_file) -> bool:
    """The stand-in whose pid is in ``pid_file`` has ended (killed, and reaped)."""
    import os

    pid = int(pid_file.read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as fh:          # a zombie waits for its parent
        return fh.read().split()[2] == "Z"


def test_cancel_kills_dot_whatever_it_is_doing(tmp_path, monkeypatch) -> None:
    """State, not time: the cancel comes once dot runs (it has said its pid; a timer
    fired before a busy machine had started it), and the stand-in never ends by
    itself, so a return is the kill."""
    monkeypatch.setenv("MXEXPLORER_DOT", _endless_dot(tmp_path))
    monkeypatch.setenv("DOT_PID_FILE", str(tmp_path / "dot.pid"))
    token = CancelToken()
    watcher = _when_exists(tmp_path / "dot.pid", token.cancel)
    with pytest.raises(Cancelled):
        drawing.run_dot(_big_source(), "plain", token)
    watcher.join(WAIT_S)
    assert _gone(tmp_path / "dot.pid")


def test_a_dot_over_its_time_limit_is_stopped_in_one_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MXEXPLORER_DOT", _endless_dot(tmp_path))
    monkeypatch.setenv("DOT_PID_FILE", str(tmp_path / "dot.pid"))
    with pytest.raises(drawing.DotTimeout, match="did not finish within 1 s"):
        drawing.run_dot("digraph { a }", "plain", time_limit=1.0)
    assert _gone(tmp_path / "dot.pid")


NAN_DOT = """
args = [a for a in sys.argv[1:] if not a.startswith("-")]
out = next((a[2:] for a in sys.argv[1:] if a.startswith("-o")), None)
text = "graph 1 nan 2\\nnode n0 nan 1 1 1 x solid box black lightgrey\\nstop\\n"
(open(out, "w") if out else sys.stdout).write(text)
"""


def test_a_dot_writing_nan_coordinates_gives_our_own_layout(tmp_path, monkeypatch) -> None:
    """A dot printing NaN coordinates put a traceback in the window."""
    monkeypatch.setenv("MXEXPLORER_DOT", _stand_in(tmp_path, NAN_DOT))
    with pytest.raises(UserError, match="a layout mxexplorer cannot read"):
        drawing.parse_plain("graph 1 nan 2\nstop\n")
    doc = GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))
    graph = drawing.visible_graph(doc)
    layout = drawing.compute_layout(drawing.layout_source(graph), graph=graph, time_limit=60)
    assert layout.method == "layered" and "cannot read" in layout.note
    assert all(math.isfinite(b.x) and math.isfinite(b.y) for b in layout.nodes.values())
