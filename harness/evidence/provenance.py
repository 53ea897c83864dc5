"""Which recorded provenance fields replay holds to this machine, and which it does not (and why).

Replay re-executes evidence here; its verdict "reproduced" means "on what produced
the evidence", so every field that describes what produced it is compared with
this machine's, and a difference is drift: "not reproduced here", the field named
(`replay --allow-drift` replays anyway and says so). The fields not compared are
listed in NOT_COMPARED with the reason; docs/evidence.md repeats the list. Pure:
`here` is given (running/environment.py's record, plus the harness's provenance).
"""
from __future__ import annotations

import re

# Compared exactly: what MLX, the references and the harness are.
COMPARED = {
    "mlx": "MLX version",
    "mlx_checkout_commit": "MLX checkout commit (null: the installed wheel)",
    "packages": "installed MLX packages (mlx, mlx-cpu, mlx-metal, ...) and their versions",
    "python": "Python version",
    "numpy": "numpy version",
    "compiler": "C++ compiler (`c++ --version`; the native suite and the gate compile with it)",
}
NOT_COMPARED = {
    "platform": "only its system and CPU architecture are compared: the kernel release and C library "
                "version in the same string change with every system update and not what MLX computes",
    "devices": "each record's device must exist here (a record on a device this MLX lacks is not reproduced); "
               "the backend names are descriptions",
    "skipped_devices": "why a device was not run: a note, no record depends on it",
    "mlx_installed": "gate evidence only: the gate's subject is the checkout (its commit is compared by "
                     "build_and_test.py --replay), not the wheel beside it",
    "subject": "gate evidence only: says the subject is a checkout (compared through its commit)",
}
ARCHES = ("x86_64", "amd64", "aarch64", "arm64", "armv7l", "i386", "i686", "ppc64le", "s390x", "riscv64")


def architecture(env: dict) -> str | None:
    """The CPU architecture a record was made on: `machine`, or when that is null the
    architecture the platform string names (platform.platform() ends in it)."""
    if env.get("machine"):
        return str(env["machine"])
    plat = str(env.get("platform") or "").lower()
    found = [a for a in ARCHES if re.search(rf"(^|[-_ ]){a}($|[-_ ])", plat)]
    return found[0] if found else None


def _same_arch(a: str, b: str) -> bool:
    alias = {"amd64": "x86_64", "aarch64": "arm64"}
    return alias.get(a.lower(), a.lower()) == alias.get(b.lower(), b.lower())


def drift(recorded: dict, here: dict) -> list:
    """One line per provenance field whose recorded value is not this machine's."""
    out = []
    for key, what in COMPARED.items():
        if key in recorded and recorded[key] != here.get(key):
            out.append(f"{key} ({what}): recorded {recorded[key]!r}, here {here.get(key)!r}")
    system = str(here.get("platform") or "").split("-")[0].lower()
    plat = str(recorded.get("platform") or "")
    if not plat or not plat.lower().startswith(system):
        out.append(f"platform: recorded {plat or 'none'!r}, this is {system or '?'}")
    arch, mine = architecture(recorded), architecture(here)
    if arch is None:
        out.append("machine: the evidence records no CPU architecture (machine null, none in the platform "
                   f"string): it cannot be shown to be this {mine}")
    elif mine is None or not _same_arch(arch, mine):
        out.append(f"machine: recorded on {arch}, this is {mine}")
    out += _harness(recorded.get("harness"), here.get("harness"))
    return out


def _harness(recorded, here) -> list:
    """The harness that made a results file (its provenance): the same version and commit."""
    if not isinstance(recorded, dict) or not isinstance(here, dict):
        return []
    out = []
    for key in ("version", "commit"):
        if recorded.get(key) != here.get(key):
            out.append(f"harness {key}: recorded {recorded.get(key)!r}, this harness is {here.get(key)!r}")
    return out
