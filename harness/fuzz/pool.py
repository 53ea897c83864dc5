"""Parent side of the fuzz worker: send a case, read its outcome, and turn a
dead worker into a `crashed` outcome (the next case starts a fresh worker).
The process handling is `running/child.py`, shared with the native server."""
from __future__ import annotations

import json
import os
import sys

from ..running.child import Child, ChildError, OwnsChild
from . import engine

# `python -m <this package>.fuzz.worker`, whatever name the package is imported under,
# started from the package's parent folder so a checkout's package is the one imported.
WORKER = __name__.rsplit(".", 1)[0] + ".worker"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class HarnessError(RuntimeError):
    """The harness itself failed on a case (a bug here, not in MLX)."""


class WorkerError(ChildError):
    """The worker cannot start at all: an environment problem, not a case."""


class Worker(OwnsChild):
    """One fuzz worker process at a time on `device`; `run(scenario)` is its outcome."""

    def __init__(self, device: str):
        self.device = device
        self.child = Child([sys.executable, "-m", WORKER, device], name="fuzz worker", error=WorkerError,
                           cwd=ROOT, env=dict(os.environ, PYTHONUNBUFFERED="1"))

    @property
    def dead_between_cases(self) -> int:
        return self.child.dead_between_cases

    def run(self, s, fd_seed: int = 0, probe: bool = False) -> engine.Outcome:
        """The case's outcome; `probe`: whether it can be judged at all (engine.probe)."""
        msg = {"scenario": s.to_dict(), "fd_seed": fd_seed}
        answer, death = self.child.request(json.dumps(dict(msg, probe=True) if probe else msg) + "\n")
        if death is not None:
            return engine.crashed(s, self.device, death["stage"], death["checks"], death["how"], death["detail"])
        if "harness_error" in answer:
            raise HarnessError(f"harness error on {s.name}:\n{answer['harness_error']}")
        return engine.from_json(s, answer["outcome"])
