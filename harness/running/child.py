"""The one process supervisor: crash isolation, the watchdog, Ctrl-C.

`Watchdog` kills a process that runs too long without a sign of progress: a
request of a `Child` (below), a scenario of the scenario worker (runner.py), a
recorded command of the gate or the C++ suite that writes nothing for too long
(native/build.py `watched`). `ended_on_interrupt` kills a process when its parent
is interrupted (Ctrl-C, SIGTERM raised as an exception) or fails, so nothing
outlives the command that started it; `run_side_by_side` runs a few commands in
parallel under that rule (the gate's two fuzz campaigns). How a process ended is
worded by core/exits.py.

`Child` is the parent side of a long-lived child that answers one JSON line per
request: the fuzz worker (`fuzz/pool.py`) and the native suite's `--serve` mode
(`native/server.py`). The child's side of the protocol is `channel.py` (the
native binary speaks the same lines).

The child says {"ready": true, ...} once it has started; then, per request
line, any number of {"stage": name, "checks": [...]} lines and one answer
line. A child that dies during a request is reported as a death (the stage
it reached, how it ended, its last stderr line), and the next request starts
a fresh one; a child that died between requests is replaced before the
request is sent, and counted.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager

from ..core.exits import exit_text


class ChildError(RuntimeError):
    """The child cannot start, or keeps dying before it reads a request."""


def describe_exit(rc: int) -> str:
    """How a child ended, in the words a fuzz death's signature is made of ("exit 3")."""
    return exit_text(rc, "exit")


class Watchdog:
    """Kills `proc` once `seconds` pass without `arm()` being called again: armed once per
    request or scenario (a time limit), or at every line the process writes (a limit on
    silence). `fired` says that it killed."""

    def __init__(self, proc, seconds: float):
        self.proc, self.seconds, self.fired, self._timer = proc, seconds, False, None
        self._lock = threading.Lock()

    def arm(self) -> None:
        with self._lock:
            self._cancel()
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        if self.proc.poll() is None:
            self.fired = True
            self.proc.kill()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def stop(self) -> None:
        with self._lock:
            self._cancel()


@contextmanager
def ended_on_interrupt(*procs, grace_s: float = 0.0):
    """Ends every process still running when the block is left by an exception (Ctrl-C
    included: the children ignore SIGINT or are not sent it); `grace_s`: ask first
    (SIGTERM) and kill only after that long."""
    try:
        yield procs
    except BaseException:
        for proc in procs:
            if proc.poll() is None:
                _end(proc, grace_s)
        raise


def _end(proc, grace_s: float) -> None:
    if grace_s:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            pass
    proc.kill()
    proc.wait()


def run_side_by_side(commands: dict, cwd=None, grace_s: float = 10.0) -> dict:
    """{name: (exit code, stdout, stderr, seconds since the start)} of commands ({name:
    (argv, env)}) run in parallel processes; on an interrupt each is asked to stop
    (SIGTERM, which a fuzz campaign takes as "stop after this case") and then killed."""
    t0 = time.perf_counter()
    procs = {n: subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
             for n, (argv, env) in commands.items()}
    out = {}
    with ended_on_interrupt(*procs.values(), grace_s=grace_s):
        for n, proc in procs.items():
            stdout, stderr = proc.communicate()
            out[n] = (proc.returncode, stdout, stderr, round(time.perf_counter() - t0, 3))
    return out


class OwnsChild:
    """A client of one `Child` (`self.child`: the fuzz worker's pool, the native server):
    closing it closes the child, and a with block closes it however it is left."""

    def close(self):
        self.child.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Child:
    """`request(line)` returns (answer, None) or (None, death); `hello` is the
    ready message of the process now running."""

    def __init__(self, argv: list, *, name: str, error=ChildError, cwd=None, env=None,
                 timeout_s: float | None = None, decode=json.loads):
        # how to start it, and what to call it in a message
        self.argv, self.name, self.error, self.cwd, self.env = list(argv), name, error, cwd, env
        # a request running longer than this kills the child (None: no limit)
        self.timeout_s, self.decode = timeout_s, decode
        # what happened so far
        self.proc, self.err, self.hello = None, None, {}
        self.starts = 0                  # processes started (1 + restarts)
        self.dead_between_cases = 0      # died after an answer, before the next request

    def start(self) -> None:
        # stderr goes to a file: a full pipe would stall a child that writes a lot of it
        self.err = tempfile.TemporaryFile(mode="w+")
        try:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.err, text=True, bufsize=1, cwd=self.cwd, env=self.env)
        except OSError as e:
            self.err.close()
            self.err = None
            raise self.error(f"cannot start {self.name}: {e.strerror}") from None
        self.starts += 1
        hello = self._hello(self.proc.stdout.readline())
        if not hello.get("ready"):
            rc = self.proc.wait()
            tail = self.stderr_tail() or "no output"
            self.close()
            raise self.error(f"{self.name} did not start ({describe_exit(rc)}): {tail}")
        self.hello = hello

    def _hello(self, line: str) -> dict:
        try:
            msg = self.decode(line) if line else {}
        except ValueError:
            return {}
        return msg if isinstance(msg, dict) else {}

    def stderr_tail(self) -> str:
        if self.err is None:
            return ""
        self.err.seek(0)
        lines = [ln.strip() for ln in self.err.read().splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""

    def request(self, line: str) -> tuple:
        self._send(line)
        watchdog = Watchdog(self.proc, self.timeout_s) if self.timeout_s else None
        if watchdog is not None:
            watchdog.arm()
        stage, done = "forward", []
        try:
            for raw in self.proc.stdout:
                msg = self.decode(raw)
                if "stage" not in msg:
                    return msg, None
                stage, done = msg["stage"], msg.get("checks", [])
        finally:
            if watchdog is not None:
                watchdog.stop()
        return None, self._death(stage, done)

    def _send(self, line: str) -> None:
        for attempt in (0, 1):
            if self.proc is None:
                self.start()
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
                return
            except (BrokenPipeError, OSError):   # it died after its last answer
                self.dead_between_cases += 1
                self.close()
                if attempt:
                    raise self.error(f"{self.name} keeps dying before reading a case") from None

    def _death(self, stage, done) -> dict:
        rc = self.proc.wait()
        detail = self.stderr_tail()
        self.close()
        return {"stage": stage, "checks": done, "how": describe_exit(rc), "detail": detail}

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()
        if self.err is not None:
            self.err.close()
        self.proc, self.err = None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
