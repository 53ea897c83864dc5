"""Two different defects of one op and one gradient are two findings: a short
campaign over a plugin op whose VJP is wrong only in bfloat16 and (differently)
only for a rank-0 operand reports both, each under its minimal counterexample's
feature, and nothing else."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("mlx.core")
HERE = Path(__file__).resolve().parent


def test_two_defects_of_one_op_are_two_findings(tmp_path):
    env = dict(os.environ, MLX_VJPCHECK_PLUGINS="two_defects_plugin",
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    out = tmp_path / "fz"
    proc = subprocess.run([sys.executable, "-m", "mlx_vjpcheck.cli", "fuzz", "--ops", "twodefects",
                           "--time", "25", "--seed", "0", "--db", "none", "--no-progress", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    sigs = {f["signature"] for f in json.loads((out / "findings.json").read_text())}
    head = "twodefects__grad-a__reference__wrong-value__cube"
    assert sigs == {f"{head}__bfloat16", f"{head}__rank0"}, sigs
