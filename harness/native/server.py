"""Client of the native suite's server mode (`vjpcheck-native --serve TOLERANCES.json`).

One scenario per line in, one result per line out (see native/src/main.cpp):
{"record": ..., "vjp_error": ...}, {"invalid": reason} or {"skip": {...}}, each
preceded by {"stage": name, "checks": [...]} lines. A binary that dies while
serving a case becomes one {"crashed": {...}} result naming the stage it died
in, and the next case starts a fresh process (`running/child.py`, shared
with the fuzz worker). The fuzzer's glue turns these results into outcomes
(harness/native/fuzz.py); nothing here knows the fuzzer.
"""
from __future__ import annotations

from pathlib import Path

from ..core import checks, jsonio
from ..running.child import Child, ChildError, OwnsChild


class ServerError(ChildError):
    """The server cannot start, or keeps dying before reading a case."""


def write_tolerances(path) -> Path:
    path = Path(path)
    path.write_text(jsonio.dumps({"tolerances": {"reference": checks.TOLERANCE,
                                                 "fd": checks.FD_TOLERANCE}}) + "\n", encoding="utf-8")
    return path


class Server(OwnsChild):
    """A long-lived `--serve` process; `run(scenario_dict)` returns one result dict."""

    def __init__(self, binary, tolerances, timeout_s: float | None = 120.0):
        self.binary = str(binary)
        self.child = Child([self.binary, "--serve", str(tolerances)], name=f"{self.binary} --serve",
                           error=ServerError, timeout_s=timeout_s, decode=jsonio.loads)

    @property
    def starts(self) -> int:
        """Processes started (1 + restarts)."""
        return self.child.starts

    @property
    def ops(self) -> list:
        """The ops the binary serves, as its ready line names them."""
        return list(self.child.hello.get("ops", []))

    def stderr_tail(self) -> str:
        return self.child.stderr_tail()

    def run(self, scenario: dict) -> dict:
        answer, death = self.child.request(jsonio.dumps({"scenario": scenario}) + "\n")
        if death is not None:
            return {"crashed": death}
        if "harness_error" in answer:
            raise ServerError(f"the server rejected a request: {answer['harness_error']}")
        return answer
