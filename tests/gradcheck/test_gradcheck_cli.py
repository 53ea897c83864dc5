"""`mlx-vjpcheck gradcheck MODULE:FUNCTION --inputs MODULE:FACTORY`: exit 0 pass, 1
fail (the message on stdout), 2 bad input (one line on stderr, no traceback)."""
from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("mlx.core")

from mlx_vjpcheck.core import jsonio  # noqa: E402

USER = '''
import mlx.core as mx


def inputs():
    return (mx.array([0.5, -1.25, 2.0]), {"w": mx.array([1.5, 0.25, -0.75])})


def good(x, tree):
    return mx.sin(x) * tree["w"]


@mx.custom_function
def _bad(x):
    return mx.exp(x)


@_bad.vjp
def _bad_vjp(x, cot, out):
    return cot * out * 2


def bad(x, tree):
    return _bad(x) + tree["w"]


def raises(x, tree):
    raise RuntimeError("boom")
'''


def _run(tmp_path, *args):
    (tmp_path / "user_fns.py").write_text(USER)
    return subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "gradcheck", *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


def test_pass_writes_strict_json(tmp_path):
    p = _run(tmp_path, "user_fns:good", "--inputs", "user_fns:inputs", "--transforms", "vjp,jvp",
             "--json", "r.json")
    assert p.returncode == 0, p.stdout + p.stderr
    data = jsonio.loads((tmp_path / "r.json").read_text())
    assert data["schema"] == "mlx-vjpcheck/gradcheck/1" and data["passed"] is True


def test_fail_names_the_input_and_prints_a_reproducer(tmp_path):
    p = _run(tmp_path, "user_fns:bad", "--transforms", "vjp", "--shrink", "3")   # default inputs: MODULE:inputs
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL  vjp [float32]" in p.stdout and "inputs[0][" in p.stdout
    assert "#!/usr/bin/env python3" in p.stdout and "from user_fns import bad as f" in p.stdout


@pytest.mark.parametrize("args, words", [
    (["user_fns"], "MODULE:NAME"), (["user_fns:nope"], "no attribute"), (["nomod_xyz:f"], "cannot import"),
    (["user_fns:good", "--inputs", "user_fns:good"], "raised"), (["user_fns:raises"], "raised on its inputs"),
    (["user_fns:good", "--transforms", "vjp,hvp"], "transforms"), (["user_fns:good", "--dtypes", "int8"], "dtypes"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, words):
    p = _run(tmp_path, *args)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in p.stderr
