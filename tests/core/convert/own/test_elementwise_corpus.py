"""Real files that use the elementwise family, exported whole (random weights) and
judged by MXNet; the slow ones are checked up to the family's own nodes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import mxnet as mx
import pytest

from tests.core.convert.own.harness import agree

ROOT = Path(__file__).resolve().parents[4]
LOCAL, SHARED = ROOT / "benchmarks" / "corpus", ROOT.parent / "shared" / "corpus"


def _load(folder: Path, name: str) -> tuple[str, list[tuple[str, list[int]]]]:
    path = folder / name
    if not path.exists():
        pytest.skip(f"{name} is not here")
    table = json.loads((LOCAL / "shapes.json").read_text())
    return path.read_text(), table[name]


def _shapes(sym: mx.sym.Symbol, spec: list[tuple[str, list[int]]]
            ) -> dict[str, tuple[int, ...]]:
    return {a: tuple(shape) for a in sym.list_arguments() for pattern, shape in spec
            if re.match(pattern, a)}


WHOLE = [(LOCAL, "djl__ssd_512_resnet50_v1-symbol.json"),            # where, *_like, exp
         (LOCAL, "lffd__symbol_10_160_17L_4scales_v1_deploy-symbol.json"),
         (LOCAL, "tornadomeet-face__lightened_cnn-symbol.json"),    # _Maximum
         (LOCAL, "insightface__model-symbol.json"),
         (SHARED, "laurentCoach__Boats-Detection-With-Google-Maps__model__model_algo_1"
                  "-symbol.json")]                                  # smooth_l1, MakeLoss


@pytest.mark.parametrize("folder,name", WHOLE, ids=[n[:40] for _, n in WHOLE])
def test_whole_file(folder, name) -> None:
    text, spec = _load(folder, name)
    agree(text, _shapes(mx.sym.load_json(text), spec))


PARTS = [(LOCAL, "djl__mask_rcnn_resnet18_v1b_coco-symbol.json",
          ["maskrcnn0_rpn0_rpnproposal0_where0", "maskrcnn0_rpn0_rpnproposal0_where1"]),
         (LOCAL, "djl__static_bert_qa-symbol.json",
          ["staticbertencoder0_transformer0_bertpositionwiseffn0_bertlayernorm0_layernorm0"])]


@pytest.mark.parametrize("folder,name,heads", PARTS, ids=[p[1][:30] for p in PARTS])
def test_file_up_to(folder, name, heads) -> None:
    """Up to the named nodes: Mask R-CNN's proposals before box_nms; BERT's first
    encoder layer (attention mask by broadcast_lesser/ones_like/where, div_sqrt_dim,
    batch_dot, the erf GELU)."""
    text, spec = _load(folder, name)
    internals = mx.sym.load_json(text).get_internals()
    for head in heads:
        sym = internals[head + "_output"]
        agree(sym, _shapes(sym, spec))
