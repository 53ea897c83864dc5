"""The random directions u the directional oracles take, and J u of the float64
reference along one: on the MLX side (a trial's seed) and the validator's (the
seed a check recorded). Forward mode and second order share one direction, so
one J u serves both; a standalone reproducer regenerates it from the seed.
"""
from __future__ import annotations

import dataclasses

from ..core import numeric, references
from . import recheck

SECOND_SALT = 2   # forward mode and second order: direction seed = the trial's seed + this
RUN_SEED = 0      # the trial seed of `run` (and of the gate and the native suite)
DIRECTION_SEED = RUN_SEED + SECOND_SALT   # the direction of a catalog scenario's directional checks


def of_trial(t) -> dict:
    """The trial's random direction (core/references.py `direction` of its seed)."""
    key = ("direction", t.seed)
    if key not in t.memo:
        t.memo[key] = references.direction(t.s, t.seed)
    return t.memo[key]


def second_seed(t) -> int:
    return t.seed + SECOND_SALT


def second(t) -> dict:
    """The direction forward mode and second order share."""
    return of_trial(dataclasses.replace(t, seed=second_seed(t)))


def reference_ju(t, u) -> object:
    """J u from the reference (shared by forward mode and second order); the
    ReferenceUndecided it raised, where it cannot decide."""
    if "ju" not in t.memo:
        try:
            t.memo["ju"] = references.directional(t.s, u)
        except numeric.ReferenceUndecided as e:
            t.memo["ju"] = e
    return t.memo["ju"]


def recorded_seed(c: dict) -> int:
    """The recorded seed of a check's direction (an input choice, like a fuzz case's
    own seed: any integer is legitimate)."""
    seed = c.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed {seed!r} is not a non-negative integer")
    return seed


def regenerated(ctx, seed: int) -> dict:
    """The direction regenerated from the seed, once per record."""
    return recheck.memo(ctx, ("u", seed), lambda: references.direction(ctx.scenario, seed))


def recheck_ju(ctx, seed: int):
    """J u along the recorded direction, once per record (catalog_table prefills it)."""
    return recheck.memo(ctx, ("ju", seed), lambda: references.directional(ctx.scenario, regenerated(ctx, seed)))


def recheck_hu(ctx, seed: int, g) -> object:
    """H u along the recorded direction, once per record (catalog_table prefills it)."""
    return recheck.memo(ctx, ("hu", seed), lambda: references.hvp(ctx.scenario, g, regenerated(ctx, seed)))


def recheck_along(c: dict, ctx, kind: str, want_of) -> tuple:
    """A directional check re-derived: want_of(seed) gives the float64 value (or the
    exception the reference raised), None where the name names no such value."""
    try:
        seed = recorded_seed(c)
    except (ValueError, TypeError) as e:
        return [str(e)], dict(c, passed=False)
    want = want_of(seed)
    if want is None:
        return [f"{c['name']!r} names no directional value"], dict(c, passed=False)
    if isinstance(want, Exception):
        return [f"the reference cannot decide {c['name']!r} ({want})"], dict(c, passed=False)
    return recheck.recompute(c, ctx, kind, want, None)
