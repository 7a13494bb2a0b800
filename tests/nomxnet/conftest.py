"""The lane without MXNet (``make test``'s second lane: Python 3.12+, MXNet absent): the
product as most users now install it.  These tests also run in the MXNet lane, where
they check that nothing here reaches for MXNet."""
from __future__ import annotations

import importlib.util
import os

import pytest

#: set by the Makefile for the second lane
LANE = os.environ.get("MXEXPLORER_LANE", "")
NO_MXNET = LANE == "nomxnet"
HAS_MXNET = importlib.util.find_spec("mxnet") is not None


@pytest.fixture(scope="session", autouse=True)
def lane_is_what_it_says() -> None:
    """The second lane really lacks MXNet (else it would prove nothing)."""
    if NO_MXNET:
        assert not HAS_MXNET, "the lane without MXNet has MXNet installed"
