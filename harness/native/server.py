"""Client of the native suite's server mode (`vjpcheck-native --serve TOLERANCES.json`).

One scenario per line in, one result per line out (see native/src/main.cpp):
{"record": ..., "vjp_error": ...}, {"invalid": reason} or {"skip": {...}}, each
preceded by {"stage": name, "checks": [...]} lines. A binary that dies while
serving a case becomes one {"crashed": {...}} result naming the stage it died
in, and the next case starts a fresh process. The fuzzer's glue turns these
results into outcomes (harness/cli/native_fuzz.py); nothing here knows the
fuzzer.
"""
from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from ..core import checks, jsonio


class ServerError(RuntimeError):
    """The server cannot start, or keeps dying before reading a case."""


def write_tolerances(path) -> Path:
    path = Path(path)
    path.write_text(jsonio.dumps({"tolerances": {"reference": checks.TOLERANCE,
                                                 "fd": checks.FD_TOLERANCE}}) + "\n", encoding="utf-8")
    return path


def describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            return f"signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"signal {-rc}"
    return f"exit {rc}"


class Server:
    """A long-lived `--serve` process; `run(scenario_dict)` returns one result dict."""

    def __init__(self, binary, tolerances, timeout_s: float | None = 120.0):
        self.binary, self.tolerances, self.timeout_s = str(binary), str(tolerances), timeout_s
        self.proc, self.err = None, None
        self.starts = 0            # processes started (1 + restarts)
        self.ops: list = []

    def _start(self):
        self.err = tempfile.TemporaryFile(mode="w+")
        try:
            self.proc = subprocess.Popen([self.binary, "--serve", self.tolerances],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.err, text=True, bufsize=1)
        except OSError as e:
            raise ServerError(f"cannot start {self.binary}: {e.strerror}") from None
        self.starts += 1
        line = self.proc.stdout.readline()
        try:
            hello = json.loads(line) if line else {}
        except ValueError:
            hello = {}
        if not hello.get("ready"):
            rc = self.proc.wait()
            raise ServerError(f"{self.binary} --serve did not start ({describe_exit(rc)}): "
                              f"{self.stderr_tail() or 'no output'}")
        self.ops = list(hello.get("ops", []))

    def stderr_tail(self) -> str:
        if self.err is None:
            return ""
        self.err.seek(0)
        lines = [ln.strip() for ln in self.err.read().splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""

    def _send(self, line: str) -> None:
        for attempt in (0, 1):
            if self.proc is None:
                self._start()
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
                return
            except (BrokenPipeError, OSError):   # died after its last answer
                self.close()
                if attempt:
                    raise ServerError(f"{self.binary} --serve keeps dying before reading a case")

    def run(self, scenario: dict) -> dict:
        self._send(jsonio.dumps({"scenario": scenario}) + "\n")
        stage, done = "forward", []
        timer = None
        if self.timeout_s:
            proc = self.proc
            timer = threading.Timer(self.timeout_s, lambda: proc.poll() is None and proc.kill())
            timer.start()
        try:
            for line in self.proc.stdout:
                msg = jsonio.loads(line)
                if "stage" in msg:
                    stage, done = msg["stage"], msg.get("checks", [])
                    continue
                if "harness_error" in msg:
                    raise ServerError(f"the server rejected a request: {msg['harness_error']}")
                return msg
        finally:
            if timer is not None:
                timer.cancel()
        return self._died(stage, done)

    def _died(self, stage, done) -> dict:
        rc = self.proc.wait()
        detail = self.stderr_tail()
        self.close()
        return {"crashed": {"stage": stage, "checks": done, "how": describe_exit(rc), "detail": detail}}

    def close(self):
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
            self.err.close()
        self.proc, self.err = None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
