"""The protocol side of a child process (scenario worker, fuzz worker, the replay
worker): one JSON object per line on a private copy of fd 1. The parent side is
child.py."""
from __future__ import annotations

import json
import os
import sys

_PROTO = None


def open_protocol() -> None:
    """Keep the protocol on a private copy of fd 1 and point fd 1 at stderr:
    native libraries print to stdout (OpenBLAS's xerbla does, then exits), and
    their text must not interleave with the JSON lines."""
    global _PROTO
    _PROTO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def emit(obj) -> None:
    out = _PROTO or sys.stdout
    out.write(json.dumps(obj) + "\n")
    out.flush()


def serve(handle) -> int:
    """Answer every request line on stdin with `handle(request)`, one answer line each
    (child.Child's protocol). A harness error (a value JSON cannot hold, too) is sent as
    {"harness_error": traceback} and the next request is read: it must surface, never
    read as an MLX crash."""
    import traceback
    emit({"ready": True})
    for line in sys.stdin:
        try:
            answer = json.dumps(handle(json.loads(line)))
        except Exception:
            emit({"harness_error": traceback.format_exc()})
            continue
        emit(json.loads(answer))
    return 0
