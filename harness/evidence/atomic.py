"""Write files so that a reader never sees half of one: temp file + rename."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..core import jsonio


def write_bytes(path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text(path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path, obj, indent=1) -> Path:
    """Strict JSON (core/jsonio.py: non-finite numbers as tagged objects)."""
    return write_text(path, jsonio.dumps(obj, indent=indent, sort_keys=True) + "\n")
