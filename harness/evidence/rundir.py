"""Run directories: checked before any work, written whole or not at all.

`check_target` runs first, before a command does anything: the directory must
be creatable and writable, and an existing one is only ever replaced when it
holds evidence of the same kind and the user said --replace. `staged` builds
the directory in a temporary sibling, writes the manifest, and swaps it into
place; on any failure (an interrupt included) nothing is left behind and an
older run is restored. Files and folders follow the umask like any other tool.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

from . import atomic, manifest, paths

KINDS = ("run", "fuzz", "versions", "native-gate", "native-wheel", "native-fuzz", "handoff", "sweep", "gradcheck")


class OutDirError(RuntimeError):
    """The requested output cannot be used (one line, exit 2)."""


def kind_of(directory: Path) -> str | None:
    """What evidence an mlx-vjpcheck run directory holds, from its files."""
    d = Path(directory)
    if (d / "fuzz-summary.json").is_file():   # build_and_test.py --fuzz (harness/cli/native_fuzz.py)
        return "native-fuzz"
    if (d / paths.FINDINGS).is_file():
        return "native-fuzz" if (d / paths.COMMANDS).is_file() else "fuzz"
    if (d / paths.VERSIONS).is_file():
        return "versions"
    if (d / paths.HANDOFF).is_file():
        return "handoff"
    if (d / paths.SWEEP).is_file():
        return "sweep"
    if (d / paths.GRADCHECK).is_file():
        return "gradcheck"
    if (d / paths.COMPARISON).is_file() or (d / paths.results_for("pristine")).is_file():
        return "native-gate"
    try:
        recorded = json.loads((d / paths.RESULTS).read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return recorded if recorded in KINDS else None


def _writable_ancestor(path: Path, flag: str) -> None:
    """The nearest existing ancestor must be a directory we can create entries in."""
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutDirError(f"{flag} {path}: {parent} is not a directory")
    try:   # os.access says yes to root on a read-only mount: try it
        probe = tempfile.mkdtemp(prefix=".vjpcheck-probe-", dir=parent)
        os.rmdir(probe)
    except OSError as e:
        raise OutDirError(f"{flag} {path}: cannot write in {parent} ({e.strerror})") from None


def check_creatable(path, flag: str) -> Path:
    """A file or directory the tool is about to create: its nearest existing ancestor must
    be a directory it can create entries in."""
    _writable_ancestor(Path(path), flag)
    return Path(path)


def check_writable(directory, flag: str) -> Path:
    """A directory the tool keeps using (a cache, a database): it must be one, or be
    creatable, and entries must be writable in it."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise OutDirError(f"{flag} {directory} is not a directory")
    _writable_ancestor(directory / "probe", flag)
    return directory


def check_target(out, kind: str | None = None, replace: bool = False, flag: str = "--out") -> Path:
    """Refuse an output directory that cannot be written, that is not ours, that
    holds another kind of evidence, or that holds this kind without --replace.
    kind None: any mlx-vjpcheck run directory may be replaced (internal callers)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{flag} {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not (out / manifest.NAME).is_file():
            raise OutDirError(f"{flag} {out} is a non-empty directory not written by mlx-vjpcheck")
        if kind is not None:
            found = kind_of(out)
            if found != kind:
                raise OutDirError(f"{flag} {out} holds {found or 'other'} evidence, not a {kind} run: "
                                  "choose another directory")
            if not replace:
                raise OutDirError(f"{flag} {out} already holds {kind} evidence: pass --replace to replace it")
    _writable_ancestor(out, flag)
    return out


def _is_ours(path: Path, kind: str) -> bool:
    try:
        if kind == "bundle":
            with zipfile.ZipFile(path) as zf:
                names = set(zf.namelist())
            return manifest.NAME in names and paths.SUMMARY in names
        if kind == "junit":
            head = path.read_text(encoding="utf-8", errors="replace")[:400]
            return "<testsuites>" in head and 'name="mlx-vjpcheck"' in head
        if kind == "catalog":
            return str(json.loads(path.read_text(encoding="utf-8")).get("schema", "")).startswith(
                "mlx-vjpcheck/scenario/")
    except (OSError, ValueError, AttributeError, zipfile.BadZipFile):
        return False
    return False


def check_file_target(path, kind: str, replace: bool = False, flag: str = "--out") -> Path:
    """The same rules for a single output file (a bundle, JUnit XML, a catalog); its folder
    must exist (a file option creates no folders: a typo in it would leave a tree behind)."""
    path = Path(path)
    if path.is_dir():
        raise OutDirError(f"{flag} {path} is a directory")
    if not path.parent.is_dir():
        raise OutDirError(f"{flag} {path}: the folder {path.parent} does not exist")
    if path.exists():
        if not _is_ours(path, kind):
            raise OutDirError(f"{flag} {path} exists and is not an mlx-vjpcheck {kind}: not overwriting it")
        if not replace:
            raise OutDirError(f"{flag} {path} already exists: pass --replace to replace it")
    _writable_ancestor(path, flag)
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def follow_umask(root: Path) -> None:
    """mkdtemp/mkstemp create 0700/0600; published evidence gets the usual modes."""
    mask = _umask()
    os.chmod(root, 0o777 & ~mask)
    for base, dirs, files in os.walk(root):
        for d in dirs:
            os.chmod(os.path.join(base, d), 0o777 & ~mask)
        for f in files:
            os.chmod(os.path.join(base, f), 0o666 & ~mask)


@contextmanager
def staged(out, kind: str | None = None, replace: bool = False):
    """Yield a temp dir to fill; on success write the manifest and swap it into place."""
    out = check_target(out, kind, replace)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    old = None
    try:
        yield tmp
        atomic.write_text(tmp / manifest.NAME, manifest.render(tmp))
        follow_umask(tmp)
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.replace(out, old)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not out.exists():
            os.replace(old, out)   # put the previous run back
            old = None
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
