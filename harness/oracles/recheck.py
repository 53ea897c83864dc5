"""The validator's re-derivations of a recorded check (numpy only), one per
kind of recheck an ORACLES row can name:

  reference           expected values re-derived from the float64 reference
                      (they must agree with the recorded ones), the check recomputed
  finite_differences  observed must be the recorded gradient (expected holds the
                      differences through MLX's forward); where MLX's forward is right the differences
                      must also land on the reference gradient
  self_consistent     the check recomputed from its own recorded values and rule
  transformed         a transform's value (compile, vmap) against the re-derived
                      reference value it names (vmap's second example: -2 times it)
  directional         forward mode and second order: J u and H u re-derived along the
                      direction regenerated from the recorded seed (core/references.py)

Each takes (check, ctx) and returns (reasons, recomputed check); `ctx` is a
Context: the scenario, the recomputed expected values, the whole record.
Nothing recorded is trusted except MLX's observed values (and a direction's
seed, an input choice like the scenario's own).
In half precision the accumulation term of the tolerance (core/checks.py) is
re-derived from the scenario too, never read from the record.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..core import checks, numeric, references

AGREE = 1e-12   # recorded vs recomputed float64 expected values: same maths, same numbers
VMAP_SCALE = -2.0   # the cotangent of vmap's second example, as a multiple of the scenario's
SECOND_SALT = 2     # forward mode and second order: direction seed = the trial's seed + this
STATUS = ":status"   # a transform that raised: observed 1 against expected 0


@dataclass(frozen=True)
class Context:
    scenario: object
    expected: dict
    record: dict
    by_name: dict         # the record's checks by name
    forward_ok: bool      # MLX's recorded forward agrees with the recomputed reference
    # Re-derivations its checks share (the accumulation bound, J u and H u per seed),
    # computed once per record.
    memo: dict = field(default_factory=dict, compare=False)
    # A Batch: the comparisons are gathered and a recheck gives a Pending (its caller
    # runs the batch, then asks each Pending for its result); None: computed at once.
    batch: object = field(default=None, compare=False)

    def tolerance(self, kind: str = "reference") -> tuple:
        got = self.memo.get(("tolerance", kind))   # asked by every check of the record
        if got is None:
            got = self.memo[("tolerance", kind)] = checks.tolerance(self.scenario.dtype, kind)
        return got


def _arr(x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == np.float64:   # already what the conversion below gives
        return arr
    return arr.astype(np.complex128) if arr.dtype.kind == "c" else np.asarray(x, dtype=np.float64)


def same(a, b) -> bool:
    a, b = _arr(a), _arr(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def passes(observed, expected, atol: float, rtol: float) -> bool:
    """checks.compare(name, observed, expected, atol, rtol)["passed"] (and what it raises),
    without writing the check: every record asks it of its forward, and the check it
    would write (values as lists, the worst element) is thrown away."""
    _, obs, exp, done = checks._prepared("", observed, expected, atol, rtol, "reference", None, values=False)
    if done is not None:
        return done["passed"]
    err, tol = checks.errors(obs, exp, atol, rtol, checks.allowance(None, exp.shape))
    return not bool(np.any(err > tol))


def _json_shape(shape: tuple) -> tuple:
    """The shape a JSON nested list of an empty array reads back as: up to its first 0."""
    k = next((i for i, d in enumerate(shape) if d == 0), len(shape))
    return tuple(shape[:k + 1])


def agree(recorded, recomputed) -> bool:
    """Same shape, and equal to AGREE elementwise; a non-finite value must be
    recorded as exactly that value (NaN for NaN). Complex values by parts."""
    a, b = _arr(recorded), _arr(recomputed)
    if a.dtype == b.dtype == np.float64 and a.shape == b.shape and np.isfinite(b).all():
        return bool(np.all(_near(a, b)))   # the usual case: the rule below with every mask true
    if a.size == 0 and b.size == 0:   # JSON keeps an empty array's axes up to its first 0 only
        return a.shape in (b.shape, _json_shape(b.shape), _json_shape(b.shape) + (2,) * np.iscomplexobj(b))
    if np.iscomplexobj(b) and not np.iscomplexobj(a) and a.shape == b.shape + (2,):
        a = a[..., 0] + 1j * a[..., 1]
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        a, b = np.asarray(a, dtype=np.complex128), np.asarray(b, dtype=np.complex128)
        return a.shape == b.shape and agree(a.real, b.real) and agree(a.imag, b.imag)
    if a.shape != b.shape:
        return False
    finite = np.isfinite(b)
    same_nonfinite = (np.isnan(a) & np.isnan(b)) | (a == b)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(a - np.where(finite, b, 0.0)) <= AGREE * (1.0 + np.abs(np.where(finite, b, 0.0)))
    return bool(np.all(np.where(finite, near & np.isfinite(a), same_nonfinite)))


def _near(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """agree's rule elementwise where the recomputed value b is finite."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.abs(a - b) <= AGREE * (1.0 + np.abs(b))) & np.isfinite(a)


def _agree_many(pairs: list) -> list:
    """[agree(a, b) for a, b in pairs], real pairs of one non-zero size each, in one pass
    (a pair with a non-finite recomputed value takes agree's general rule)."""
    if not pairs:
        return []
    sizes = np.array([b.size for _, b in pairs], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    a = np.concatenate([a.ravel() for a, _ in pairs])
    b = np.concatenate([b.ravel() for _, b in pairs])
    finite = np.logical_and.reduceat(np.isfinite(b), starts)
    near = np.logical_and.reduceat(_near(a, b), starts)
    return [bool(near[k]) if finite[k] else agree(*pairs[k]) for k in range(len(pairs))]


class Batch:
    """Comparisons of many checks gathered, then computed together (validation/records.py
    rechecks every record of a results file this way: ~10^4 checks of a dozen elements,
    where one numpy call per step of each costs more than the arithmetic)."""

    def __init__(self):
        self.requests, self.pairs = [], []
        self.compared, self.agreed = None, None
        self.values = 0   # observed values gathered (a caller may run the batch at a size)

    def agree(self, recorded, want):
        """agree(recorded, want) now (where an exception stops the recheck, as it would), or
        the number of its place in the batch."""
        a, b = _arr(recorded), _arr(want)
        if a.dtype == b.dtype == np.float64 and a.shape == b.shape and a.size:
            self.pairs.append((a, b))
            return len(self.pairs) - 1
        return agree(a, b)

    def compare(self, c: dict, reasons: list, agreed, request: tuple) -> Pending:
        """The check compare(*request) gives, judged against the recorded one."""
        self.requests.append(request)
        self.values += int(np.size(request[1]))
        return Pending(self, c, reasons, agreed, len(self.requests) - 1)

    def run(self) -> None:
        self.compared = checks.compare_many(self.requests, values=False)   # judged, never written
        self.agreed = _agree_many(self.pairs)


class Pending:
    """A recheck whose comparisons wait for its Batch to run."""

    def __init__(self, batch: Batch, c: dict, reasons: list, agreed, k: int):
        self.batch, self.c, self.reasons, self.agreed, self.k = batch, c, reasons, agreed, k

    def result(self) -> tuple:
        """(reasons, recomputed check), or the exception the comparison raised."""
        new = self.batch.compared[self.k]
        if isinstance(new, Exception):
            raise new
        agreed = self.agreed if isinstance(self.agreed, bool) else self.batch.agreed[self.agreed]
        return _judged(self.c, self.reasons, agreed, new)


def _judged(c: dict, reasons: list, agreed: bool, new: dict) -> tuple:
    if not agreed:
        reasons = reasons + ["recorded expected values differ from the recomputed float64 reference"]
    return reasons + verdict_matches(c, new), new


def _close(a, b) -> bool:
    """Recorded scalar a against recomputed b: NaN equals NaN, inf equals inf."""
    if a is None or b is None:
        return a is b
    if not isinstance(a, (int, float)) or isinstance(a, bool):
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= 1e-9 * (1 + abs(b))


def _tie_at_recorded(c: dict, new: dict):
    """The recorded worst index, when it ties with the recomputed worst element."""
    idx = c.get("worst_index")
    try:
        err, tol = checks.errors(checks.shaped(new["observed"], new["observed_shape"]),
                                 checks.shaped(new["expected"], new["expected_shape"]), c["atol"], c["rtol"])
        k = tuple(int(i) for i in idx)
        if len(k) == err.ndim and _close(float(err[k]), new["worst_error"]) \
                and _close(float(tol[k]), new["worst_tolerance"]):
            return idx
    except (TypeError, ValueError, IndexError, KeyError):
        pass
    return new["worst_index"]


def _worst_problems(c: dict, new: dict) -> list:
    """The recorded worst element is one the rule ranks worst (ties may pick another)."""
    idx, want = c.get("worst_index"), new["worst_index"]
    if idx != want and want is not None and new["worst_error"] is not None:
        want = _tie_at_recorded(c, new)
    if idx != want or not _close(c.get("worst_error"), new["worst_error"]) \
            or not _close(c.get("worst_tolerance"), new["worst_tolerance"]):
        return [f"recorded worst element {idx} (error {c.get('worst_error')!r}) but recomputation gives "
                f"{new['worst_index']} (error {new['worst_error']!r})"]
    return []


def verdict_matches(c: dict, new: dict) -> list:
    out = []
    if bool(c.get("passed")) != new["passed"] or c.get("passed") not in (True, False):
        out.append(f"recorded passed={c.get('passed')!r} but recomputation gives {new['passed']}")
    elif c.get("reason") != new["reason"]:
        out.append(f"recorded reason {c.get('reason')!r} but recomputation gives {new['reason']!r}")
    if c.get("observed_shape") != new["observed_shape"] or c.get("expected_shape") != new["expected_shape"]:
        out.append("recorded shapes do not match the values")
    return out + _worst_problems(c, new)


def _tolerance_problems(c: dict, want: tuple) -> list:
    got = (c.get("atol"), c.get("rtol"))
    if got != tuple(want):
        return [f"tolerance (atol, rtol)={got} differs from the table's {tuple(want)}"]
    return []


def _kind_problems(c: dict, kind: str) -> list:
    return [] if c.get("kind") == kind else [f"kind {c.get('kind')!r} is not {kind!r}"]


def _memo(ctx: Context, key, fn):
    """One re-derivation per record and key; ReferenceUndecided is kept as the value."""
    if key not in ctx.memo:
        try:
            ctx.memo[key] = fn()
        except numeric.ReferenceUndecided as e:
            ctx.memo[key] = e
    return ctx.memo[key]


def accumulation(ctx: Context) -> dict:
    """The half-precision accumulation records, re-derived from the scenario."""
    got = _memo(ctx, ("acc",), lambda: references.accumulation(ctx.scenario, ctx.expected))
    return {} if isinstance(got, Exception) else got


def _acc_problems(c: dict, want) -> list:
    got = c.get("accumulation")
    if (got is None) != (want is None):
        return ["the accumulation term of the tolerance is " + ("missing" if want else "not the model's")]
    if want is None:
        return []
    same_k = got.get("unit_roundoff") == want["unit_roundoff"] and got.get("depth") == want["depth"]
    if not (same_k and same(got.get("terms"), want["terms"]) and agree(got.get("magnitude"), want["magnitude"])):
        return ["recorded accumulation bound differs from the one re-derived from the scenario"]
    return []


def _recompute(c: dict, ctx: Context, kind: str, want, acc):
    """(reasons, recomputed check), or a Pending of ctx.batch."""
    tol = ctx.tolerance()
    reasons = _kind_problems(c, kind) + _tolerance_problems(c, tol) + _acc_problems(c, acc)
    recorded = checks.shaped(c.get("expected"), c.get("expected_shape"))
    if ctx.batch is not None:
        agreed = ctx.batch.agree(recorded, want)
        observed = checks.shaped(c.get("observed"), c.get("observed_shape"))
        return ctx.batch.compare(c, reasons, agreed, (c["name"], observed, want, *tol, kind, acc))
    agreed = agree(recorded, want)
    new = checks.compare(c["name"], checks.shaped(c.get("observed"), c.get("observed_shape")), want, *tol,
                         kind=kind, acc=acc)
    return _judged(c, reasons, agreed, new)


def reference(c: dict, ctx: Context) -> tuple:
    name = c["name"]
    if name not in ctx.expected:
        return [f"the float64 reference has no value named {name!r}"], dict(c, passed=False)
    return _recompute(c, ctx, "reference", ctx.expected[name], accumulation(ctx).get(name))


def _status_check(c: dict, kind: str) -> tuple:
    """A transform that raised: observed 1 against expected 0, with the exception kept."""
    want = checks.compare(c["name"], np.array(1.0), np.array(0.0), 0.0, 0.0, kind=kind)
    reasons = _kind_problems(c, kind) + verdict_matches(c, want)
    if not isinstance(c.get("error"), str) or not c["error"]:
        reasons.append("a status check without the exception text")
    return reasons, dict(want, error=c.get("error"))


def transformed(c: dict, ctx: Context) -> tuple:
    """compile:<value> and vmap:<value>#<example>: the reference value the name
    names (example 1 of vmap: gradients times VMAP_SCALE)."""
    kind, _, rest = c["name"].partition(":")
    if rest == "status":
        return _status_check(c, kind)
    if c["name"] == "vmap:batch":   # a batched result without its batch axis: shapes, recorded as values
        return self_consistent(c, ctx)
    key, _, example = rest.partition("#")
    if key not in ctx.expected or example not in (("0", "1") if kind == "vmap" else ("",)):
        return [f"{c['name']!r} names no reference value"], dict(c, passed=False)
    scale = VMAP_SCALE if example == "1" and key != "forward" else 1.0
    acc = accumulation(ctx).get(key)
    if acc and scale != 1.0:
        acc = dict(acc, magnitude=(abs(scale) * np.asarray(acc["magnitude"])).tolist())
    return _recompute(c, ctx, kind, scale * np.asarray(ctx.expected[key]), acc)


def _seed(c: dict) -> int:
    """The recorded seed of a check's direction (an input choice, like a fuzz case's
    own seed: any integer is legitimate)."""
    seed = c.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed {seed!r} is not a non-negative integer")
    return seed


def _direction(ctx: Context, seed: int) -> dict:
    """The direction regenerated from the seed, once per record."""
    return _memo(ctx, ("u", seed), lambda: references.direction(ctx.scenario, seed))


def directional(c: dict, ctx: Context) -> tuple:
    """jvp:forward (J u), second:<operand> (H u), second:cotangent (J u), re-derived
    along the recorded direction; second:status as a status check."""
    if c["name"] == "second" + STATUS:
        return _status_check(c, "second_order")
    try:
        seed = _seed(c)
    except (ValueError, TypeError) as e:
        return [str(e)], dict(c, passed=False)
    name = c["name"]
    if name in ("jvp:forward", "second:cotangent"):
        want = _memo(ctx, ("ju", seed), lambda: references.directional(ctx.scenario, _direction(ctx, seed)))
    elif name.startswith("second:") and name[7:] in ctx.scenario.wrt:
        g = references.cotangent(ctx.scenario, ctx.expected["forward"])
        want = _memo(ctx, ("hu", seed), lambda: references.hvp(ctx.scenario, g, _direction(ctx, seed)))
        want = want if isinstance(want, Exception) else want[name[7:]]
    else:
        return [f"{name!r} names no directional value"], dict(c, passed=False)
    if isinstance(want, Exception):
        return [f"the reference cannot decide {name!r} ({want})"], dict(c, passed=False)
    want_kind = "forward_mode" if name.startswith("jvp:") else "second_order"
    return _recompute(c, ctx, want_kind, want, None)


def finite_differences(c: dict, ctx: Context) -> tuple:
    name, tol = c["name"], ctx.tolerance("fd")
    operand = name.split(":", 1)[1] if name.startswith("fd:") else ""
    if operand not in ctx.scenario.wrt:
        return [f"{name!r} names no differentiated operand"], dict(c, passed=False)
    reasons = _kind_problems(c, "fd") + _tolerance_problems(c, tol)
    grad = ctx.by_name.get(f"grad:{operand}")
    if grad is None or not same(c.get("observed"), grad.get("observed")):
        reasons.append(f"observed values are not the recorded grad:{operand} values")
    fd = c.get("expected")   # the differences MLX's forward gave
    new = checks.compare(name, checks.shaped(c.get("observed"), c.get("observed_shape")),
                         checks.shaped(fd, c.get("expected_shape")), *tol, kind="fd")
    # Central differences of the actual forward follow the maths whenever that
    # forward is right, so they must land on the reference gradient.
    if ctx.forward_ok and not passes(fd, ctx.expected[f"grad:{operand}"], *tol):
        reasons.append("recorded finite differences disagree with the reference gradient "
                       "although the forward agrees with the reference")
    return reasons + verdict_matches(c, new), new


def self_consistent(c: dict, ctx: Context) -> tuple:
    """A check with no offline reference (a fuzz oracle): its own values and rule."""
    try:
        new = checks.recheck(c)
    except (KeyError, TypeError, ValueError) as e:
        return [f"cannot recheck ({type(e).__name__}: {e})"], c
    if "passed" not in new:
        return ["no recorded values to recheck"], c
    return verdict_matches(c, new), new
