"""The sweep's child process: one JSON request per line ({"entry", "corner", "seed"}),
one JSON answer per line ({"record": ...}). Running MLX here lets the parent turn a
crash (a signal, heap corruption) into a finding of its own and go on.
Usage: python -m <package>.sweep.worker DEVICE
"""
from __future__ import annotations

import json
import signal
import sys
import traceback

from ..running import channel


def main(argv=None) -> int:
    device = (argv or sys.argv[1:] or ["cpu"])[0]
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
    channel.open_protocol()
    import mlx.core as mx
    mx.set_default_device(mx.gpu if device == "gpu" else mx.cpu)
    from . import measure
    channel.emit({"ready": True, "device": device})
    for line in sys.stdin:
        req = json.loads(line)
        try:
            channel.emit({"record": measure.one(req["entry"], req["corner"], req["seed"], req.get("shrink", 0.0))})
        except Exception:   # the harness's own failure on this case, not MLX's
            channel.emit({"harness_error": traceback.format_exc(limit=8)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
