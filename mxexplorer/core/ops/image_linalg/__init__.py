"""Rules for the image_linalg family: MXNet 1.9.1's image ops (what Gluon's hybridized
transforms export: ``_image_to_tensor``, ``_image_normalize``, ``_image_crop``,
``_image_resize``, the flips and random augmenters), the ``_linalg_*`` ops but the
products (``det``, ``slogdet``, ``inverse``, the factorizations, ``syrk``, ``trmm``,
``trsm``, the diagonal and triangle makers), the contrib ops ``_contrib_fft``,
``_contrib_ifft``, ``_contrib_count_sketch`` and ``_contrib_hawkesll``, and numpy-style
leftovers (``_npi_ediff1d``, ``_npi_hsplit``, ``_npi_dsplit``, ``_npi_insert_*``,
``_npi_percentile``, ``_npi_pinv``, ``_npi_svd``, ``_npi_tensorinv``,
``_npi_tensorsolve``, ``_npi_boolean_mask_assign_*``).

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, quirks
included, because MXNet is the judge: the image augmenters refuse an image of unknown
rank or channel count, checks compare sizes as given (an unknown size is -1 there), the
legacy contrib layers and the insert ops replace their outputs instead of checking them,
insert rewrites its inputs' shapes, and several ops need full shapes or known types.
Where MXNet's behaviour is undefined (no input at all, ``_npi_tensorsolve`` with a
repeated axis) the engine refuses in plain words.  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.image`, :mod:`.linalg`, :mod:`.contrib`,
:mod:`.np_misc`, :mod:`.np_linalg` and :mod:`.np_insert`; :mod:`.helpers` holds what
they share.  This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.image_linalg import contrib, image, linalg, np_insert, np_linalg, np_misc
from mxexplorer.core.ops.image_linalg.image import AUGMENTERS

RULES: dict[str, Rule] = {
    **image.RULES,
    **linalg.RULES,
    **contrib.RULES,
    **np_misc.RULES,
    **np_linalg.RULES,
    **np_insert.RULES,
}

__all__ = ["AUGMENTERS", "RULES"]
