"""The results record, built in one place: every stage that makes one (the executor,
the runner's and the native suite's crash records, replay, the fuzzer, the workers)
calls these, so its keys are spelled once. Judging and writing are elsewhere
(judging/judge.py, evidence/results.py); the schema is evidence/schemas/common.schema.json."""
from __future__ import annotations

from . import verdict


def record(name: str, device: str, *, checks=(), error=None, status=None, **more) -> dict:
    """scenario, device, checks and error; the status once it is known; anything else the
    maker records (context, expects_defect, defect_tags, seconds) as given."""
    rec = {"scenario": name, "device": device, "checks": list(checks), "error": error}
    if status is not None:
        rec["status"] = status
    rec.update(more)
    return rec


def of_scenario(s, device: str, context: str, *, checks=(), error=None, **more) -> dict:
    """A record of a bound scenario, carrying what its judging needs: the context and the
    scenario's expected defects."""
    return record(s.name, device, checks=checks, error=error, context=context,
                  expects_defect=s.expects_defect, defect_tags=list(s.defect_tags), **more)


def crashed(name: str, device: str, error: str, *, checks=(), **more) -> dict:
    """The process died while measuring: the checks it finished, and how it died."""
    return record(name, device, checks=checks, error=error, status=verdict.status(list(checks), crashed=True),
                  **more)
