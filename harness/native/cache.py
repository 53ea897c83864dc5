"""Object files compiled once and reused, keyed by everything that shapes them.

The native suite's own objects and the pristine translation units do not
change while a contributor iterates on a patch, so a validation normally
compiles only the patched unit. Reused compiles are replayed into the run's
commands.json with their original command line and logs, marked "cached".
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ..core import resources
from ..evidence import atomic


class CompileFailed(RuntimeError):
    """Carries the failing command's recorder entry."""

    def __init__(self, what: str, entry: dict):
        super().__init__(f"compiling {what} failed (exit {entry['exit_code']}): "
                         f"see {{out}}/{entry['stderr']}")
        self.entry = entry


@dataclass(frozen=True)
class Job:
    cid: str                        # command id in commands.json
    name: str                       # object file name inside the cache entry
    argv: Callable[[Path], list]    # the compile command, given the object path
    cwd: str
    what: str                       # for the error line: "pristine mlx/primitives.cpp"


def default_root() -> Path:
    return resources.cache_root() / "native-objects"


@lru_cache(maxsize=8)
def compiler_version(compiler: str) -> str:
    try:
        return subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return ""


def digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else json.dumps(p, sort_keys=True).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def tree_digest(root: Path, pattern: str) -> str:
    """Names and contents of every file under root matching pattern."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(root).rglob(pattern) if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def compile_cached(key: str, jobs: list, root: Path, rec, workers: int, fresh=False) -> dict:
    """{job.name: object path}: from the cache entry `key`, or compiled now and stored."""
    entry = Path(root) / key
    meta = entry / "meta.json"
    if meta.is_file() and not fresh:
        for cmd in json.loads(meta.read_text(encoding="utf-8")):
            rec.replay(cmd["id"], cmd)
        return {j.name: entry / j.name for j in jobs}
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=entry.parent))
    try:
        with cf.ThreadPoolExecutor(workers) as pool:
            done = list(pool.map(lambda j: rec.run(j.cid, j.argv(tmp / j.name), j.cwd), jobs))
        for job, d in zip(jobs, done):
            if d["exit_code"] != 0:
                raise CompileFailed(job.what, d)
        kept = [dict(d, stdout=(rec.root / d["stdout"]).read_text(encoding="utf-8"),
                     stderr=(rec.root / d["stderr"]).read_text(encoding="utf-8"),
                     argv=[a.replace(str(tmp), str(entry)) for a in d["argv"]]) for d in done]
        atomic.write_json(tmp / "meta.json", kept)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)
        try:
            os.replace(tmp, entry)
        except OSError:   # another run filled the same entry meanwhile: theirs is as good
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {j.name: entry / j.name for j in jobs}
