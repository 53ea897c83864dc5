"""Which of MLX's gradient rules the op records exercise: the coverage table.

MLX writes each primitive's reverse rule as a `::vjp(` definition in
mlx/primitives.cpp and mlx/fast.cpp (a line starting `std::vector<array>
Name::vjp(`; calls of a vjp inside a body are indented and do not count). The
list of those names for the tested MLX commit ships with the package
(mlx_primitives.json, written by `mlx-vjpcheck coverage --mlx-source DIR
--save-list FILE`); `from_source` reads it from any checkout instead. Each op
record names the primitives its calls exercise (OpInfo.primitives); a
primitive is covered when at least one registered op names it, and the table
says by which ops and with how many catalog scenarios, or why it is not
covered (UNCOVERED). Names from a source file are untrusted text: only names
of the form [A-Za-z_][A-Za-z0-9_]* are read, and Markdown escapes them anyway.
Standard library only (the cases stage; the catalog is numpy).
"""
from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SCHEMA", "SOURCE_FILES", "TARGET_PERCENT", "CoverageError", "PrimitiveList", "Row", "from_source",
           "shipped", "load", "document", "table", "unknown_names", "totals", "from_catalog", "markdown", "text",
           "is_ours"]

SCHEMA = "mlx-vjpcheck/mlx-primitives/1"
SOURCE_FILES = ("mlx/primitives.cpp", "mlx/fast.cpp")
DEFINITION = re.compile(r"^std::vector<array>\s+([A-Za-z_][A-Za-z0-9_]*)::vjp\(", re.MULTILINE)
SHIPPED = Path(__file__).with_name("mlx_primitives.json")
TARGET_PERCENT = 90.0
MARKER = "<!-- mlx-vjpcheck coverage table -->"
TEXT_MARKER = "mlx-vjpcheck coverage: "

# Why a primitive with a `::vjp(` definition has no op exercising it; a primitive
# neither covered nor listed here is reported as "no op names it yet".
UNCOVERED = {
    "Primitive": "the base class's default: it raises 'not implemented', so there is no rule to check",
}


class CoverageError(ValueError):
    """A checkout or list that cannot be read (one line)."""


@dataclass(frozen=True)
class PrimitiveList:
    # Where the names come from: the MLX commit and version, and the files read.
    commit: str
    version: str
    files: tuple
    # (name, file) of every `::vjp(` definition, in file order.
    primitives: tuple

    def __post_init__(self):
        names = [n for n, _ in self.primitives]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise CoverageError(f"PrimitiveList: field primitives names {twice} twice")
        if not all(isinstance(n, str) and DEFINITION.match(f"std::vector<array> {n}::vjp(") and f in self.files
                   for n, f in self.primitives):
            raise CoverageError("PrimitiveList: field primitives holds a name that is not an identifier, or a file "
                                "outside field files")

    @property
    def names(self) -> tuple:
        return tuple(n for n, _ in self.primitives)


# --- reading the list: from a checkout, from the shipped file ---------------------------------------

def from_source(root) -> PrimitiveList:
    """The `::vjp(` definitions of a checkout (CoverageError when it is not one)."""
    root = Path(root)
    missing = [f for f in SOURCE_FILES if not (root / f).is_file()]
    if missing:
        raise CoverageError(f"{root} is not an MLX checkout: {', '.join(missing)} not found")
    found = []
    for f in SOURCE_FILES:
        text = (root / f).read_text(encoding="utf-8", errors="replace")
        found += [(m.group(1), f) for m in DEFINITION.finditer(text)]
    return PrimitiveList(_commit(root), _version(root), SOURCE_FILES, tuple(found))


def _commit(root: Path) -> str:
    """HEAD of the checkout (git, else .git/HEAD read directly; "unknown" without either)."""
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30)
        if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", out.stdout.strip()):
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    head = root / ".git" / "HEAD"
    text = head.read_text(encoding="utf-8").strip() if head.is_file() else ""
    if text.startswith("ref: "):
        ref = root / ".git" / text[5:]
        text = ref.read_text(encoding="utf-8").strip() if ref.is_file() else ""
    return text if re.fullmatch(r"[0-9a-f]{40}", text) else "unknown"


def _version(root: Path) -> str:
    """MAJOR.MINOR.PATCH from mlx/version.h ("unknown" without it)."""
    path = root / "mlx" / "version.h"
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    parts = [re.search(rf"#define MLX_VERSION_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts) if all(parts) else "unknown"


def document(plist: PrimitiveList) -> dict:
    return {"schema": SCHEMA, "mlx_commit": plist.commit, "mlx_version": plist.version,
            "files": list(plist.files), "primitives": [{"name": n, "file": f} for n, f in plist.primitives]}


def load(path) -> PrimitiveList:
    """A list written by `--save-list` (CoverageError when it is not one)."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CoverageError(f"cannot read the primitive list {path}: {e}") from None
    if not isinstance(d, dict) or d.get("schema") != SCHEMA:
        raise CoverageError(f"{path} is not an MLX primitive list (schema {SCHEMA})")
    try:
        return PrimitiveList(str(d["mlx_commit"]), str(d["mlx_version"]), tuple(d["files"]),
                             tuple((p["name"], p["file"]) for p in d["primitives"]))
    except (KeyError, TypeError) as e:
        raise CoverageError(f"{path}: a field is missing or malformed ({e})") from None


def shipped() -> PrimitiveList:
    """The list for the MLX commit this release was checked against (package data)."""
    return load(SHIPPED)


# --- the table ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    # The primitive and the file of its `::vjp(` definition.
    primitive: str
    file: str
    # The registered ops naming it and their catalog scenarios together, or why none does.
    ops: tuple
    scenarios: int
    reason: str

    @property
    def covered(self) -> bool:
        return bool(self.ops)


def table(plist: PrimitiveList, records: dict, scenario_counts: dict) -> list:
    """One Row per primitive of the list. `records`: op name -> OpInfo (the registry);
    `scenario_counts`: op name -> its catalog scenarios."""
    rows = []
    for name, f in plist.primitives:
        ops = tuple(op for op, info in records.items() if name in info.primitives)
        reason = "" if ops else UNCOVERED.get(name, "no op names it yet")
        rows.append(Row(name, f, ops, sum(scenario_counts.get(op, 0) for op in ops), reason))
    return rows


def unknown_names(plist: PrimitiveList, records: dict) -> dict:
    """Primitive names op records give that the list does not define with a VJP: a
    misspelt name, or a primitive whose rule lives elsewhere (op -> names)."""
    known = set(plist.names)
    out = {op: sorted(set(info.primitives) - known) for op, info in records.items()}
    return {op: names for op, names in out.items() if names}


def totals(rows) -> tuple:
    """(covered, total, percent)."""
    covered = sum(r.covered for r in rows)
    return covered, len(rows), (100.0 * covered / len(rows) if rows else 0.0)


def from_catalog(plist: PrimitiveList) -> tuple:
    """(rows, unknown names) for the registered ops and the catalog."""
    from .. import ops
    from . import catalog
    counts = Counter(s.op for s in catalog.catalog())
    records = ops.registry()
    return table(plist, records, counts), unknown_names(plist, records)


# --- rendering -----------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|])")


def md(text) -> str:
    """Text made inert in a Markdown table cell."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def _tally(rows) -> str:
    covered, total, pct = totals(rows)
    return f"covered: {covered} / {total} ({pct:.1f} %), target {TARGET_PERCENT:.0f} %"


def markdown(plist: PrimitiveList, rows, unknown: dict) -> str:
    lines = [MARKER, "# Coverage of MLX's gradient rules", "",
             "Generated by `mlx-vjpcheck coverage --markdown` from the shipped list of MLX's primitives "
             "(harness/cases/mlx_primitives.json) and the registered op records; do not edit by hand.", "",
             f"MLX {md(plist.version)} at {md(plist.commit)}: {len(rows)} `::vjp(` definitions in "
             f"{md(', '.join(plist.files))}.", "", f"**{_tally(rows)}**", "",
             "| primitive | file | covered by (ops) | scenarios | not covered because |",
             "|---|---|---|---:|---|"]
    for r in rows:
        lines.append(f"| {md(r.primitive)} | {md(r.file)} | {md(', '.join(r.ops))} | {r.scenarios} | {md(r.reason)} |")
    if unknown:
        lines += ["", "Primitive names op records give that this list does not define with a VJP:", ""]
        lines += [f"- {md(op)}: {md(', '.join(names))}" for op, names in unknown.items()]
    return "\n".join(lines) + "\n"


def text(plist: PrimitiveList, rows, unknown: dict) -> str:
    width = max([len(r.primitive) for r in rows] + [9])
    lines = [f"{TEXT_MARKER}MLX {plist.version} at {plist.commit}: {len(rows)} ::vjp( definitions in "
             f"{', '.join(plist.files)}", _tally(rows), ""]
    for r in rows:
        what = f"{r.scenarios:5d}  {', '.join(r.ops)}" if r.covered else f"    -  ({r.reason})"
        lines.append(f"{r.primitive:{width}s} {what}")
    for op, names in unknown.items():
        lines.append(f"op {op} names primitives without a VJP in this list: {', '.join(names)}")
    return "\n".join(lines) + "\n"


def is_ours(path) -> bool:
    """Whether an existing file is one this command wrote (a table or a list)."""
    try:
        head = Path(path).read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    if head.startswith((MARKER, TEXT_MARKER)):
        return True
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")).get("schema") == SCHEMA
    except (OSError, ValueError, AttributeError):
        return False
