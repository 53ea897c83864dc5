"""Child process that runs fuzz cases, so an MLX abort (or a BLAS error that
exits the process) costs one `crashed` outcome instead of the campaign.

Protocol, one JSON object per line. In: {"scenario": {...}, "fd_seed": n}.
Out: {"stage": name, "checks": [...]} before each MLX stage, then
{"outcome": {...}}. Usage: python -m harness.fuzz.worker DEVICE
"""
from __future__ import annotations

import json
import sys
import traceback


def _emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv=None) -> int:
    device = (argv or sys.argv[1:])[0]
    from .. import devices, opinfo, scenario
    from . import engine
    opinfo.load_plugins()
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
        _emit({"outcome": engine.to_json(out)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
