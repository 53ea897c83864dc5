"""How a scenario's status follows from its checks: one rule, shared by the
runner and the validator."""
from __future__ import annotations

STATUSES = ("pass", "fail", "error", "crashed")


def status(checks: list, error: str | None = None, crashed: bool = False) -> str:
    if crashed:
        return "crashed"
    if error is not None:
        return "error"
    if not checks:
        return "error"   # a scenario that checked nothing has not passed
    return "pass" if all(c["passed"] for c in checks) else "fail"


def worst(checks: list) -> dict | None:
    """The failing (else closest) check, by error / tolerance."""
    scored = [c for c in checks if c.get("worst_error") is not None]
    failed = [c for c in checks if not c["passed"]]
    pool = failed or scored
    if not pool:
        return None
    return max(pool, key=lambda c: (c.get("worst_error") or float("inf"))
               / (c.get("worst_tolerance") or 1.0))
