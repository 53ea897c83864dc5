"""`mlx-vjpcheck gate` is build_and_test.py's command line, from the installed tool."""
from __future__ import annotations

from mlx_vjpcheck.cli import main


def test_gate_takes_build_and_tests_options(capsys):
    assert main.main(["gate", "--help"]) == 0
    assert "--mlx-source DIR" in capsys.readouterr().out


def test_gate_refuses_a_bad_checkout_in_one_line(capsys, tmp_path):
    """Negative control: a folder that is no MLX checkout is bad input (exit 2, one line)."""
    assert main.main(["gate", "--mlx-source", str(tmp_path), "--mlx-build", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a checkout of MLX" in err[0]
