"""Replay of sweep evidence: an honest sweep reproduces; a forgery that validates
(every count re-derived to agree) is caught by running the case again, a failing
record always, a passing one when sampled; the choice follows the records."""
from __future__ import annotations

import random
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from mlx_vjpcheck.core import jsonio
from mlx_vjpcheck.evidence import atomic, manifest, paths
from mlx_vjpcheck.sweep import derive
from mlx_vjpcheck.sweep import replay as SR


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    pytest.importorskip("mlx.core")
    out = tmp_path_factory.mktemp("sweep") / "sw"
    # expand_dims: a registered class that fails the same way every time (vmap of two new axes:
    # a wrong shape); not sign, whose shapeless class corrupts the heap, so a pass of one run
    # may be a crash of the next (honest evidence a replay rightly calls not reproduced)
    p = subprocess.run([sys.executable, "-m", "mlx_vjpcheck", "sweep", "--functions", "mx.expand_dims,mx.sin",
                        "--jobs", "1", "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    return out


def _forge(honest, tmp_path, edit):
    """A copy with one record edited and everything the validator re-derives made to agree."""
    d = tmp_path / "sw"
    shutil.copytree(honest, d)
    doc = jsonio.loads((d / paths.SWEEP).read_bytes())
    edit(doc["records"])
    doc["findings"] = derive.findings_of(doc["records"])
    doc["summary"]["by_status"] = derive.by_status(doc["records"])
    atomic.write_json(d / paths.SWEEP, doc)
    (d / manifest.NAME).unlink()
    atomic.write_text(d / manifest.NAME, manifest.render(d))
    return d


def _cli(*argv) -> int:
    from mlx_vjpcheck.cli.main import main
    return main(list(argv))


def test_an_honest_sweep_replays(honest, capsys):
    assert _cli("replay", str(honest), "--jobs", "1") == 0
    assert "trust: reproduced" in capsys.readouterr().out


def _hide_failure(records):
    r = next(r for r in records if r["status"] == "fail")
    r.update(status="pass", checks=[], message="")


def _invent_failure(records):
    r = next(r for r in records if r["status"] == "pass" and r["function"] == "mx.sin")
    r.update(status="fail", checks=[{"transform": "vjp", "dtype": "float32", "input": "x", "output": "out",
                                     "status": "fail", "index": [0], "got": 2.0, "want": 1.0, "allowed": 0.1,
                                     "bound": 0.0, "detail": ""}])


@pytest.mark.parametrize("edit, sample, says", [
    (_hide_failure, "1000", "status pass -> fail"),   # a clean pass now: found when sampled (all are, here)
    (_invent_failure, "0", "status fail -> pass"),    # a failing record runs again whatever the sample
])
def test_a_forgery_that_validates_does_not_replay(honest, tmp_path, capsys, edit, sample, says):
    d = _forge(honest, tmp_path, edit)
    assert _cli("validate", str(d)) == 0
    capsys.readouterr()
    assert _cli("replay", str(d), "--jobs", "1", "--sample", sample) == 1
    out = capsys.readouterr()
    assert says in out.err and "trust: NOT reproduced" in out.out


def test_what_runs_again_follows_from_the_records():
    records = [{"status": "pass", "checks": []}, {"status": "pass", "checks": [{"status": "unsupported"}]},
               {"status": "fail"}, {"status": "crash"}, {"status": "not applicable"}, {"status": "pass"}]
    chosen, sampled, clean = SR.choose(records, 1, random.Random(0))
    assert {1, 2, 3, 4} <= set(chosen) and (clean, sampled) == (2, 1) and len(chosen) == 5
    assert SR.choose(records, 0)[0] == [1, 2, 3, 4]


def test_a_crash_compares_how_and_its_alone_status():
    crash = {"function": "mx.flip", "corner": "generic", "status": "crash", "how": "signal SIGSEGV"}
    assert SR.problems(dict(crash, alone="crash (signal SIGSEGV)"), dict(crash)) == []
    assert SR.problems(dict(crash, alone="crash (signal SIGSEGV)"), dict(crash, how="signal SIGABRT"))
    assert SR.problems(dict(crash, alone="pass"), {"status": "pass"}) == []
    assert SR.problems(dict(crash, alone="pass"), {"status": "fail", "checks": []})
