"""The coverage table (cases/coverage.py, `mlx-vjpcheck coverage`): the shipped list
agrees with a count of `::vjp(` definitions in an MLX checkout (opt-in:
$MLX_SOURCE_ROOT), the parser reads definitions and nothing else, the table has one
row per primitive with the ops that name it, coverage reaches the target, a
primitive no op names is reported uncovered (negative control), op records name
only primitives MLX defines with a VJP, Markdown escapes what it did not write,
docs/coverage.md is what the command writes, and bad input is one line, exit 2,
nothing written."""
from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import coverage as C

SOURCE = os.environ.get("MLX_SOURCE_ROOT")


def _rows(records=None):
    counts = {name: 1 for name in (records or ops.registry())}
    return C.table(C.shipped(), records or ops.registry(), counts)


def _count_definitions(root: Path) -> list:
    """Definitions counted without the module's regular expression: lines that begin
    with the return type and contain `::vjp(`."""
    names = []
    for f in C.SOURCE_FILES:
        for line in (root / f).read_text(encoding="utf-8").splitlines():
            if line.startswith("std::vector<array> ") and "::vjp(" in line:
                names.append(line.split(" ", 1)[1].split("::vjp(")[0].strip())
    return names


@pytest.mark.skipif(not SOURCE, reason="set MLX_SOURCE_ROOT to an MLX checkout of the tested commit")
def test_shipped_list_agrees_with_the_checkout():
    root = Path(SOURCE)
    shipped = C.shipped()
    assert list(shipped.names) == _count_definitions(root)
    assert C.from_source(root) == shipped
    head = (root / ".git" / "HEAD")
    assert shipped.commit == C._commit(root) and head.exists()


def test_shipped_list_is_the_tested_commit():
    shipped = C.shipped()
    assert re.fullmatch(r"[0-9a-f]{40}", shipped.commit) and shipped.files == C.SOURCE_FILES
    assert len(shipped.names) == 105 and "Primitive" in shipped.names and "Abs" in shipped.names


def test_the_parser_reads_definitions_only(tmp_path):
    (tmp_path / "mlx").mkdir()
    (tmp_path / "mlx" / "primitives.cpp").write_text(
        "std::vector<array> Abs::vjp(\n    const std::vector<array>& p) {\n"
        "  return Custom::vjp(p);   // a call, indented\n}\n"
        "std::vector<array> Abs::jvp(\n"
        "auto [_, vjps] = mlx::core::vjp(f, p, c);\n"
        "std::vector<array>  Spaced_2::vjp(\n", encoding="utf-8")
    (tmp_path / "mlx" / "fast.cpp").write_text("std::vector<array> RMSNorm::vjp(\n", encoding="utf-8")
    (tmp_path / "mlx" / "version.h").write_text("#define MLX_VERSION_MAJOR 1\n#define MLX_VERSION_MINOR 2\n"
                                                "#define MLX_VERSION_PATCH 3\n", encoding="utf-8")
    got = C.from_source(tmp_path)
    assert got.primitives == (("Abs", "mlx/primitives.cpp"), ("Spaced_2", "mlx/primitives.cpp"),
                              ("RMSNorm", "mlx/fast.cpp"))
    assert (got.version, got.commit) == ("1.2.3", "unknown")   # not a git checkout
    with pytest.raises(C.CoverageError, match="not an MLX checkout"):
        C.from_source(tmp_path / "mlx")


def test_table_has_one_row_per_primitive_in_list_order():
    rows = _rows()
    assert [r.primitive for r in rows] == list(C.shipped().names)
    by = {r.primitive: r for r in rows}
    assert by["Sin"].ops == ("sin",) and "add" in by["Add"].ops and by["Primitive"].reason.startswith("the base")
    assert all(r.covered == (r.reason == "") for r in rows)


def test_coverage_reaches_the_target():
    covered, total, pct = C.totals(_rows())
    assert total == 105 and pct >= C.TARGET_PERCENT, (covered, total, pct)


def test_a_primitive_no_op_names_is_reported_uncovered():
    """Negative control: Sin removed from every op record."""
    records = {n: dataclasses.replace(i, primitives=tuple(p for p in i.primitives if p != "Sin"))
               for n, i in ops.registry().items()}
    rows, before = _rows(records), _rows()
    sin = next(r for r in rows if r.primitive == "Sin")
    assert not sin.covered and sin.ops == () and sin.scenarios == 0 and sin.reason == "no op names it yet"
    assert C.totals(rows)[0] == C.totals(before)[0] - 1


def test_op_records_with_a_vjp_name_only_primitives_mlx_defines_with_one():
    unknown = C.unknown_names(C.shipped(), ops.registry())
    assert {op for op in unknown if ops.get(op).has_vjp} == set(), unknown


def test_markdown_escapes_text_it_did_not_write():
    plist = C.PrimitiveList("<b>x</b>", "1|2*`", C.SOURCE_FILES, (("Abs", "mlx/primitives.cpp"),))
    text = C.markdown(plist, C.table(plist, {}, {}), {"my_op": ["A_B"]})
    assert "<b>" not in text and "1\\|2\\*\\`" in text and "my\\_op" in text
    with pytest.raises(C.CoverageError):
        C.PrimitiveList("c", "v", C.SOURCE_FILES, (("A|B", "mlx/primitives.cpp"),))
    with pytest.raises(C.CoverageError):
        C.PrimitiveList("c", "v", C.SOURCE_FILES, (("Abs", "mlx/other.cpp"),))


# --- the command -------------------------------------------------------------------------------------

def test_docs_coverage_is_what_the_command_writes():
    proc = run_cli("coverage", "--markdown")
    assert proc.returncode == 0, proc.stderr
    assert (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8") == proc.stdout, \
        "docs/coverage.md is stale: mlx-vjpcheck coverage --markdown --out docs/coverage.md --replace"


def test_save_list_round_trips(tmp_path):
    """The list the command saves from a checkout reads back as the same list."""
    root = tmp_path / "src"
    (root / "mlx").mkdir(parents=True)
    for f in C.SOURCE_FILES:
        (root / f).write_text("std::vector<array> Abs::vjp(\n" if f.endswith("primitives.cpp") else "",
                              encoding="utf-8")
    out = tmp_path / "list.json"
    proc = run_cli("coverage", "--mlx-source", root, "--save-list", out, "--out", tmp_path / "table.txt")
    assert proc.returncode == 0, proc.stderr   # its one primitive (Abs) is covered
    assert C.load(out) == C.from_source(root)
    assert json.loads(out.read_text())["schema"] == C.SCHEMA
    assert (tmp_path / "table.txt").read_text().startswith(C.TEXT_MARKER)


@pytest.mark.parametrize("args, message", [
    (("--mlx-source", "/nonexistent/mlx"), "is not an MLX checkout"),
    (("--save-list", "x.json"), "--save-list needs --mlx-source"),
    (("--out", "README.md"), "not overwriting it"),
    (("--out", "docs"), "is a directory"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("coverage", *args, cwd=ROOT if "README" in str(args) or "docs" in args else tmp_path)
    assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_existing_table_is_replaced_only_with_replace(tmp_path):
    out = tmp_path / "coverage.md"
    assert run_cli("coverage", "--markdown", "--out", out).returncode == 0
    proc = run_cli("coverage", "--markdown", "--out", out)
    assert proc.returncode == 2 and "--replace" in proc.stderr
    assert run_cli("coverage", "--markdown", "--out", out, "--replace").returncode == 0
