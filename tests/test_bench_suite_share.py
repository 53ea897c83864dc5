"""bench/suite.py's share inside MLX: the classifier that turns perf samples into shares,
fed synthetic stacks (no perf, no timing), and its one-line refusal of bad arguments."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, bench_script


suite = bench_script("suite")
MLX = {"/site/mlx/lib/libmlx.so", "/site/mlx/core.cpython-311-x86_64-linux-gnu.so", "/site/mlx_cpu.libs/libblas.so"}
NUMPY = {"/site/numpy/core/_multiarray_umath.so", "/site/numpy.libs/libopenblas.so"}
PY = {"/py/lib/libpython3.11.so", "/py/lib/python3.11/lib-dynload/_json.so"}
LIBC, KERNEL, STDCXX = "/lib/libc.so.6", "[kernel.kallsyms]", "/lib/libstdc++.so.6"
EVAL = (suite.EVAL_LOOP, "/py/lib/libpython3.11.so")
ROOT_MAIN = ("__libc_start_call_main", LIBC)


def cls(*frames):
    """Leaf first, as perf script prints them."""
    return suite.classify(list(frames), MLX, NUMPY, PY)


def test_an_mlx_call_from_python_is_mlx():
    assert cls(("mlx::core::eval_impl", "/site/mlx/lib/libmlx.so"),
               ("0x1", "/site/mlx/core.cpython-311-x86_64-linux-gnu.so"),
               ("PyObject_Vectorcall", "/py/lib/libpython3.11.so"), EVAL, ROOT_MAIN) == "mlx"


def test_libc_and_kernel_under_mlx_are_mlx():
    assert cls(("clear_page_erms", KERNEL), ("memcpy", LIBC), ("mlx::core::copy", "/site/mlx/lib/libmlx.so"),
               EVAL, ROOT_MAIN) == "mlx"


def test_negative_control_numpy_and_libc_only_is_not_mlx():
    """Only numpy's and libc's native frames under the Python frame: numpy, never MLX, even
    with MLX frames further up the stack (above the innermost Python frame)."""
    frames = [("memmove", LIBC), ("PyArray_NewCopy", "/site/numpy/core/_multiarray_umath.so"), EVAL,
              ("0x1", "/site/mlx/core.cpython-311-x86_64-linux-gnu.so"), EVAL, ROOT_MAIN]
    assert cls(*frames) == "numpy"
    assert cls(("memmove", LIBC), ("PyArray_NewCopy", "/site/numpy/core/_multiarray_umath.so"), EVAL) == "numpy"


def test_negative_control_libc_only_under_python_is_python():
    assert cls(("malloc", LIBC), ("PyObject_Malloc", "/py/lib/libpython3.11.so"), EVAL, ROOT_MAIN) == "python"
    assert cls(("malloc", LIBC), EVAL) == "python"


def test_mlx_under_numpy_is_mlx():
    """np.asarray(mx.array): numpy calls into MLX's binding; MLX's frame decides."""
    assert cls(("memcpy", LIBC), ("mlx::core::array::data", "/site/mlx/lib/libmlx.so"),
               ("0x2", "/site/mlx/core.cpython-311-x86_64-linux-gnu.so"),
               ("PyArray_FromAny", "/site/numpy/core/_multiarray_umath.so"), EVAL, ROOT_MAIN) == "mlx"


def test_python_called_back_by_mlx_is_python():
    """The function given to mx.vjp runs Python code under MLX's frames: Python's time."""
    assert cls(("_PyObject_Malloc", "/py/lib/libpython3.11.so"), EVAL,
               ("0x3", "/site/mlx/core.cpython-311-x86_64-linux-gnu.so"), ("mlx::core::vjp", "/site/mlx/lib/libmlx.so"),
               ("0x4", "/site/mlx/core.cpython-311-x86_64-linux-gnu.so"), EVAL, ROOT_MAIN) == "python"


def test_threads_without_python():
    """MLX's CPU stream thread is MLX's; OpenBLAS's pool is numpy's; a bare libc thread is
    unattributed; the interpreter's frames alone are Python."""
    assert cls(("mlx::core::unary_op", "/site/mlx/lib/libmlx.so"), ("execute_native_thread_routine", STDCXX),
               ("start_thread", LIBC), ("clone3", LIBC)) == "mlx"
    assert cls(("blas_thread_server", "/site/numpy.libs/libopenblas.so"), ("start_thread", LIBC)) == "numpy"
    assert cls(("futex_wait", KERNEL), ("pthread_cond_signal", LIBC)) == "other"
    assert cls(("unicodekeys_lookup_unicode", "/py/lib/libpython3.11.so")) == "python"
    assert cls(("scan_once_unicode", "/py/lib/python3.11/lib-dynload/_json.so")) == "python"
    assert cls() == "other"


def test_the_bundled_blas_counts_as_mlx():
    assert cls(("sgemm_", "/site/mlx_cpu.libs/libblas.so"), ("start_thread", LIBC)) == "mlx"


def test_unwound():
    assert suite.unwound([("malloc", LIBC), EVAL])
    assert suite.unwound([("unary", "/site/mlx/lib/libmlx.so"), ("clone3", LIBC)])
    assert not suite.unwound([("malloc", LIBC)])
    assert not suite.unwound([])


def test_tally_and_share():
    samples = [[("x", "/site/mlx/lib/libmlx.so"), EVAL]] * 25 + [[("malloc", LIBC), EVAL]] * 70 + [[("m", LIBC)]] * 5
    counts = suite.tally(samples, MLX, NUMPY, PY)
    assert counts == {"mlx": 25, "numpy": 0, "python": 70, "other": 5}
    p, se = suite.share(counts["mlx"], len(samples))
    assert p == 0.25 and se == pytest.approx((0.25 * 0.75 / 100) ** 0.5)
    assert suite.share(0, 10) == (0.0, 0.0)
    with pytest.raises(ValueError):
        suite.share(0, 0)


def test_parse_perf_script():
    text = ("python3  1641/1641  \n"
            "\t          1af854 _PyObject_Malloc (/py/lib/libpython3.11.so)\n"
            "\t           fb7f7 _PyEval_EvalFrameDefault (/py/lib/libpython3.11.so)\n"
            "\n"
            "python3  1927/1930  \n"
            "\tffffffff8225fc27 exc_page_fault ([kernel.kallsyms])\n"
            "\t            1234 mlx::core::(anonymous namespace)::f(int) (/site/mlx/lib/libmlx.so)\n"
            "\t               0 [unknown] ([unknown])\n"
            "\n")
    samples = suite.parse_perf_script(text)
    assert samples == [[("_PyObject_Malloc", "/py/lib/libpython3.11.so"), EVAL],
                       [("exc_page_fault", KERNEL),
                        ("mlx::core::(anonymous namespace)::f(int)", "/site/mlx/lib/libmlx.so"),
                        ("[unknown]", "[unknown]")]]
    assert [suite.classify(s, MLX, NUMPY, PY) for s in samples] == ["python", "mlx"]


def test_the_installed_mlx_objects_are_found():
    """libmlx.so and mlx/core*.so come from the installed wheels' file lists; numpy's are apart."""
    mlx, numpy = suite.mlx_objects(), suite.numpy_objects()
    names = {p.rsplit("/", 1)[-1] for p in mlx}
    assert "libmlx.so" in names and any(n.startswith("core.") and ".so" in n for n in names)
    assert numpy and not (mlx & numpy) and not (mlx & suite.python_objects())


@pytest.mark.parametrize("argv", [["--repeat", "0"], ["--jobs", "-1"], ["--sample-rate", "0"], ["--repeat", "x"],
                                  ["--bogus"]])
def test_bad_arguments_one_line_exit_2(argv):
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "suite.py"), *argv], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("bench/suite.py: ")


def test_no_perf_means_not_measured(monkeypatch):
    """Without perf there is no figure, only the reason: never a made-up share."""
    monkeypatch.setattr(suite.shutil, "which", lambda name: None)
    assert suite.sampled_run(2, 250) == (None, None, "perf not found")
