"""Where the project's non-Python parts live: probes/, native/ and patch/.

In a checkout they are the folders next to the package. An installed wheel
carries copies as package data in <package>/_data/ (see pyproject.toml), so
every subcommand works from a non-editable install too.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _folder(name: str) -> Path:
    packaged = PACKAGE_DIR / "_data" / name
    return packaged if packaged.is_dir() else PACKAGE_DIR.parent / name


def probes_dir() -> Path:
    """The standalone probe scripts (probes/*.py)."""
    return _folder("probes")


def native_dir() -> Path:
    """The C++ suite: native/CMakeLists.txt and native/src/."""
    return _folder("native")


def patch_dir() -> Path:
    """The proposed MLX fix (patch/*.diff)."""
    return _folder("patch")


def cache_root() -> Path:
    """$MLX_VJPCHECK_CACHE, else $XDG_CACHE_HOME/mlx-vjpcheck, else ~/.cache/mlx-vjpcheck:
    release environments (versions), native objects and builds, the fuzz database."""
    import os
    if os.environ.get("MLX_VJPCHECK_CACHE"):
        return Path(os.environ["MLX_VJPCHECK_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlx-vjpcheck"
