"""Choosing scenarios by name pattern (glob when it has wildcards, else substring)."""
from __future__ import annotations

import fnmatch


def matches(name: str, pattern: str | None) -> bool:
    if not pattern:
        return True
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def select(scenarios: list, pattern: str | None) -> list:
    return [s for s in scenarios if matches(s.name, pattern)]
