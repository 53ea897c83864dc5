"""What the validator's re-derivations of a recorded check share (numpy only):
the Context a record's rechecks see, the batch that computes their comparisons
together, the rules recorded values are held to (agree, verdict_matches), and
the two rechecks several oracles name: `recompute` (a check against a
re-derived float64 value) and `self_consistent` (a check with no offline
reference, recomputed from its own recorded values and rule). Each oracle's
own recheck lives in its module (harness/oracles/<name>.py).

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


def tolerance_problems(c: dict, want: tuple) -> list:
    got = (c.get("atol"), c.get("rtol"))
    if got != tuple(want):
        return [f"tolerance (atol, rtol)={got} differs from the table's {tuple(want)}"]
    return []


def kind_problems(c: dict, kind: str) -> list:
    return [] if c.get("kind") == kind else [f"kind {c.get('kind')!r} is not {kind!r}"]


def memo(ctx: Context, key, fn):
    """One re-derivation per record and key; ReferenceUndecided is kept as the value."""
    if key not in ctx.memo:
        try:
            ctx.memo[key] = fn()
        except numeric.ReferenceUndecided as e:
            ctx.memo[key] = e
    return ctx.memo[key]


def accumulation(ctx: Context) -> dict:
    """The half-precision accumulation records, re-derived from the scenario."""
    got = memo(ctx, ("acc",), lambda: references.accumulation(ctx.scenario, ctx.expected))
    return {} if isinstance(got, Exception) else got


def _acc_problems(c: dict, want) -> list:
    got = c.get("accumulation")
    if (got is None) != (want is None):
        return ["the accumulation term of the tolerance is " + ("missing" if want else "not the model's")]
    if want is None:
        return []
    same_k = got.get("unit_roundoff") == want["unit_roundoff"] and got.get("depth") == want["depth"]
    if not (same_k and checks.same_values(got.get("terms"), want["terms"]) and agree(got.get("magnitude"), want["magnitude"])):
        return ["recorded accumulation bound differs from the one re-derived from the scenario"]
    return []


def recompute(c: dict, ctx: Context, kind: str, want, acc):
    """(reasons, recomputed check), or a Pending of ctx.batch."""
    tol = ctx.tolerance()
    reasons = kind_problems(c, kind) + tolerance_problems(c, tol) + _acc_problems(c, acc)
    recorded = checks.shaped(c.get("expected"), c.get("expected_shape"))
    if ctx.batch is not None:
        agreed = ctx.batch.agree(recorded, want)
        observed = checks.shaped(c.get("observed"), c.get("observed_shape"))
        return ctx.batch.compare(c, reasons, agreed, (c["name"], observed, want, *tol, kind, acc))
    agreed = agree(recorded, want)
    new = checks.compare(c["name"], checks.shaped(c.get("observed"), c.get("observed_shape")), want, *tol,
                         kind=kind, acc=acc)
    return _judged(c, reasons, agreed, new)


def self_consistent(c: dict, ctx: Context) -> tuple:
    """A check with no offline reference (a fuzz oracle): its own values and rule."""
    try:
        new = checks.recheck(c)
    except (KeyError, TypeError, ValueError) as e:
        return [f"cannot recheck ({type(e).__name__}: {e})"], c
    if "passed" not in new:
        return ["no recorded values to recheck"], c
    return verdict_matches(c, new), new
