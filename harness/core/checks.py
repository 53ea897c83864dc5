"""Elementwise agreement checks (a small flat module, after jax public_test_util).

Rule: pass iff shapes match exactly, and elementwise: where the expected value
is finite, the observed value is finite and |observed - expected| <= tolerance;
where the expected value is non-finite (a reference at an infinite input, or a
recorded value re-derived), the observed value is the same non-finite value
(NaN for NaN, +inf for +inf, -inf for -inf; for complex values, part by part).
Each check keeps its worst element (error / tolerance; a non-finite mismatch
has error inf) so the evidence says how close the nearest miss was.

The tolerance of one element (the per-dtype model):

    atol + rtol * |expected|  +  gamma(n + d, u) * magnitude

* atol, rtol: the dtype's table below. For float32 and float64 this is the
  whole allowance: catalog and fuzz values are small integers and dyadic
  fractions, so float32 sums of products are exact and the table only absorbs
  the last-bit rounding of the transcendental ops.
* the accumulation term, for the half-precision dtypes (float16, bfloat16)
  and ops declared `multilinear` only: MLX's kernels accumulate in the call's
  own dtype (its CPU bfloat16 quantized matmul reads 61 for an exact 70), and
  no fixed relative tolerance bounds that. Higham's bound for a sum computed
  in any order, |fl(sum) - sum| <= gamma_k * sum |terms|, with
  gamma_k = k u / (1 - k u) and u the dtype's unit roundoff, applies with
  k = n + d: n the number of terms an output element sums (counted, per
  element, from the float64 reference: cases/expected.py `accumulation`),
  d = 2 f + 1 the roundings along one term's own path (f floating factors,
  the cotangent included: one product rounding and one scaling or
  dequantization rounding each, and the final cast). `magnitude` is
  sum |terms| from the same count. Where k u >= 1/2 the bound says nothing
  useful (it exceeds the magnitude itself): such a call is not judged (a
  precision limit, never a pass).

Complex values (complex64 calls) are compared by modulus, |observed -
expected| against atol + rtol * |expected| with the float32 table, and
recorded as [re, im] pairs with `"complex": true`.
"""
from __future__ import annotations

import math

import numpy as np

# Per-dtype tolerance (atol, rtol) for comparing MLX against float64 references.
TOLERANCE = {
    "float32": (3e-5, 3e-5),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float64": (1e-12, 1e-12),
}
# Finite differences of a function that is affine in the perturbed operand are
# exact in real arithmetic; the allowance only absorbs float32 rounding of the
# forward divided by the step.
FD_TOLERANCE = {"float32": (1e-3, 1e-3), "float16": (5e-2, 5e-2),
                "bfloat16": (2e-1, 2e-1), "float64": (1e-8, 1e-8)}
# complex64 is two float32 numbers: the float32 rows apply (to the modulus).
PART = {"complex64": "float32"}
# Unit roundoff (half an ulp of 1) of the dtypes the accumulation term applies to.
UNIT_ROUNDOFF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
USEFUL = 0.5   # k u at or above this: the bound exceeds the magnitude, no verdict


def tolerance(dtype: str, kind: str = "reference") -> tuple:
    table = FD_TOLERANCE if kind == "fd" else TOLERANCE
    dtype = PART.get(dtype, dtype)
    if dtype not in table:
        raise ValueError(f"no tolerance for dtype {dtype!r}")
    return table[dtype]


def accumulates(dtype: str) -> bool:
    """Whether the accumulation term applies to calls in this dtype."""
    return dtype in UNIT_ROUNDOFF


def gamma(k, u: float):
    """Higham's gamma_k = k u / (1 - k u), elementwise; inf where k u >= 1."""
    ku = np.asarray(k, dtype=np.float64) * u
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ku < 1.0, ku / np.where(ku < 1.0, 1.0 - ku, 1.0), np.inf)


def accumulation(terms, magnitude, depth: int, dtype: str) -> dict:
    """The accumulation record of one check (what compare adds to its tolerance)."""
    return {"unit_roundoff": UNIT_ROUNDOFF[dtype], "depth": int(depth),
            "terms": np.asarray(terms, dtype=np.int64).tolist(),
            "magnitude": np.asarray(magnitude, dtype=np.float64).tolist()}


def useful(acc: dict) -> bool:
    """Whether an accumulation bound still says something (k u < 1/2 everywhere)."""
    k = np.asarray(acc["terms"], dtype=np.float64) + acc["depth"]
    return bool(np.all(k * acc["unit_roundoff"] < USEFUL))


def allowance(acc: dict | None, shape) -> np.ndarray | float:
    """gamma(n + d, u) * magnitude per element (0 without an accumulation record)."""
    if not acc:
        return 0.0
    k = np.asarray(acc["terms"], dtype=np.float64) + acc["depth"]
    mag = np.asarray(acc["magnitude"], dtype=np.float64)
    if k.shape != tuple(shape) or mag.shape != tuple(shape):
        raise ValueError(f"accumulation record of shape {mag.shape} for values of shape {tuple(shape)}")
    with np.errstate(invalid="ignore"):
        return np.where(mag == 0, 0.0, gamma(k, acc["unit_roundoff"]) * mag)


def _is_complex(arr: np.ndarray) -> bool:
    """np.iscomplexobj for an array, without its generic dispatch (the validator asks ~10^5 times)."""
    return arr.dtype.kind == "c"


def _as_array(x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == np.float64:   # already what the conversion below gives
        return arr
    return arr.astype(np.complex128) if _is_complex(arr) else np.asarray(x, dtype=np.float64)


def same_values(a, b) -> bool:
    """Values equal exactly, NaN equal to NaN: what a repeat measurement, a replay
    and a recorded copy of a check are compared by."""
    a, b = _as_array(a), _as_array(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _complex_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a` as complex when it is the [re, im] pair form of complex `b`'s shape."""
    if _is_complex(a) or not _is_complex(b):
        return a
    if a.shape == b.shape + (2,):
        return a[..., 0] + 1j * a[..., 1]
    return a.astype(np.complex128) if a.shape == b.shape else a


def errors(obs: np.ndarray, exp: np.ndarray, atol: float, rtol: float, extra=0.0) -> tuple:
    """(error, tolerance) per element. Matching non-finite values have error 0;
    a non-finite value on one side only, or a different one, has error inf."""
    finite = np.isfinite(exp)
    if finite.all() and np.isfinite(obs).all():   # the usual case: the same arithmetic, no masks
        with np.errstate(invalid="ignore", over="ignore"):
            err, tol = np.abs(obs - exp), atol + rtol * np.abs(exp) + extra
        return np.asarray(err, dtype=np.float64), np.asarray(tol, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(obs - np.where(finite, exp, 0.0)), 0.0)
        err = np.where(finite & ~np.isfinite(obs), np.inf, err)
        err = np.where(~finite & ~_same_nonfinite(obs, exp), np.inf, err)
        tol = atol + rtol * np.where(finite, np.abs(exp), 0.0) + extra
    return np.asarray(err, dtype=np.float64), np.asarray(tol, dtype=np.float64)


def _same_nonfinite(obs, exp):
    if _is_complex(np.asarray(obs)) or _is_complex(np.asarray(exp)):
        o, e = np.asarray(obs, dtype=np.complex128), np.asarray(exp, dtype=np.complex128)
        return _same_nonfinite(o.real, e.real) & _same_nonfinite(o.imag, e.imag)
    return (np.isnan(obs) & np.isnan(exp)) | (obs == exp)


def _ratio(err: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """How far each element is from its tolerance (0 where it is exact): the worst is the largest."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(err == 0, 0.0, err / tol)


def _worst(err: np.ndarray, tol: np.ndarray) -> tuple:
    return np.unravel_index(int(np.argmax(_ratio(err, tol))), err.shape)


def _written(arr: np.ndarray) -> list:
    """Values as the results schema writes them: complex as [re, im] pairs."""
    if _is_complex(arr):
        return np.stack([arr.real, arr.imag], axis=-1).tolist()
    return arr.tolist()


def _prepared(name: str, observed, expected, atol, rtol, kind, acc, values=True) -> tuple:
    """(the check without its verdict, observed array, expected array, the finished check
    when no arithmetic is needed: different shapes or no elements)."""
    obs, exp = _as_array(observed), _as_array(expected)
    obs, exp = _complex_pair(obs, exp), _complex_pair(exp, obs)
    cplx = _is_complex(obs) or _is_complex(exp)
    rec = {"name": name, "kind": kind, "atol": atol, "rtol": rtol,
           "observed_shape": list(obs.shape), "expected_shape": list(exp.shape),
           "observed": _written(obs) if values else obs, "expected": _written(exp) if values else exp,
           "worst_index": None, "worst_error": None, "worst_tolerance": None}
    if cplx:
        rec["complex"] = True
    if acc:
        rec["accumulation"] = acc
    if obs.shape != exp.shape:
        return rec, obs, exp, dict(rec, passed=False, reason=f"shape {obs.shape} != {exp.shape}")
    if obs.size == 0:
        return rec, obs, exp, dict(rec, passed=True, reason="empty")
    return rec, obs, exp, None


def _verdict(rec: dict, n_bad: int, n_nonfinite: int, size: int, worst: list, error, tolerance) -> dict:
    reason = "ok" if n_bad == 0 else f"{n_bad} of {size} elements outside tolerance" + (
        f" ({n_nonfinite} non-finite)" if n_nonfinite else "")
    return dict(rec, passed=n_bad == 0, worst_index=worst, worst_error=float(error),
                worst_tolerance=float(tolerance), reason=reason)


def compare(name: str, observed, expected, atol: float, rtol: float, kind="reference",
            acc: dict | None = None) -> dict:
    """One check. `acc`: the accumulation record (see the module text) whose
    allowance is added to the tolerance; recorded with the check."""
    rec, obs, exp, done = _prepared(name, observed, expected, atol, rtol, kind, acc)
    if done is not None:
        return done
    err, tol = errors(obs, exp, atol, rtol, allowance(acc, exp.shape))
    worst = _worst(err, tol)
    bad = err > tol
    n_bad = int(np.sum(bad))
    n_nonfinite = int(np.sum(bad & ~np.isfinite(obs))) if n_bad else 0
    return _verdict(rec, n_bad, n_nonfinite, err.size, [int(v) for v in worst], err[worst], tol[worst])


def compare_many(requests: list, values: bool = True) -> list:
    """[compare(*r) for r in requests], r = (name, observed, expected, atol, rtol, kind, acc),
    with the arithmetic of all of them done at once: `errors` over their elements laid end to
    end, then each check's count and worst element from its own stretch (the validator
    rechecks ~10^4 checks of a dozen elements, where one numpy call per step of each costs far
    more than the arithmetic). Where compare would raise, the result is its exception.
    values=False: a check's observed and expected values are its arrays, not the lists a
    results file writes (for a caller that judges the checks and writes none of them)."""
    out, runs = [None] * len(requests), {False: [], True: []}
    for i, (name, observed, expected, atol, rtol, kind, acc) in enumerate(requests):
        if type(atol) is not float or type(rtol) is not float:   # tolerances of other types: as they are
            out[i] = _one(values, name, observed, expected, atol, rtol, kind, acc)
            continue
        try:
            rec, obs, exp, done = _prepared(name, observed, expected, atol, rtol, kind, acc, values)
            extra = None if done is not None else allowance(acc, exp.shape)
        except Exception as e:   # what compare raises for this request
            out[i] = e
            continue
        if done is not None:
            out[i] = done
        else:
            runs[_is_complex(obs)].append((i, rec, obs, exp, extra))
    for run in runs.values():
        if run:
            _verdicts(run, out)
    return out


def _one(values: bool, *request):
    try:
        got = compare(*request)
    except Exception as e:
        return e
    return got if values else dict(got, observed=shaped(got["observed"], got["observed_shape"]),
                                   expected=shaped(got["expected"], got["expected_shape"]))


def _verdicts(run: list, out: list) -> None:
    """compare's verdicts for a run of checks of one kind of number (real or complex)."""
    sizes = np.array([obs.size for _, _, obs, _, _ in run], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    obs = np.concatenate([o.ravel() for _, _, o, _, _ in run])
    exp = np.concatenate([e.ravel() for _, _, _, e, _ in run])
    atol = np.repeat([rec["atol"] for _, rec, _, _, _ in run], sizes)
    rtol = np.repeat([rec["rtol"] for _, rec, _, _, _ in run], sizes)
    extra = (np.concatenate([np.broadcast_to(x, o.shape).ravel() for _, _, o, _, x in run])
             if any(not isinstance(x, float) for *_, x in run) else 0.0)
    err, tol = errors(obs, exp, atol, rtol, extra)
    bad = err > tol
    n_bad = np.add.reduceat(bad, starts, dtype=np.int64)
    n_nonfinite = np.add.reduceat(bad & ~np.isfinite(obs), starts, dtype=np.int64)
    worst = _first_largest(_ratio(err, tol), starts, sizes)
    for k, (i, rec, o, _, _) in enumerate(run):
        w = int(worst[k])
        out[i] = _verdict(rec, int(n_bad[k]), int(n_nonfinite[k]), o.size, _unravel(w - int(starts[k]), o.shape),
                          err[w], tol[w])


def _first_largest(ratio: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per stretch, the position np.argmax gives: the first largest value, or the first NaN."""
    top = np.repeat(np.maximum.reduceat(ratio, starts), sizes)   # maximum keeps a NaN
    hit = (ratio == top) | (np.isnan(ratio) & np.isnan(top))
    return np.minimum.reduceat(np.where(hit, np.arange(ratio.size), ratio.size), starts)


def _unravel(k: int, shape: tuple) -> list:
    """np.unravel_index(k, shape) as a list of ints."""
    out = []
    for d in reversed(shape):
        k, r = divmod(k, d)
        out.append(r)
    return out[::-1]


def _size(shape: list) -> int:
    """np.prod(shape, dtype=int64) (wrapping as it does), without its dispatch for small shapes."""
    n = math.prod(shape)
    return n if n < 2 ** 62 else int(np.prod(shape, dtype=np.int64))


def shaped(values, shape) -> np.ndarray:
    """Recorded values as an array of their recorded shape: nested lists lose
    trailing zero-size axes ((1, 0, 1) is written [[]]), the shape keeps them;
    [re, im] pairs one axis deeper than the shape are complex values."""
    arr = _as_array(values)
    if type(shape) is list and list(arr.shape) == shape:   # the usual case: nothing below changes it
        return arr
    if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
        return arr
    n = _size(shape)
    if n and arr.shape == tuple(shape) + (2,):
        return arr[..., 0] + 1j * arr[..., 1]
    if arr.size == n and list(arr.shape) != shape:
        return arr.reshape(shape)
    return arr


def recheck(rec: dict) -> dict:
    """Recompute a recorded check from its own observed/expected values and rule."""
    if rec.get("observed") is None or rec.get("expected") is None:
        return dict(rec)
    return compare(rec["name"], shaped(rec["observed"], rec.get("observed_shape")),
                   shaped(rec["expected"], rec.get("expected_shape")), rec["atol"], rec["rtol"],
                   rec.get("kind", "reference"), acc=rec.get("accumulation"))
