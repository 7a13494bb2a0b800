"""Reading MXNet's bind report: the recomputed operators, found fast and found all."""
from __future__ import annotations

import re

import mxnet as mx
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import memplan, plancost
from tests.conftest import EXAMPLES

#: the pattern :func:`plancost.mirror_names` replaced: its reference
_MIRROR_RE = re.compile(r"^Op:\w+, Name=(.+)_mirror$", re.M)
_NAME = st.text(alphabet=st.sampled_from("ab_0:/-. mirror"), min_size=1, max_size=12)
_LINE = st.one_of(
    st.builds(lambda op, name: f"Op:{op}, Name={name}", st.sampled_from(
        ["Convolution", "Activation", "_backward_Convolution", "BatchNorm"]), _NAME),
    st.builds(lambda op, name: f"Op:{op}, Name={name}_mirror", st.sampled_from(
        ["Convolution", "Activation"]), _NAME),
    st.builds(lambda name: f"\targ[0]={name}(0) version=0", _NAME),
    st.builds(lambda name: f"Variable:{name}_mirror", _NAME),
    st.just("Total 753 MB allocated"),
    st.just(""),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=30), st.booleans())
def test_the_recomputed_names_are_the_reports_mirror_lines(lines, newline) -> None:
    """:func:`plancost.mirror_names` finds the lines' ends first (twice as fast on a
    1001-layer ResNet's 3 MB report): it must agree with the line pattern exactly."""
    report = "\n".join(lines) + ("\n" if newline else "")
    assert plancost.mirror_names(report) == frozenset(_MIRROR_RE.findall(report))


def test_a_real_reports_recomputed_operators() -> None:
    doc = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json"))
    kept = [i for i, n in enumerate(doc.nodes) if not n.is_variable][::9]
    text = symbol_io.dumps(memplan.tagged_dict(doc, memplan.tags_for_kept(doc, kept)))
    exe = mx.sym.load_json(text).simple_bind(mx.cpu(), grad_req="write", data=(2, 3, 64, 64))
    report = exe.debug_str()
    names = plancost.mirror_names(report)
    assert names and names == frozenset(_MIRROR_RE.findall(report))
