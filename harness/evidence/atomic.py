"""Write files so that a reader never sees half of one: temp file + rename."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..core import jsonio


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def prepare(path, data: bytes) -> str:
    """Write data to a temp file beside `path` (mode per the umask, flushed to disk)
    and return its name; os.replace(name, path) publishes it in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_bytes(path, data: bytes) -> Path:
    tmp = prepare(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(path)


def write_text(path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path, obj, indent=1) -> Path:
    """Strict JSON (core/jsonio.py: non-finite numbers as tagged objects)."""
    return write_text(path, jsonio.dumps(obj, indent=indent, sort_keys=True) + "\n")
