"""The faults of MXNet 1.9.1's ONNX converters, fixed on the way in: passes over the
graph's JSON before conversion (training heads and losses, heads only training has,
FullyConnected's flatten and Deconvolution's no_bias, heads listed twice, fix_gamma
BatchNorms, a label named like the output's, MultiBoxPrior anchors, Reshape's special
values, RNNs without state outputs, SliceChannels of more than 100 outputs) and over the
ONNX model after it (PReLU slopes).  Each returns the report's sentences for what it
fixed."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph import opinfo
from mxexplorer.core.runtime.errors import UserError


def fixed_note(names: list[str], what: str) -> list[str]:
    """The report's sentence for one kind of fix: how many, the first names, what."""
    if not names:
        return []
    more = ", ..." if len(names) > 3 else ""
    return [f"{len(names)} {what.format(names=', '.join(names[:3]) + more)}"]


#: attributes MXNet's converters read as False when missing, with MXNet's default
MISSING_DEFAULTS = {"FullyConnected": ("flatten", "True", "the converter reads the missing "
                                       "attribute as False and multiplies a 4-D input "
                                       "without flattening it"),
                    "Deconvolution": ("no_bias", "True", "the converter reads the missing "
                                      "attribute as False and asks for a bias input")}


def fix_flatten(graph: dict[str, Any]) -> list[str]:
    """FullyConnected without a ``flatten`` attribute given ``flatten=True`` and
    Deconvolution without ``no_bias`` given ``no_bias=True``, MXNet's defaults, which
    its converters read as False (onnxruntime then refused the Gemm; the Deconvolution
    converter stopped: "takes 3 input if no_bias==False")."""
    notes = []
    for op, (key, value, why) in MISSING_DEFAULTS.items():
        fixed = []
        for node in graph["nodes"]:
            if node.get("op") == op:
                attrs = node.setdefault("attrs", {})
                if key not in attrs:
                    attrs[key] = value
                    fixed.append(node["name"])
        notes += fixed_note(fixed, f"{op} node(s) ({{names}}) given {key}={value}, MXNet's "
                                   f"default ({why})")
    return notes


def fix_rnn_state_outputs(graph: dict[str, Any]) -> list[str]:
    """RNNs with ``state_outputs=False`` (MXNet's converter refuses them) asked for
    their final states too: the states become outputs 1 and 2, which nothing reads, so
    output 0, the only one the graph uses, is unchanged."""
    fixed = []
    for node in graph["nodes"]:
        attrs = opinfo.node_attrs(node)
        if node.get("op") == "RNN" and not opinfo.flag(attrs, "state_outputs"):
            node["attrs"] = {**attrs, "state_outputs": "True"}
            node.pop("param", None)
            fixed.append(node["name"])
    return fixed_note(fixed, "RNN node(s) ({names}) exported with state_outputs=True "
                         "(MXNet's converter refuses False; the states it adds are read by "
                         "nothing, the output the graph uses is the same)")


#: hidden attribute (MXNet's op ignores ``__x__`` keys): softmax over all but axis 0
FLATTENED = "__mxexplorer_flattened__"
#: training heads whose inference output is a plain function of their data input
HEADS = {"LinearRegressionOutput": ("_copy", "its data (identity)"),
         "MAERegressionOutput": ("_copy", "its data (identity)"),
         "SVMOutput": ("_copy", "its data (identity)"),
         "LogisticRegressionOutput": ("sigmoid", "sigmoid")}
#: losses with no inference meaning: the graph that feeds them is exported
LOSSES = frozenset({"CTCLoss", "_contrib_CTCLoss", "ctc_loss", "_contrib_ctc_loss"})
#: ops that pass their data through at inference, between a loss and the heads
PASS_THROUGH = frozenset({"MakeLoss", "make_loss", "BlockGrad", "stop_gradient", "_copy"})


def _label_note(nodes: list[dict[str, Any]], node: dict[str, Any]) -> str:
    labels = [nodes[i[0]].get("name", "?") for i in node.get("inputs", [])[1:]]
    quoted = ", ".join(f"'{name}'" for name in labels)
    return f"; its label input {quoted} dropped" if labels else ""


def fix_training_heads(graph: dict[str, Any], rank: Callable[[str], int | None]
                       ) -> list[str]:
    """Training heads become their inference meaning, their label inputs dropped (MXNet's
    converter skipped a label without recording it, then looked it up by position:
    IndexError, apache/mxnet#13407).  ``SoftmaxOutput`` becomes ``softmax`` over axis 1
    (``multi_output``), the last (``preserve_shape``, 2-D data) or, on n-D data, every
    axis but the batch (marked by a hidden attribute our converter reads, as MXNet
    documents it and computes it on GPU: its CPU build's oneDNN kernel takes the last
    axis of 4-D data); the regression and SVM outputs become their data, or its
    sigmoid.  ``rank(node name)``: the rank of that node's
    data input."""
    nodes = graph["nodes"]
    notes = []
    for node in nodes:
        op = node.get("op")
        if op != "SoftmaxOutput" and op not in HEADS:
            continue
        dropped = _label_note(nodes, node)
        if op == "SoftmaxOutput":
            attrs = opinfo.node_attrs(node)
            flag = {k: opinfo.flag(attrs, k) for k in ("multi_output", "preserve_shape")}
            new, node["attrs"] = "softmax", {"axis": "1" if flag["multi_output"] else "-1"}
            flattened = not any(flag.values()) and rank(node["name"]) != 2
            if flattened:                     # read by our softmax converter (onnx_ops)
                node["attrs"][FLATTENED] = "1"
            meaning = "softmax over axis 1" if flag["multi_output"] else \
                "softmax over every axis but the batch" if flattened else "softmax"
            if flattened and rank(node["name"]) == 4:
                meaning += (", as MXNet documents it and computes it on GPU and in "
                            "training; its CPU oneDNN kernel takes the last axis of 4-D "
                            "data at inference, so a check on CPU differs there")
        else:
            new, meaning = HEADS[op]
            node["attrs"] = {}
        node["op"] = new
        node.pop("param", None)
        node.pop("attr", None)
        node["inputs"] = node["inputs"][:1]
        notes.append(f"{op} '{node['name']}' exported as {meaning} (its inference "
                     f"meaning){dropped}")
    return notes


def fix_loss_heads(graph: dict[str, Any]) -> list[str]:
    """A head that is a loss (``CTCLoss``; through ``MakeLoss`` or ``BlockGrad``) has no
    inference meaning: the output that feeds the loss is exported in its place."""
    nodes, notes = graph["nodes"], []
    heads = []
    for head in graph.get("heads", []):
        node, k = nodes[head[0]], head[0]
        while node.get("op") in PASS_THROUGH and node.get("inputs"):
            k = node["inputs"][0][0]
            node = nodes[k]
        if node.get("op") in LOSSES and node.get("inputs"):
            fed = node["inputs"][0]
            heads.append(list(fed))
            notes.append(f"{node['op']} '{node['name']}' is a training loss: the output "
                         f"that feeds it ('{nodes[fed[0]].get('name')}') is exported in "
                         "its place")
        else:
            heads.append(head)
    graph["heads"] = heads
    return notes


#: ops whose outputs are training targets made from the labels
TARGETS = frozenset({"_contrib_MultiBoxTarget", "MultiBoxTarget"})
#: training heads whose label inputs fix_training_heads drops
LABELLED = frozenset({"SoftmaxOutput", *HEADS})


def _reads(nodes: list[dict[str, Any]], start: int) -> set[int]:
    """The nodes ``start`` reads (itself included), the labels of training heads left
    out (the export drops them)."""
    seen: set[int] = set()
    todo = [start]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        inputs = nodes[k].get("inputs", [])
        todo.extend(i[0] for i in (inputs[:1] if nodes[k].get("op") in LABELLED else inputs))
    return seen


def exported_names(graph: dict[str, Any]) -> set[str]:
    """Names of the nodes the heads read, the labels of training heads left out."""
    nodes = graph["nodes"]
    return {nodes[k].get("name", "") for head in graph.get("heads", [])
            for k in _reads(nodes, head[0])}


def drop_training_heads(graph: dict[str, Any]) -> list[str]:
    """Heads with no inference meaning dropped (SSD's training graph): the targets
    ``MultiBoxTarget`` makes from the labels (a head through BlockGrad or MakeLoss), and
    a loss (``MakeLoss`` with a gradient) computed from such targets or from a label.
    Neither can be computed without labels.  Kept when no head would be left; a CTC
    loss is left to :func:`fix_loss_heads`."""
    nodes, keep, notes = graph["nodes"], [], []
    for head in graph.get("heads", []):
        k, loss = head[0], False
        while nodes[k].get("op") in PASS_THROUGH and nodes[k].get("inputs"):
            attrs = nodes[k].get("attrs", nodes[k].get("param", {})) or {}
            loss |= nodes[k]["op"] in ("MakeLoss", "make_loss") and \
                float(attrs.get("grad_scale", 1)) != 0
            k = nodes[k]["inputs"][0][0]
        name, node = nodes[head[0]].get("name"), nodes[k]
        read = [nodes[j] for j in sorted(_reads(nodes, k))]
        fed = [n for n in read if n.get("op") in TARGETS] + \
            [n for n in read if n.get("op") == "null" and n.get("name", "").endswith("label")]
        if node.get("op") in TARGETS:
            notes.append(f"head '{name}' dropped: the training targets {node['op']} "
                         f"'{node['name']}' makes from the labels: no inference meaning")
        elif loss and fed and node.get("op") not in LOSSES:
            notes.append(f"head '{name}' dropped: a training loss ({node.get('op')} "
                         f"'{node.get('name')}') computed from the labels (it reads "
                         f"'{fed[0].get('name')}'): no inference meaning")
        else:
            keep.append(head)
    if not keep:
        return []
    graph["heads"] = keep
    return notes


def rename_input(graph: dict[str, Any], old: str, new: str) -> list[str]:
    """Variable ``old`` renamed ``new``: MXNet's converter drops an input named like its
    last node's label (``softmax_label`` after ``softmax``) even when another node, such
    as a margin head's ``one_hot``, still reads it."""
    for node in graph["nodes"]:
        if node.get("op") == "null" and node.get("name") == old:
            node["name"] = new
    return [f"input '{old}' is named '{new}' in the ONNX file (MXNet's converter drops an "
            "input named like the last node's label, but the graph still reads it)"]


def fold_priors(graph: dict[str, Any], original: Any, shapes: Mapping[str, Shape],
                params: dict[str, Any], mx: Any) -> list[str]:
    """``MultiBoxPrior`` anchors depend only on shapes: each is computed by MXNet at the
    shapes given and exported as a constant."""
    folded = []
    internals = original.get_internals()
    listed = internals.list_outputs()
    for node in graph["nodes"]:
        if node.get("op") != "_contrib_MultiBoxPrior":
            continue
        entry = internals[listed.index(f"{node['name']}_output")]
        known = {k: tuple(v) for k, v in shapes.items() if k in entry.list_arguments()}
        exe = entry.simple_bind(mx.cpu(), grad_req="null", **known)
        params[node["name"]] = exe.forward(is_train=False)[0].copy()
        node.update(op="null", inputs=[], attrs={})
        node.pop("param", None)
        folded.append(node["name"])
    return fixed_note(folded, "MultiBoxPrior node(s) ({names}) exported as constants: their "
                              "anchors depend only on the shapes given")


#: MXNet's converter records a node's outputs by the names ``name``, ``name0`` ...
#: ``name99`` only: a node reading output 100 or later finds none (IndexError)
MAX_OUTPUTS = 100


def split_wide_slices(graph: dict[str, Any], renamed: dict[str, str]) -> list[str]:
    """A ``SliceChannel`` of more than 100 outputs, one past the 100th read (an LSTM
    unrolled over 200 steps), split in two levels: G groups (no squeeze), each split in
    N / G as the node was; a reader of output k reads piece k mod N/G of group k div
    N/G.  The nodes are renumbered (the new ones come right after the old node's place);
    a head that was such an output is put in ``renamed`` (new entry: original entry).

    Raises
    ------
    UserError : N has no factors that make both levels 100 outputs or fewer.
    """
    nodes = graph["nodes"]
    read = {(e[0], e[1]) for n in nodes for e in n.get("inputs", [])} | \
        {(h[0], h[1]) for h in graph.get("heads", [])}
    wide: dict[int, tuple[int, int, dict[str, Any]]] = {}      # node: (groups, size, attrs)
    for k, node in enumerate(nodes):
        if node.get("op") != "SliceChannel" or \
                not any(j >= MAX_OUTPUTS for n, j in read if n == k):
            continue
        attrs = dict(node.get("attrs", node.get("attr", node.get("param", {}))) or {})
        count = int(attrs.get("num_outputs", 1))
        groups = next((g for g in range(2, MAX_OUTPUTS + 1)
                       if count % g == 0 and count // g <= MAX_OUTPUTS), None)
        if groups is None:
            raise UserError(f"SliceChannel '{node['name']}' has {count} outputs, and MXNet's "
                            f"ONNX converter records at most {MAX_OUTPUTS} outputs of a node "
                            f"({count} does not split into at most {MAX_OUTPUTS} groups of at "
                            f"most {MAX_OUTPUTS})")
        wide[k] = (groups, count // groups, attrs)
    if not wide:
        return []
    placed: dict[int, int] = {}              # old node: its new index (the outer split's)

    def entry(e: list[int]) -> list[int]:
        if e[0] not in wide:
            return [placed[e[0]], *e[1:]]
        size = wide[e[0]][1]
        return [placed[e[0]] + 1 + e[1] // size, e[1] % size, 0]

    out: list[dict[str, Any]] = []
    for k, node in enumerate(nodes):
        node["inputs"] = [entry(e) for e in node.get("inputs", [])]
        placed[k] = len(out)
        if k not in wide:
            out.append(node)
            continue
        groups, size, attrs = wide[k]
        name = node["name"]
        out.append({"op": "SliceChannel", "name": f"{name}__groups", "inputs": node["inputs"],
                    "attrs": {**attrs, "num_outputs": str(groups), "squeeze_axis": "False"}})
        out += [{"op": "SliceChannel", "name": f"{name}__group{j}",
                 "inputs": [[placed[k], j, 0]], "attrs": {**attrs, "num_outputs": str(size)}}
                for j in range(groups)]
    graph["nodes"] = out
    graph["arg_nodes"] = [placed[k] for k in graph.get("arg_nodes", [])]
    for h in graph.get("heads", []):
        if h[0] in wide:
            size = wide[h[0]][1]
            renamed[f"{nodes[h[0]]['name']}__group{h[1] // size}_output{h[1] % size}"] = \
                f"{nodes[h[0]]['name']}_output{h[1]}"
    graph["heads"] = [entry(h) for h in graph.get("heads", [])]
    graph.pop("node_row_ptr", None)
    return fixed_note([nodes[k]["name"] for k in wide],
                      "SliceChannel node(s) ({names}) of more than 100 outputs split in two "
                      "levels (MXNet's converter records at most 100 outputs of a node)")


def fix_duplicate_heads(graph: dict[str, Any]) -> list[str]:
    """A graph that lists the same output twice among its heads: ONNX has one output
    per name, so the converter wrote it once and the check found no second."""
    seen, heads, twice = set(), [], []
    for head in graph.get("heads", []):
        key = (head[0], head[1])
        if key in seen:
            twice.append(graph["nodes"][head[0]].get("name", str(head[0])))
            continue
        seen.add(key)
        heads.append(head)
    graph["heads"] = heads
    return fixed_note(twice, "output(s) of ({names}) listed again among the heads, exported "
                         "once (ONNX names each output once)")


class InputRanks:
    """``ranks(node name)``: the rank of that node's first input at ``shapes`` (None:
    unknown), from one partial inference of the whole graph (a node's own inputs alone
    may not determine it: a label's shape comes from the head it feeds).  Shapes of
    names the graph lacks (a label dropped with its head) are left out: MXNet refuses
    the whole inference for one unknown name."""

    def __init__(self, sym: Any, shapes: Mapping[str, Shape]):
        arguments = set(sym.list_arguments())
        self.sym = sym
        self.shapes = {k: v for k, v in shapes.items() if k in arguments}
        self._by_entry: dict[str, Shape] | None = None

    def __call__(self, name: str) -> int | None:
        shape = self.input_shape(name)
        return len(shape) if shape else None

    def input_shape(self, name: str) -> Shape | None:
        """The inferred shape of node ``name``'s first input; None: unknown."""
        try:
            child = self._internals()[f"{name}_output"].get_children()[0].list_outputs()[0]
        except Exception:  # noqa: BLE001 - unknown: the fix is not made
            return None
        return self.entry(child)

    def entry(self, entry: str) -> Shape | None:
        """The inferred shape of one output entry (``conv0_output``); None: unknown."""
        try:
            self._internals()
        except Exception:  # noqa: BLE001 - unknown: the fix is not made
            return None
        shape = (self._by_entry or {}).get(entry)
        return tuple(shape) if shape and all(shape) else None

    def _internals(self) -> Any:
        internals = self.sym.get_internals()
        if self._by_entry is None:
            _, out, _ = internals.infer_shape_partial(**self.shapes)
            self._by_entry = dict(zip(internals.list_outputs(), out))
        return internals


#: Reshape's special values MXNet's converter refuses (split, merge, copy the rest)
SPECIAL_RESHAPE = frozenset({-2, -3, -4})


def fix_special_reshapes(graph: dict[str, Any], shapes: InputRanks) -> list[str]:
    """``Reshape`` with -2, -3 or -4 (CRNN's batch split, ShuffleNet's channel shuffle),
    which MXNet's converter refuses: given the output shape MXNet infers at the shapes
    given (the ONNX file is made for those shapes)."""
    fixed = []
    for node in graph["nodes"]:
        if node.get("op") not in ("Reshape", "reshape"):
            continue
        attrs = opinfo.node_attrs(node)
        wanted = set(opinfo.tuple_attr(attrs, "shape") or ())
        out = shapes.entry(f"{node['name']}_output")
        if not wanted & SPECIAL_RESHAPE or out is None:
            continue
        node["attrs"] = {"shape": str(tuple(out))}
        node.pop("param", None)
        fixed.append(node["name"])
    return fixed_note(fixed, "Reshape node(s) ({names}) given their inferred shape (MXNet's "
                             "converter refuses -2, -3 and -4)")


def fix_gamma(graph: dict[str, Any], params: dict[str, Any], mx: Any) -> list[str]:
    """Gammas of ``fix_gamma=True`` BatchNorms set to 1 (what MXNet computes with)."""
    nodes = graph["nodes"]
    fixed = []
    for node in nodes:
        if node.get("op") != "BatchNorm":
            continue
        attrs = node.get("attrs", node.get("attr", node.get("param", {}))) or {}
        if str(attrs.get("fix_gamma", "True")).lower() not in ("true", "1"):
            continue
        gamma = nodes[node["inputs"][1][0]]["name"] if len(node["inputs"]) > 1 else None
        if gamma in params and float(mx.nd.abs(params[gamma] - 1).max().asscalar()) > 0:
            params[gamma] = mx.nd.ones_like(params[gamma])
            fixed.append(node["name"])
    return fixed_note(fixed, "BatchNorm node(s) with fix_gamma=True ({names}) exported with "
                         "gamma 1, the value MXNet computes with (the converter would "
                         "export the stored gamma)")


def fix_prelu(onnx: Any, model: Any, rank: Callable[[str], int | None]) -> list[str]:
    """PRelu slopes of shape (C,) reshaped to (C, 1, ...) for their input's rank (4 when
    unknown): ONNX broadcasts from the last axis, so a per-channel slope on NCHW data
    fails in onnxruntime; on (N, C) data (C,) is right as it is."""
    from onnx import numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    fixed = []
    for node in model.graph.node:
        if node.op_type != "PRelu" or len(node.input) < 2 or node.input[1] not in inits:
            continue
        tensor, ndim = inits[node.input[1]], rank(node.name) or 4
        if len(tensor.dims) == 1 and tensor.dims[0] > 1 and ndim > 2:
            value = numpy_helper.to_array(tensor).reshape((-1,) + (1,) * (ndim - 2))
            tensor.CopyFrom(numpy_helper.from_array(value, tensor.name))
            for given in model.graph.input:        # the converter lists it as an input too
                if given.name == tensor.name:
                    dims = given.type.tensor_type.shape.dim
                    del dims[:]
                    for d in value.shape:
                        dims.add().dim_value = int(d)
            fixed.append(node.name)
    return fixed_note(fixed, "PRelu slope(s) ({names}) reshaped from (C,) to (C, 1, ...), the "
                         "per-channel broadcast MXNet does (onnxruntime refused them)")


@contextlib.contextmanager
def no_inner_check(onnx: Any) -> Iterator[None]:
    """MXNet's converter checks the graph it made against the onnx package's newest
    opset, whatever opset it was asked for (a ``mean`` with ``axis`` failed: ReduceMean
    took ``axes`` as an input from opset 18).  Its check is skipped while it converts;
    the model is checked whole, at its own opset, right after."""
    checker = onnx.checker
    inner = checker.check_graph
    checker.check_graph = lambda *args, **kwargs: None
    try:
        yield
    finally:
        checker.check_graph = inner
