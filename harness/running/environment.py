"""What the evidence was produced on: versions, platform, compiler, devices."""
from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

BACKEND_PACKAGES = ("mlx", "mlx-cpu", "mlx-metal", "mlx-cuda", "mlx-cuda13", "mlx-cuda12")


def _version(dist: str):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _first_line(cmd) -> str | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else None


def git_commit(path) -> str | None:
    if not path:
        return None
    line = _first_line(["git", "-C", str(path), "rev-parse", "HEAD"])
    return line if line and len(line) == 40 else None


def checkout_version(path) -> str | None:
    """The version an MLX checkout builds, from its mlx/version.h."""
    try:
        text = (Path(path) / "mlx" / "version.h").read_text(encoding="utf-8")
    except (OSError, TypeError):
        return None
    parts = [re.search(rf"#define MLX_VERSION_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None


def record(devices=None, mlx_checkout=None) -> dict:
    """The environment. With `mlx_checkout` (build_and_test.py) the subject is that
    checkout: `mlx` is the version its mlx/version.h says, `mlx_checkout_commit` its
    commit, and `mlx_installed` whatever wheel this Python also has."""
    env = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "numpy": _version("numpy"),
        "packages": {p: v for p in BACKEND_PACKAGES if (v := _version(p))},
        "compiler": _first_line(["c++", "--version"]),
        "mlx_checkout_commit": git_commit(mlx_checkout),
    }
    try:
        import mlx.core as mx
        env["mlx"] = mx.__version__
    except ImportError:
        env["mlx"] = None
    if mlx_checkout:
        env["mlx_installed"], env["mlx"] = env["mlx"], checkout_version(mlx_checkout)
        env["subject"] = "mlx checkout"
    if devices:
        from . import devices as dev
        env["devices"] = {d: dev.backend(d) for d in devices}
    return env


def provenance(command: list, selection: dict, catalog_digest: str) -> dict:
    """What produced a results file: this harness (version, and its git commit when it
    runs from a checkout), the catalog it ran (digest), the command line, the selection."""
    from .. import __version__
    from ..core import resources
    root = resources.PACKAGE_DIR.parent
    commit = git_commit(root) if (root / ".git").exists() else None
    return {"harness": {"version": __version__, "commit": commit}, "catalog_digest": catalog_digest,
            "command": [str(a) for a in command], "selection": dict(selection)}
