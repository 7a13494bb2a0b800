"""Rules for the training family: the optimizer updates a symbol graph may hold, the
finiteness checks of mixed-precision training, the sparse-storage helpers, the
data-dependent boolean mask and the DGL graph ops, as MXNet 1.9.1 infers their shapes
and dtypes.

Owns ``sgd_update``, ``sgd_mom_update``, ``mp_sgd_update``, ``nag_mom_update``,
``signsgd_update``, ``signum_update``, ``rmsprop_update``, ``rmspropalex_update``,
``adam_update``, ``ftml_update``, ``ftrl_update``, ``lamb_update_phase1``,
``lamb_update_phase2``, ``mp_lamb_update_phase1``, ``mp_lamb_update_phase2``,
``mp_nag_mom_update``, ``mp_sgd_mom_update``, ``_adamw_update``, ``_mp_adamw_update``,
``_sparse_adagrad_update``, ``_contrib_group_adagrad_update``, ``multi_lars`` and
``cast_storage`` (:mod:`.updates`); ``_multi_adamw_update``, ``_multi_mp_adamw_update``,
``_multi_lamb_update``, ``_multi_mp_lamb_update``, ``multi_sgd_update``,
``multi_sgd_mom_update``, ``multi_mp_sgd_update``, ``multi_mp_sgd_mom_update``, their
four ``preloaded_`` twins, ``multi_sum_sq``, ``reset_arrays``, ``all_finite`` and
``multi_all_finite`` (:mod:`.multi`); ``_sparse_retain``, ``_contrib_getnnz``,
``_scatter_set_nd``, ``_contrib_boolean_mask`` and ``_set_value`` (:mod:`.sparse`);
``_contrib_edge_id``, ``_contrib_dgl_adjacency``, the two neighbour samplers,
``_contrib_dgl_subgraph`` and ``_contrib_dgl_graph_compact`` (:mod:`.graph`).
Aliases (``_sparse_adam_update``, ``_sparse_sgd_update``, ``_npi_boolean_mask``,
``_sparse_cast_storage`` ...) resolve to these.

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, quirks included:
the updates mutate their state inputs but infer like element-wise ops; the multi-tensor
updates check their groups on copies and infer no shape; ``all_finite`` and the DGL
subgraph ops write their outputs without merging; some checks compare unknown sizes as
numbers (an unknown length matches only an unknown one).  :mod:`.helpers` holds what
the sub-families share; this module merges their ``RULES``.  Must not import MXNet or
Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.training import graph, multi, sparse, updates

RULES: dict[str, Rule] = {
    **updates.RULES,
    **multi.RULES,
    **sparse.RULES,
    **graph.RULES,
}

__all__ = ["RULES"]
