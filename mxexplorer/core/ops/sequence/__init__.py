"""Rules for the sequence family: the recurrent layer, the ops that walk a sequence and
the control-flow ops, as MXNet 1.9.1 infers their shapes and dtypes.

Owns ``RNN`` (modes ``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``; stacked, bidirectional,
with a projection, the state outputs and the ``sequence_length`` input; the flat
``parameters`` vector's length computed from the data as MXNet's ``GetRnnParamSize``
does, 32-bit arithmetic and an unknown input size of -1 included), ``SequenceMask``,
``SequenceLast`` and ``SequenceReverse``: they infer forward only (nothing comes back
from the outputs), refill their outputs rather than merge them, wait for (or, the
sequence ops, refuse) a data of unknown shape, and refuse a data of unknown dtype.
``_rnn_param_concat`` belongs to the layout family, with ``Concat``.

Also owns ``_foreach``, ``_while_loop`` and ``_cond``, whose rules run the engine's pass
over the graphs in the node's ``subgraphs`` field (MXNet's ``InferSubgraphShape`` and
``InferSubgraphDataType``; an inner op without a rule is asked of the pass's oracle):
``_foreach`` infers its shapes (one step of each sequence through the body, the outputs
stacked again, both ways) and dtypes; ``_while_loop`` and ``_cond`` have no shape rule
in MXNet (their outputs' shapes depend on the data, so they stay unknown) and infer
dtypes through their condition, body and branch graphs.  Messages name the attribute or
input at fault.  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.recurrent` (RNN and the Sequence* ops) and
:mod:`.control_flow` (``_foreach``, ``_while_loop``, ``_cond``); :mod:`.helpers` holds
what they (and the detection family) share.  This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule, Shape
from mxexplorer.core.ops.sequence import control_flow, recurrent
from mxexplorer.core.ops.sequence.helpers import count_inputs, no_negative, put_out
from mxexplorer.core.ops.sequence.recurrent import rnn_inputs, rnn_param_size

RULES: dict[str, Rule] = {
    **recurrent.RULES,
    **control_flow.RULES,
}

__all__ = ["RULES", "Shape", "count_inputs", "no_negative", "put_out", "rnn_inputs",
           "rnn_param_size"]
