"""Probe outputs as evidence: run the standalone probes, record their output in
a fixed text form, and check a recorded output against the probe contract
(exit 0 defect absent, 1 defect present, 125 cannot test; one VERDICT line).

Recording only reads the probes' stdout/stderr; the validator only parses the
recorded text. Nothing from a bundle is ever executed.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ..core import resources
from . import paths

FOLDER = paths.PROBE_OUTPUTS
PROBES = resources.probes_dir()
TIMEOUT = 300
# Durations would make the same evidence bundle differently twice.
_TIMING = re.compile(r"\d+\.\d+\s?(?:ms|s|sec|seconds)\b")
_VERDICT = {0: "VERDICT: defect absent", 1: "VERDICT: defect present", 125: "VERDICT: cannot test"}


# The shipped probes, and the catalog defect tags each one decides (for cross-checks).
PROBE_TAGS = {
    "probe.py": ("left_selection",),
    "probe_quantized_and_loss.py": ("quantized_left",),
    "probe_broadcast_tail.py": ("broadcast_tail",),
}
_OUTPUT = re.compile(r"^" + re.escape(FOLDER) + r"/(probe[a-z_]*)\.(cpu|gpu)\.txt$")
_MLX_LINE = re.compile(r"^mlx (\S+), device (cpu|gpu)$", re.M)


def parse_output_name(name: str):
    """(probe file, device) for the recorded output of a shipped probe, else None."""
    m = _OUTPUT.match(name)
    if not m or m.group(1) + ".py" not in PROBE_TAGS:
        return None
    return m.group(1) + ".py", m.group(2)


def recorded(text: str) -> dict | None:
    """exit code, MLX version and device of a recorded probe output (None if malformed)."""
    m = re.match(r"command: .*\nexit code: (\S+)\n--- stdout ---\n(.*)--- stderr ---\n", text, re.S)
    if not m:
        return None
    mlx = _MLX_LINE.search(m.group(2))
    code = m.group(1)
    return {"exit_code": int(code) if code.lstrip("-").isdigit() else None,
            "mlx": mlx.group(1) if mlx else None, "device": mlx.group(2) if mlx else None}


def strip_timings(text: str) -> str:
    return _TIMING.sub("<time>", text)


def available() -> list:
    return sorted(p.name for p in PROBES.glob("probe*.py")) if PROBES.is_dir() else []


def output_name(probe: str, device: str) -> str:
    return f"{FOLDER}/{Path(probe).stem}.{device}.txt"


def render(probe: str, device: str, code, stdout: str, stderr: str) -> str:
    return (f"command: python3 probes/{probe} --device {device}\n"
            f"exit code: {code}\n--- stdout ---\n{strip_timings(stdout)}"
            f"--- stderr ---\n{strip_timings(stderr)}")


def run(probe: str, device: str) -> str:
    argv = [sys.executable, str(PROBES / probe), "--device", device]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=PROBES.parent)
        return render(probe, device, p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired:
        return render(probe, device, "timeout", "", f"no exit within {TIMEOUT} s\n")


def problems(text: str) -> list:
    """Why a recorded probe output breaks the probe contract (empty when it holds)."""
    m = re.match(r"command: (.*)\nexit code: (\S+)\n--- stdout ---\n(.*)--- stderr ---\n", text, re.S)
    if not m:
        return ["not a recorded probe output"]
    code, stdout = m.group(2), m.group(3)
    verdicts = [line for line in stdout.splitlines() if line.startswith("VERDICT: ")]
    if code == "timeout":
        return [] if not verdicts else ["timed out yet claims a verdict"]
    if not code.lstrip("-").isdigit() or int(code) not in _VERDICT:
        return [f"exit code {code} is not 0, 1 or 125"]
    want = _VERDICT[int(code)]
    if int(code) == 125 and not verdicts and stdout.startswith("cannot test:"):
        return []
    if len(verdicts) != 1 or not verdicts[0].startswith(want):
        return [f"exit code {code} needs exactly one line starting {want!r}"]
    return []
