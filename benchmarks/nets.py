"""Networks the benchmarks measure, written to a cache folder on first use.

* ``resnet152_v1``: the Gluon model-zoo export (random weights, 1,392 internals).
* ``resnet1001``: a pre-activation bottleneck ResNet-1001 for 32x32 inputs
  (He et al. 2016), built with ``mx.sym`` (about 8,300 internals);
  ``resnet1001_tagged`` the same with the memonger example's hand tags.
"""
from __future__ import annotations

import os
import tempfile

#: real files of ../shared/corpus: an unrolled LSTM (6,084 nodes) and a
#: sequence-to-sequence model (22,747 internals)
CORPUS_NETS = {
    "lstm6000": "lucasjinreal__Char-Generator-LSTM__obama-symbol.json",
    "seq2seq22k": "decompositional-semantics-initiative__ParaBank-rewriter__symbol.json",
}
CACHE = os.environ.get("MXEXPLORER_BENCH_CACHE",
                       os.path.join(tempfile.gettempdir(), "mxexplorer-bench"))


def _unit(mx, data, num_filter, stride, dim_match, name):
    bn1 = mx.sym.BatchNorm(data, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + "_bn1")
    act1 = mx.sym.Activation(bn1, act_type="relu", name=name + "_relu1")
    conv1 = mx.sym.Convolution(act1, num_filter=num_filter // 4, kernel=(1, 1), no_bias=True,
                               name=name + "_conv1")
    bn2 = mx.sym.BatchNorm(conv1, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + "_bn2")
    act2 = mx.sym.Activation(bn2, act_type="relu", name=name + "_relu2")
    conv2 = mx.sym.Convolution(act2, num_filter=num_filter // 4, kernel=(3, 3), stride=stride,
                               pad=(1, 1), no_bias=True, name=name + "_conv2")
    bn3 = mx.sym.BatchNorm(conv2, fix_gamma=False, eps=2e-5, momentum=0.9, name=name + "_bn3")
    act3 = mx.sym.Activation(bn3, act_type="relu", name=name + "_relu3")
    conv3 = mx.sym.Convolution(act3, num_filter=num_filter, kernel=(1, 1), no_bias=True,
                               name=name + "_conv3")
    if dim_match:
        shortcut = data
    else:
        shortcut = mx.sym.Convolution(act1, num_filter=num_filter, kernel=(1, 1), stride=stride,
                                      no_bias=True, name=name + "_sc")
    return mx.sym.elemwise_add(conv3, shortcut, name=name + "_plus")


def resnet_cifar(depth: int = 1001, num_classes: int = 10, hand_tags: bool = False):
    """A pre-activation bottleneck ResNet of ``depth`` layers for 32x32 images;
    ``hand_tags``: every unit's output tagged ``mirror_stage``, as the memonger paper's
    example does."""
    import mxnet as mx

    units = (depth - 2) // 9
    filters = [16, 64, 128, 256]
    data = mx.sym.var("data")
    body = mx.sym.Convolution(data, num_filter=filters[0], kernel=(3, 3), pad=(1, 1),
                              no_bias=True, name="conv0")
    for stage in range(3):
        stride = (1, 1) if stage == 0 else (2, 2)
        body = _unit(mx, body, filters[stage + 1], stride, False, f"stage{stage + 1}_unit1")
        for i in range(2, units + 1):
            body = _unit(mx, body, filters[stage + 1], (1, 1), True, f"stage{stage + 1}_unit{i}")
            if hand_tags:
                body._set_attr(mirror_stage="True")
    bn = mx.sym.BatchNorm(body, fix_gamma=False, eps=2e-5, momentum=0.9, name="bn1")
    relu = mx.sym.Activation(bn, act_type="relu", name="relu1")
    pool = mx.sym.Pooling(relu, global_pool=True, kernel=(8, 8), pool_type="avg", name="pool1")
    flat = mx.sym.Flatten(pool, name="flatten")
    fc = mx.sym.FullyConnected(flat, num_hidden=num_classes, name="fc1")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def network(name: str) -> str:
    """Path of the ``-symbol.json`` for ``name`` (built on first use; the corpus's
    files for ``lstm6000`` and ``seq2seq22k``)."""
    if name in CORPUS_NETS:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return os.path.join(os.path.dirname(root), "shared", "corpus", CORPUS_NETS[name])
    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, f"{name}-symbol.json")
    if os.path.exists(path):
        return path
    import mxnet as mx

    if name in ("resnet1001", "resnet1001_tagged"):
        resnet_cifar(1001, hand_tags=name.endswith("tagged")).save(path)
        return path
    from mxnet.gluon.model_zoo import vision

    size = 299 if name.startswith("inception") else 224
    net = vision.get_model(name, pretrained=False)
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3, size, size)))
    net.export(os.path.join(CACHE, name))
    return path


def run_child(script: str, path: str) -> str:
    """Run ``script --child PATH`` in a fresh process (offscreen unless a display is
    set), as a user starts the program; returns its stdout."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    env.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "")
    return subprocess.run([sys.executable, script, "--child", path], env=env,
                          capture_output=True, text=True, check=True).stdout


def child_result(script: str, name: str) -> dict:
    """Run ``script --child`` on network ``name``; the JSON object it printed last."""
    import json

    base, _, flag = name.partition("#")
    out = run_child(script, network(base) + (f"#{flag}" if flag else ""))
    return json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
