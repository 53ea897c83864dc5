"""Parent side of the fuzz worker: send a case, read its outcome, and turn a
dead worker into a `crashed` outcome (then start a fresh worker)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile

from . import engine

# `python -m <this package>.fuzz.worker`, whatever name the package is imported under,
# started from the package's parent folder so a checkout's package is the one imported.
WORKER = __name__.rsplit(".", 1)[0] + ".worker"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class HarnessError(RuntimeError):
    """The harness itself failed on a case (a bug here, not in MLX)."""


class WorkerError(RuntimeError):
    """The worker cannot start at all: an environment problem, not a case."""


class Worker:
    def __init__(self, device: str):
        self.device, self.proc, self.err = device, None, None
        self.dead_between_cases = 0

    def _start(self):
        self.err = tempfile.TemporaryFile(mode="w+")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", WORKER, self.device],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     text=True, env=env, cwd=ROOT)
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"fuzz worker failed to start: {self._stderr_tail() or 'no output'}")

    def _stderr_tail(self) -> str:
        self.err.seek(0)
        lines = [ln.strip() for ln in self.err.read().splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""

    def _send(self, msg: str) -> None:
        """A worker that died after its last outcome (a late abort on an MLX
        thread, say) is replaced; the new case then runs in a fresh one."""
        for attempt in (0, 1):
            if self.proc is None:
                self._start()
            try:
                self.proc.stdin.write(msg)
                self.proc.stdin.flush()
                return
            except (BrokenPipeError, OSError):
                self.dead_between_cases += 1
                self.close()
                if attempt:
                    raise WorkerError("fuzz worker keeps dying before reading a case")

    def run(self, s, fd_seed: int = 0) -> engine.Outcome:
        self._send(json.dumps({"scenario": s.to_dict(), "fd_seed": fd_seed}) + "\n")
        stage, done = "forward", []
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "outcome" in msg:
                return engine.from_json(s, msg["outcome"])
            if "harness_error" in msg:
                raise HarnessError(f"harness error on {s.name}:\n{msg['harness_error']}")
            stage, done = msg["stage"], msg["checks"]
        return self._died(s, stage, done)

    def _died(self, s, stage, done) -> engine.Outcome:
        rc = self.proc.wait()
        how = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"
        detail = self._stderr_tail()
        self.close()
        return engine.crashed(s, self.device, stage, done, how, detail)

    def close(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.err.close()
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
