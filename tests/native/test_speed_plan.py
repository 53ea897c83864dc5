"""bench/speed.json classifies exactly the diffs of patch/series, names only workloads the
C++ suite registers, and bench/speed.py's ratio check rejects a slowdown past 1.05.

No build and no MLX: the plan, the diffs and native/src/workloads.cpp are read as text,
and the check is fed made-up timings."""
from __future__ import annotations

import re

import pytest
from conftest import ROOT, bench_script

PATCH = ROOT / "patch"
KINDS = {"kernel", "fast path", "common path", "defective corner"}


speed = bench_script("speed")
PLAN = speed.load_plan()


def _registered() -> list:
    """Workload names in the order of the registry's initializer in workloads.cpp."""
    text = (ROOT / "native" / "src" / "workloads.cpp").read_text()
    body = text[text.index("registry() {"):text.index("return all;")]
    return re.findall(r'^\s*\{"([a-z0-9_]+)",', body, re.MULTILINE)


def _touched(diff: str) -> set:
    return set(re.findall(r"^\+\+\+ b/(\S+)", (PATCH / diff).read_text(), re.MULTILINE))


def test_the_plan_classifies_exactly_the_series():
    files = [p["file"] for p in PLAN]
    assert len(files) == len(set(files))
    assert sorted(files) == sorted(speed.series_files(PATCH / "series"))


def test_every_entry_has_a_kind_a_reason_and_workloads_when_it_needs_them():
    for p in PLAN:
        kinds = set(p["touches"])
        assert kinds and kinds <= KINDS, p["file"]
        assert p["reason"].strip() and "\n" not in p["reason"], p["file"]
        # the changed lines run on common input: something must time them; only a diff
        # whose lines run on the defective input alone may go without
        assert bool(p["workloads"]) == (kinds != {"defective corner"}), p["file"]


def test_a_diff_under_mlx_backend_is_a_kernel_patch():
    for p in PLAN:
        kernel = any(f.startswith("mlx/backend/") for f in _touched(p["file"]))
        assert kernel == ("kernel" in p["touches"]), p["file"]


def test_workloads_are_the_registered_ones_and_each_serves_a_diff():
    registered = _registered()
    assert len(registered) == len(set(registered)) and len(registered) > 20
    used = {w for p in PLAN for w in p["workloads"]}
    assert used == set(registered)
    assert speed.workloads_of(PLAN, speed.series_files(PATCH / "series")) == \
        [w for w in dict.fromkeys(w for p in PLAN for w in p["workloads"])]


def _times(pristine: list, patched: list) -> dict:
    return {"w": {"pristine": {"cpu": pristine, "wall": pristine, "graph": {"Add": 1}},
                  "patched": {"cpu": patched, "wall": patched, "graph": {"Add": 1, "Sort": 2}}}}


def test_negative_control_a_slowdown_past_the_target_fails():
    rows = speed.summarize(_times([1.0, 1.0, 1.1, 0.9, 1.0], [1.07, 1.07, 1.2, 1.0, 1.07]))
    assert rows[0]["ratio"] == pytest.approx(1.07) and not rows[0]["ok"]
    assert not speed.passes(rows)
    assert rows[0]["graph"] == "+2 Sort"


def test_the_same_speed_and_the_target_itself_pass():
    assert speed.THRESHOLD == 1.05
    for patched in ([1.0] * 5, [1.05] * 5, [0.8] * 5):
        rows = speed.summarize(_times([1.0] * 5, patched))
        assert speed.passes(rows) and rows[0]["ok"], patched
    assert speed.graph_change({"Add": 1}, {"Add": 1}) == "same ops"
    assert speed.graph_change({"ArgPartition": 1}, {"ArgSort": 2}) == "-1 ArgPartition, +2 ArgSort"


def test_one_slow_workload_among_fast_ones_fails_the_run():
    times = {**_times([1.0] * 3, [0.9] * 3), "v": _times([1.0] * 3, [1.2] * 3)["w"]}
    rows = speed.summarize(times)
    assert [r["ok"] for r in rows] == [True, False] and not speed.passes(rows)


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    series = tmp_path / "series"
    series.write_text("99-unknown.diff\n")
    code = speed.main(["--mlx-source", str(tmp_path), "--mlx-build", str(tmp_path), "--patch", str(series)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "99-unknown.diff" in err
