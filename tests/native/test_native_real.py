"""Opt-in: the real flow on an MLX checkout and its static CPU build.

Set MLX_SOURCE_ROOT (a checkout of ml-explore/mlx) and MLX_CPU_BUILD (its
CMake build with compile_commands.json and libmlx.a; see native/BUILD.md).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.evidence import manifest
from mlx_vjpcheck.cli import build_and_test

SOURCE, BUILD = os.environ.get("MLX_SOURCE_ROOT"), os.environ.get("MLX_CPU_BUILD")

pytestmark = pytest.mark.skipif(
    not (SOURCE and BUILD),
    reason="set MLX_SOURCE_ROOT and MLX_CPU_BUILD to run the native flow on a real MLX checkout "
           "(see native/BUILD.md)")


def test_pristine_reproduces_and_patched_passes(tmp_path, capsys):
    out = tmp_path / "native"
    code = build_and_test.main(["--mlx-source", SOURCE, "--mlx-build", BUILD, "--out", str(out),
                                 "--opt", "O0"])
    assert code == 0, capsys.readouterr()
    comp = json.loads((out / "comparison.json").read_text())
    assert comp["units"] == ["mlx/primitives.cpp", "mlx/ops.cpp", "mlx/backend/cpu/masked_mm.cpp"]
    rows = {r["scenario"]: r for r in comp["rows"]}
    ran = [s for s in catalog.catalog() if s.name in rows]
    assert ran and all(rows[s.name]["patched"] == "pass" for s in ran)
    assert all(rows[s.name]["pristine"] in ("fail", "error") for s in ran if s.expects_defect)
    assert all(rows[s.name]["pristine"] == "pass" for s in ran if not s.sorted_indices)
    corpus = [r for r in comp["rows"] if r["source"] == "regression"]
    assert corpus and all(r["pristine"] != "pass" and r["patched"] == "pass" for r in corpus if r["in_scope"])
    for c in json.loads((out / "commands.json").read_text()):
        assert c["exit_code"] == 0 and (out / c["stderr"]).is_file()
    env = json.loads((out / "environment.json").read_text())
    assert env["mlx_checkout_commit"] and len(env["mlx_checkout_commit"]) == 40
    listed = {p for _, p in manifest.parse((out / manifest.NAME).read_text())}
    assert listed == set(manifest.files(out))
    assert "bool sorted = right_sorted_ && no_broadcast;" in Path(out / "patch.diff").read_text()
