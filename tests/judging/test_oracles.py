"""OpInfo.revealed_by: the transform-only defect classes name real transform oracles."""
from __future__ import annotations

import pytest


def test_revealed_by_names_transform_oracles_only():
    """A tag an op says only a transform oracle shows names a real oracle outside FIRST_ORDER."""
    from mlx_vjpcheck import ops
    from mlx_vjpcheck.oracles import FIRST_ORDER, names
    pairs = [(info.name, t, o) for info in ops.registry().values() for t, o in info.revealed_by.items()]
    assert pairs and all(o in names() and o not in FIRST_ORDER for _, _, o in pairs), pairs


def test_a_malformed_revealed_by_is_refused():
    """Negative control: the record names the op and the field."""
    import dataclasses
    from mlx_vjpcheck import ops
    from mlx_vjpcheck.core.opinfo import OpInfoError
    info = ops.get("cumprod")
    with pytest.raises(OpInfoError, match="'cumprod'.*revealed_by"):
        dataclasses.replace(info, revealed_by={"zero_second_order": 2})
