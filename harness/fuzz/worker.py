"""Child process that runs fuzz cases, so an MLX abort (or a BLAS error that
exits the process) costs one `crashed` outcome instead of the campaign.

Protocol, one JSON object per line. In: {"scenario": {...}, "fd_seed": n}.
Out: {"stage": name, "checks": [...]} before each MLX stage, then
{"outcome": {...}}. Usage: python -m <package>.fuzz.worker DEVICE
"""
from __future__ import annotations

import json
import os
import signal
import sys
import traceback


_PROTO = None


def _protocol_channel():
    """Keep the protocol on a private copy of fd 1 and point fd 1 at stderr:
    native libraries print to stdout (BLAS's xerbla does, then exits), and
    their lines must not interleave with the JSON."""
    global _PROTO
    _PROTO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _emit(obj) -> None:
    _PROTO.write(json.dumps(obj) + "\n")
    _PROTO.flush()


def main(argv=None) -> int:
    device = (argv or sys.argv[1:])[0]
    # Ctrl-C is the parent's to handle: it closes this worker when it has kept its findings.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _protocol_channel()
    from ..core import scenario
    from ..running import devices
    from . import engine
    devices.select(device)
    _emit({"ready": True})
    for line in sys.stdin:
        msg = json.loads(line)
        s = scenario.Scenario.from_dict(msg["scenario"])
        try:
            out = engine.run_case(s, device, msg.get("fd_seed", 0),
                                  on_stage=lambda name, done: _emit({"stage": name, "checks": done}))
        except Exception:   # a harness bug must surface, never read as an MLX crash
            _emit({"harness_error": traceback.format_exc()})
            continue
        _emit({"outcome": engine.to_json(out, compact=out.status == "pass")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
