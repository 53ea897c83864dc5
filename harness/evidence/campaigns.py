"""When a fuzz campaign can be run again to the same findings, decided from its
campaign.json alone: the rule the fuzzer writes and the validator re-derives.

A campaign is a function of its seed, ops, dtypes, case budget and hypothesis
version only when nothing else shaped it: it ended on its case budget
(`--max-examples`), before its clock reached the share of the time budget at
which the search stops deferring loud defects (search.DEFER_FRACTION), without
an interrupt and without an example database. Then `mlx-vjpcheck replay
--campaign` runs the same cases and must find the same signatures. Otherwise
the absence of further findings is not reproducible, and the verdict says so.
"""
from __future__ import annotations

SCHEMA = "mlx-vjpcheck/fuzz-campaign/2"
DEFER_FRACTION = 0.5   # fuzz/search.py's (tests/fuzz/test_fuzz_merge.py holds them equal)


def ended_by(interrupted: bool, cases: int, max_cases) -> str:
    if interrupted:
        return "interrupt"
    return "cases" if max_cases is not None and cases >= max_cases else "time"


def _shard_problem(stats: dict, budget_s: float, max_cases) -> str | None:
    if max_cases is None or stats.get("cases", 0) < max_cases:
        return "it ended on its time budget, not on a case count (give --max-examples)"
    if stats.get("elapsed_s", 0) >= budget_s * DEFER_FRACTION:
        return (f"its clock reached {DEFER_FRACTION:g} of the time budget, where the search order "
                "starts to depend on time (give a larger --time)")
    return None


def replayable(info: dict) -> dict:
    """{"by_seed": bool, "why": text} for a campaign.json (fuzz-campaign/2)."""
    if info.get("interrupted"):
        return {"by_seed": False, "why": "it was interrupted"}
    if info.get("merged_from"):
        return {"by_seed": False, "why": "it merges campaigns run elsewhere"}
    if info.get("database") is not None:
        return {"by_seed": False, "why": "cases came from an example database as well as the seed"}
    shards = info.get("shard_stats") or [info.get("stats") or {}]
    for stats in shards:
        why = _shard_problem(stats, info.get("budget_s") or 0.0, info.get("max_cases"))
        if why:
            return {"by_seed": False, "why": why}
    return {"by_seed": True, "why": f"seeds {info.get('seeds')}, {info.get('max_cases')} cases each, "
                                    f"hypothesis {info.get('hypothesis')}: the same cases run again"}


def fd_seed(name: str) -> int:
    """The seed of a fuzz case's random directions, from its name (fuzz/<op>/<12 hex
    digits>); any other name (a renamed or hand-written scenario) gets one from its text."""
    tail = name.rsplit("/", 1)[-1][:12]
    if len(tail) == 12 and all(c in "0123456789abcdef" for c in tail):
        return int(tail, 16)
    import hashlib
    return int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:12], 16)
