"""Object files and linked builds compiled once and reused, keyed by everything
that shapes them.

Entries are directories under the cache root (`$MLX_VJPCHECK_CACHE`, else
~/.cache/mlx-vjpcheck): built in a temporary sibling and renamed into place,
so an interrupted or failed build leaves no entry behind, and two runs filling
the same entry at once both end with a complete one. Reused work is replayed
into the run's commands.json with its original command line and logs, marked
"cached".

What is cached, and by what:
* native-objects/suite-<key>: the C++ suite's objects (compiler, flags, sources,
  the library's headers);
* native-objects/unit-<key>: one translation unit's object, pristine or patched
  (the unit, its text after the patch, compiler, flags after --opt, headers): a
  patch changed in one unit recompiles that unit only, and an unchanged patch
  recompiles nothing;
* mlx-bindings/...: MLX's Python bindings and C++ test objects (bindings.py);
* mlx-builds/<variant>-<key>: linked packages and binaries (variants.py).
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

from ..core.exits import exit_text
from ..core import resources
from ..evidence import atomic

META = "meta.json"


class CompileFailed(RuntimeError):
    """Carries the failing command's recorder entry."""

    def __init__(self, what: str, entry: dict):
        super().__init__(f"compiling {what} failed ({exit_text(entry['exit_code'], 'exit')}): "
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
        h.update(p if isinstance(p, bytes) else json.dumps(p, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def tree_digest(root: Path, pattern: str) -> str:
    """Names and contents of every file under root matching pattern."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(root).rglob(pattern) if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def parallel(fn, items, workers: int) -> list:
    """fn over items in `workers` threads, results in order. The first exception (a
    KeyboardInterrupt included) cancels everything not yet started and is re-raised once
    the running items have ended: nothing keeps compiling after Ctrl-C."""
    items = list(items)
    if not items:
        return []
    pool = cf.ThreadPoolExecutor(max(1, min(workers, len(items))))
    futures = [pool.submit(fn, x) for x in items]
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def entry(root: Path, key: str, fill: Callable[[Path], dict], fresh: bool = False) -> tuple:
    """(entry directory, meta, reused?): the entry `key` under root, filled now by
    fill(tmpdir) -> meta when it is missing (or `fresh`). The meta is stored as
    meta.json, written last; a directory without it is not an entry."""
    final = Path(root) / key
    meta_path = final / META
    if meta_path.is_file() and not fresh:
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError:
            meta = None
        if isinstance(meta, dict):   # anything else (damaged, an older layout) is rebuilt
            return final, meta, True
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.partial-", dir=final.parent))
    try:
        meta = fill(tmp)
        atomic.write_json(tmp / META, meta)
        if final.exists():
            old = final.with_name(f".{key}.old-{os.getpid()}")
            os.replace(final, old)
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(tmp, final)
        except OSError:   # another run filled the same entry meanwhile: theirs is as good
            shutil.rmtree(tmp, ignore_errors=True)
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final, meta, False


def _kept(rec, done: dict, tmp: Path, final: Path) -> dict:
    """A recorder entry as stored in a cache entry: logs inline, paths at their final place."""
    return dict(done, stdout=(rec.root / done["stdout"]).read_text(encoding="utf-8"),
                stderr=(rec.root / done["stderr"]).read_text(encoding="utf-8"),
                argv=[a.replace(str(tmp), str(final)) for a in done["argv"]])


def replay(rec, meta_commands: list) -> None:
    for cmd in meta_commands:
        rec.replay(cmd["id"], cmd)


def compile_cached(key: str, jobs: list, root: Path, rec, workers: int, fresh=False) -> dict:
    """{job.name: object path}: from the cache entry `key`, or compiled now and stored."""
    final = Path(root) / key

    def fill(tmp):
        done = parallel(lambda j: rec.run(j.cid, j.argv(tmp / j.name), j.cwd), jobs, workers)
        for job, d in zip(jobs, done):
            if d["exit_code"] != 0:
                raise CompileFailed(job.what, d)
        return {"commands": [_kept(rec, d, tmp, final) for d in done]}
    path, meta, reused = entry(root, key, fill, fresh)
    if reused:
        replay(rec, meta.get("commands", []))
    return {j.name: path / j.name for j in jobs}
