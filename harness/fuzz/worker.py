"""Child process that runs fuzz cases, so an MLX abort (or a BLAS error that
exits the process) costs one `crashed` outcome instead of the campaign.

Protocol, one JSON object per line. In: {"scenario": {...}, "fd_seed": n}, or with
"probe": true, the forward alone (engine.probe).
Out: {"stage": name, "checks": [...]} before each MLX stage, then
{"outcome": {...}}. Usage: python -m <package>.fuzz.worker DEVICE
"""
from __future__ import annotations

import signal
import sys

from ..running import channel


def main(argv=None) -> int:
    device = (argv or sys.argv[1:])[0]
    # Ctrl-C is the parent's to handle: it closes this worker when it has kept its findings.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel.open_protocol()
    from ..cases import bind
    from ..core import scenario
    from ..running import devices
    from . import engine
    devices.select(device)
    stage = lambda name, done: channel.emit({"stage": name, "checks": done})  # noqa: E731

    def answer(msg):
        s = bind(scenario.Scenario.from_dict(msg["scenario"]))
        out = engine.probe(s, device, stage) if msg.get("probe") else \
            engine.run_case(s, device, msg.get("fd_seed", 0), on_stage=stage)
        return {"outcome": engine.to_json(out, compact=out.status == "pass")}
    return channel.serve(answer)


if __name__ == "__main__":
    sys.exit(main())
