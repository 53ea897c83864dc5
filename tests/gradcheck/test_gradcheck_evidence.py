"""`gradcheck --out DIR`: evidence that validate checks and replay runs again. Honest
evidence validates and replays; an edited verdict is refused by validate (a failing
check whose numbers pass, a report that says it passed) or by replay (a check whose
status was changed); replay refuses, with the reason, a target that does not import."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

pytest.importorskip("mlx.core")

from mlx_vjpcheck.core import jsonio  # noqa: E402
from mlx_vjpcheck.evidence import atomic, manifest, paths  # noqa: E402
from mlx_vjpcheck.evidence.load import load  # noqa: E402
from mlx_vjpcheck.validation import evidence  # noqa: E402

USER = '''
import mlx.core as mx


def inputs():
    return (mx.array([0.5, -1.25, 2.0]),)


def good(x):
    return mx.sin(x)


@mx.custom_function
def _bad(x):
    return mx.exp(x)


@_bad.vjp
def _bad_vjp(x, cot, out):
    return cot * out * 2


def bad(x):
    return _bad(x)
'''


def _cli(cwd, *args):
    return subprocess.run([sys.executable, "-m", "mlx_vjpcheck", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("user")
    (root / "user_gc.py").write_text(USER)
    for name, rc in (("good", 0), ("bad", 1)):
        p = _cli(root, "gradcheck", f"user_gc:{name}", "--transforms", "vjp,jvp,identity", "--shrink", "0",
                 "--out", name)
        assert p.returncode == rc, p.stdout + p.stderr
    return root


def _failures(d) -> list:
    groups, _ = evidence.validate_all(load(d))
    return [why for g in groups for why in g.failures]


def _forge(made, tmp_path, name, edit):
    d = tmp_path / name
    shutil.copytree(made / name, d)
    doc = jsonio.loads((d / paths.GRADCHECK).read_bytes())
    edit(doc)
    atomic.write_json(d / paths.GRADCHECK, doc)
    (d / manifest.NAME).unlink()
    atomic.write_text(d / manifest.NAME, manifest.render(d))
    return d


def test_honest_evidence_validates_and_replays(made):
    for name in ("good", "bad"):
        assert _failures(made / name) == []
        p = _cli(made, "replay", name)
        assert p.returncode == 0 and "trust: reproduced" in p.stdout, p.stdout + p.stderr


def test_a_failing_check_edited_to_pass_by_its_numbers_is_refused(made, tmp_path):
    def edit(doc):
        c = next(c for c in doc["report"]["checks"] if c["status"] == "fail" and c["got"] is not None)
        c["got"] = c["want"]
    assert any("passes by its own numbers" in w for w in _failures(_forge(made, tmp_path, "bad", edit)))


def test_a_report_that_says_it_passed_is_refused(made, tmp_path):
    d = _forge(made, tmp_path, "bad", lambda doc: doc["report"].__setitem__("passed", True))
    assert any("passed is True but" in w for w in _failures(d))


def test_an_environment_that_differs_is_refused(made, tmp_path):
    d = _forge(made, tmp_path, "good", lambda doc: doc["environment"].__setitem__("mlx", "0.1.0"))
    assert any("environment" in w for w in _failures(d))


def test_a_verdict_edited_consistently_validates_but_does_not_replay(made, tmp_path):
    """A failure turned into a 'not differentiable' note: nothing offline can tell; replay can."""
    def edit(doc):
        for c in doc["report"]["checks"]:
            if c["status"] == "fail":
                c.update(status="not differentiable", got=None, want=None, detail="not differentiable here")
        doc["report"]["passed"] = True
    d = _forge(made, tmp_path, "bad", edit)
    assert _failures(d) == []
    shutil.move(str(d), str(made / "forged"))
    p = _cli(made, "replay", "forged")
    assert p.returncode == 1 and "NOT reproduced" in p.stdout + p.stderr, p.stdout + p.stderr


def test_replay_refuses_a_target_that_does_not_import(made, tmp_path):
    d = _forge(made, tmp_path, "good", lambda doc: doc.__setitem__("target", "no_such_module_here:good"))
    p = _cli(made, "replay", str(d))
    assert p.returncode == 1 and "cannot import no_such_module_here" in p.stdout, p.stdout + p.stderr
    d2 = _forge(made, tmp_path / "x", "good", lambda doc: doc.__setitem__("import_root", str(tmp_path / "gone")))
    p = _cli(made, "replay", str(d2))
    assert p.returncode == 1 and "is not a directory here" in p.stdout, p.stdout + p.stderr


def test_replay_refuses_when_the_checked_module_changed(made, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(made, root)
    d = _forge(root, tmp_path, "good", lambda doc: doc.update(
        import_root=str(root), sources=[dict(s, file=str(root / "user_gc.py")) for s in doc["sources"]]))
    assert _cli(root, "replay", str(d)).returncode == 0
    (root / "user_gc.py").write_text(USER.replace("mx.sin(x)", "mx.cos(x)"))
    p = _cli(root, "replay", str(d))
    assert p.returncode == 1 and "not the file that was checked" in p.stdout, p.stdout + p.stderr
