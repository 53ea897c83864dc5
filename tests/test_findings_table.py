"""The Findings table (docs/findings.md) is bound to the repository: every reproducer it
names exists and every one in probes/findings/ is named; every (op, class)
row whose class is a catalog defect tag has catalog scenarios with that tag;
and on the pinned MLX release each reproducer says "defect present" (exit 1).
"""
from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mlx_vjpcheck.cases import catalog

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "probes" / "findings"
PINNED = "0.32.4"


def _table_rows() -> list:
    text = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    section = text.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| op ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def _named_reproducers(rows) -> set:
    names = set()
    for row in rows:
        for ref in re.findall(r"`([^`]+\.py)`", row[-1]):
            names.add(Path(ref).name)
    return names


def _ops_of(cell: str) -> list:
    # "`.at[].set` (at_set)" names the registered op in parentheses.
    inner = re.findall(r"\(([a-z_]+)\)", cell)
    return inner or [op.strip() for op in cell.split(",")]


def test_table_and_reproducers_match():
    rows = _table_rows()
    assert len(rows) >= 10, "the Findings table was not found or lost rows"
    named = _named_reproducers(rows)
    on_disk = {p.name for p in FINDINGS.glob("*.py")}
    assert named - {"probe.py", "probe_quantized_and_loss.py", "probe_broadcast_tail.py"} == on_disk
    for name in named:
        assert (FINDINGS / name).exists() or (ROOT / "probes" / name).exists(), name


def test_each_tagged_class_has_catalog_scenarios():
    tags = {(s.op, t) for s in catalog.catalog() for t in s.defect_tags}
    untagged = []
    for row in _table_rows():
        if "harness/regressions" in row[-1]:
            continue   # the corpus row: its classes are the corpus entries, not catalog tags
        classes = [c.strip() for c in re.split(r"[,:(]", row[1])[0:3]]
        untagged += [(op, row[1][:40]) for op in _ops_of(row[0]) if not any((op, c) in tags for c in classes)]
    assert not untagged, untagged


def test_negative_control_unknown_reproducer_is_noticed(tmp_path):
    rows = _table_rows() + [["x", "y", "z", "w", "`probes/findings/not_there.py`"]]
    assert "not_there.py" in _named_reproducers(rows) - {p.name for p in FINDINGS.glob("*.py")}


def _run(path: Path) -> tuple:
    proc = subprocess.run([sys.executable, str(path), "--device", "cpu"], capture_output=True,
                          text=True, timeout=120)
    return path.name, proc.returncode, proc.stdout[-400:] + proc.stderr[-400:]


def test_every_reproducer_reports_the_defect_on_pinned_mlx():
    mlx = pytest.importorskip("mlx.core")
    if mlx.__version__ != PINNED:
        pytest.skip(f"reproducer verdicts are asserted for mlx {PINNED} only (installed {mlx.__version__})")
    probes = sorted(FINDINGS.glob("*.py"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(_run, probes))
    wrong = [(name, rc, out) for name, rc, out in results if rc != 1]
    assert not wrong, wrong
