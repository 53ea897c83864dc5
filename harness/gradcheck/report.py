"""The result records and the failure message.

A Check is one comparison: a transform, a dtype, an input leaf (and output,
where the comparison is per output), its worst element. status is "pass",
"fail", "not differentiable" (the oracle's one-sided slopes disagree there:
reported, never judged, never excusing anything else) or "unsupported" (the
transform raised where plain evaluation works: MLX lacks the rule; stated,
not a wrong value).
"""
from __future__ import annotations

from dataclasses import dataclass, field


class GradcheckError(AssertionError):
    """A gradient disagrees; the message says where. An AssertionError, so pytest shows it whole."""

    def __init__(self, message: str, report=None):
        super().__init__(message)
        self.report = report


@dataclass
class Check:
    transform: str       # "vjp", "jvp", "identity", "vmap(vjp, in_axes=-1)", "order 2 vjp", ...
    dtype: str
    input: str           # leaf path, or "all inputs"
    output: str          # output path, or "all outputs"
    status: str
    index: list = None   # worst element (within the input for vjp, the output for jvp)
    got: object = None   # MLX's value there
    want: object = None  # the oracle's (float64) value, or eager's for vmap/compile
    allowed: float = 0.0  # tolerance there, the oracle's bound included
    bound: float = 0.0    # the oracle's stated error there (0 for eager comparisons)
    detail: str = ""
    at: dict = None       # where, for the reproducer: leaf number, flat element, output element

    def line(self) -> str:
        where = f"{self.input}{self.index if self.index else ''}"
        head = f"{self.transform} [{self.dtype}] d {self.output} / d {where}"
        if self.status == "pass":
            return f"ok    {head}"
        if self.status == "fail" and self.got is None:
            return f"FAIL  {head}: {self.detail}"
        if self.status == "fail":
            return (f"FAIL  {head}: MLX {_fmt(self.got)} vs {_fmt(self.want)} "
                    f"(|diff| {_fmt(abs(self.got - self.want))} > allowed {self.allowed:.3g}, "
                    f"oracle bound {self.bound:.3g}) {self.detail}".rstrip())
        return f"{self.status.upper() if self.status != 'not differentiable' else 'NOTE '}  {head}: {self.detail}"


def _fmt(x) -> str:
    if isinstance(x, complex):
        return f"{x.real:.7g}{x.imag:+.7g}j"
    try:
        return f"{float(x):.7g}"
    except (TypeError, ValueError):
        return str(x)


@dataclass
class Report:
    """What gradcheck found. `passed` is False exactly when a check has status "fail"."""
    checks: list = field(default_factory=list)
    notes: list = field(default_factory=list)     # oracle precision fallbacks, skipped parts
    options: dict = field(default_factory=dict)
    mode: str = "full"
    seconds: float = 0.0
    shrunk: str = ""          # the minimal counterexample found, described
    reproducer: str = ""      # a standalone script, on failure
    context: dict = field(default_factory=dict, repr=False)   # the point and cotangents (not in JSON)

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def not_differentiable(self) -> list:
        return [c for c in self.checks if c.status == "not differentiable"]

    def message(self) -> str:
        fails = self.failures
        head = (f"gradcheck: {len(fails)} of {len(self.checks)} checks failed ({self.mode} mode)"
                if fails else self._passed_head())
        lines = [head] + [c.line() for c in fails]
        lines += [c.line() for c in self.checks if c.status in ("not differentiable", "unsupported", "not tried")]
        lines += [f"note: {n}" for n in self.notes]
        if self.shrunk:
            lines.append(f"minimal counterexample: {self.shrunk}")
        if self.reproducer:
            lines += ["reproducer (save and run with python):", self.reproducer]
        return "\n".join(lines)

    def _passed_head(self) -> str:
        passed = sum(c.status == "pass" for c in self.checks)
        if passed == len(self.checks):
            return f"gradcheck: all {passed} checks passed ({self.mode} mode)"
        return (f"gradcheck: no check failed: {passed} passed, {len(self.checks) - passed} not judged "
                f"(listed below) ({self.mode} mode)")

    def __str__(self) -> str:
        return self.message()

    def to_json(self) -> dict:
        from dataclasses import asdict
        out = asdict(self)
        out["passed"] = self.passed
        out.pop("context")
        for c in out["checks"]:
            c.pop("at")
            for k in ("got", "want"):
                if isinstance(c[k], complex):
                    c[k] = [c[k].real, c[k].imag]
        return out
