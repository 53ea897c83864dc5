"""vjp_exception: the VJP raised (or the process died) where the forward worked.
running/execute.py measures it itself: the exception is the record's `error`, a
process that died the parent's crash record; no check of its own to re-derive."""
from __future__ import annotations

from .base import Oracle

ORACLE = Oracle("vjp_exception", "the VJP raised (or the process died) where the forward succeeded",
                (), ("run", "fuzz", "gate"), None, None, confirms=True, first_order=True)
