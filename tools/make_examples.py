"""Regenerate the networks in mxexplorer/resources/examples/ (needs MXNet 1.9.1).

* ``resnet18_v1-symbol.json``: a Gluon model-zoo ResNet-18 export (no weights shipped).
* ``mlp-symbol.json`` + ``mlp-0000.params``: a small checkpoint pair, with random weights.
"""
from __future__ import annotations

import os
import tempfile

import mxnet as mx
from mxnet.gluon.model_zoo import vision

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "mxexplorer", "resources", "examples")


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    mx.random.seed(0)
    net = vision.get_model("resnet18_v1", pretrained=False)
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224)))
    with tempfile.TemporaryDirectory() as tmp:
        net.export(os.path.join(tmp, "resnet18_v1"))
        os.replace(os.path.join(tmp, "resnet18_v1-symbol.json"),
                   os.path.join(OUT, "resnet18_v1-symbol.json"))

    data = mx.sym.var("data")
    x = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    x = mx.sym.Activation(x, act_type="relu", name="relu1")
    x = mx.sym.BatchNorm(x, name="bn1")
    x = mx.sym.FullyConnected(x, num_hidden=32, name="fc2")
    x = mx.sym.Activation(x, act_type="relu", name="relu2")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    sym = mx.sym.SoftmaxOutput(x, name="softmax")
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", (1, 784))], label_shapes=[("softmax_label", (1,))])
    mod.init_params(mx.init.Xavier())
    mod.save_checkpoint(os.path.join(OUT, "mlp"), 0)


if __name__ == "__main__":
    main()
