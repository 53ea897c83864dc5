"""Run directories appear whole or not at all: built in a temp sibling, then renamed."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from . import atomic, manifest


class OutDirError(RuntimeError):
    """The requested output directory cannot be used (exit 2)."""


def check_target(out) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"--out {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / manifest.NAME).exists():
        raise OutDirError(f"--out {out} is a non-empty directory not written by mlx-vjpcheck")
    return out


@contextmanager
def staged(out):
    """Yield a temp dir to fill; on success write the manifest and swap it into place."""
    out = check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield tmp
        atomic.write_text(tmp / manifest.NAME, manifest.render(tmp))
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, old / "x")
        os.replace(tmp, out)
        if old:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
