"""Pack an evidence directory into a deterministic, self-validating zip.

The directory must validate first (rebuilding the manifest would otherwise
launder a tampered file). The bundle adds SUMMARY.md and the probe outputs
and carries a fresh MANIFEST.sha256 over everything. Same directory in, same
bytes out: sorted entries, fixed timestamps and modes, fixed deflate level.
"""
from __future__ import annotations

import io
import stat
import zipfile
import zlib

from ..core import jsonio
from . import manifest, probes, safezip, summary
from .load import Evidence, load

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
MODE = stat.S_IFREG | 0o644
LEVEL = 9


class NotValid(Exception):
    """The directory (or, impossibly, the bundle built from it) fails validation."""

    def __init__(self, what: str, lines: list):
        super().__init__(what)
        self.lines = lines


def _compress_type(data: bytes) -> int:
    # Keep every entry under the validator's bomb ratio: store what deflates too well.
    if len(data) > safezip.RATIO_MIN_SIZE and \
            len(data) > (safezip.MAX_RATIO // 2) * len(zlib.compress(data, LEVEL)):
        return zipfile.ZIP_STORED
    return zipfile.ZIP_DEFLATED


def zip_bytes(files: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.create_system = 3   # unix, so the mode bits below mean what they say
            info.external_attr = MODE << 16
            info.compress_type = _compress_type(files[name])
            zf.writestr(info, files[name], compresslevel=LEVEL)
    return buf.getvalue()


def _devices(files: dict) -> list:
    try:
        env = jsonio.loads(files.get("environment.json", b"{}"))
    except ValueError:
        env = {}
    devs = sorted((env.get("devices") or {}) if isinstance(env, dict) else {})
    return devs or ["cpu"]


def probe_outputs(files: dict) -> dict:
    """Run each probe on each recorded device (only called when none are recorded)."""
    return {probes.output_name(p, d): probes.run(p, d).encode("utf-8")
            for d in _devices(files) for p in probes.available()}


def contents(files: dict, run_probes: bool = True) -> dict:
    out = {n: b for n, b in files.items() if n not in (manifest.NAME, summary.NAME)}
    if run_probes and not any(n.startswith(probes.FOLDER + "/") for n in out):
        out.update(probe_outputs(out))
    out[summary.NAME] = summary.render(out).encode("utf-8")
    out[manifest.NAME] = "".join(f"{manifest.sha256(out[n])}  {n}\n" for n in sorted(out)).encode()
    return out


def _require_valid(validate, ev: Evidence, what: str) -> None:
    lines, passed = validate(ev)
    if not passed:
        raise NotValid(what, lines)


def build(directory, validate, run_probes: bool = True) -> tuple:
    """(zip bytes, number of entries); raises BadInput or NotValid.

    `validate(evidence) -> (lines, passed)` is the validator (harness.validation),
    passed in so that this stage does not depend on the one that checks it."""
    ev = load(directory)
    _require_valid(validate, ev, f"{directory} does not validate")
    files = contents(ev.files, run_probes)
    _require_valid(validate, Evidence("bundle", files), "the bundle built from it does not validate")
    return zip_bytes(files), len(files)
