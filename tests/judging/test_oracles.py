"""KnownDefect.revealed_by (OpInfo.revealed_by): the transform-only defect classes name real
transform oracles, and every other class the first-order checks."""
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
    from mlx_vjpcheck.core.opinfo import KnownDefect
    with pytest.raises(OpInfoError, match="'cumprod'.*revealed_by"):
        dataclasses.replace(info, known_defects=(KnownDefect("zero_second_order", revealed_by=2),))


def test_every_known_defect_names_an_oracle():
    """Every declaration's revealed_by is the first-order checks or a transform oracle, and a
    misspelt oracle would be caught (negative control)."""
    from mlx_vjpcheck import ops
    from mlx_vjpcheck.core.opinfo import FIRST_ORDER_CHECKS
    from mlx_vjpcheck.oracles import FIRST_ORDER, names

    def bad(declared):
        return [(n, d.tag) for n, d in declared if d.revealed_by != FIRST_ORDER_CHECKS
                and (d.revealed_by not in names() or d.revealed_by in FIRST_ORDER)]
    declared = [(info.name, d) for info in ops.registry().values() for d in info.known_defects]
    assert declared and bad(declared) == []
    from mlx_vjpcheck.core.opinfo import KnownDefect
    assert bad([("cumprod", KnownDefect("zero_second_order", revealed_by="second_ordr"))]) != []
