"""--patch takes one diff or a series file (quilt's `series`: diffs applied in order).

No MLX: a toy checkout of two files."""
from __future__ import annotations

import hashlib
import subprocess

import pytest
from mlx_vjpcheck.gate import inputs as GI
from mlx_vjpcheck.gate import patch as P

A = "int a() {\n  return 1;\n}\n\nint b() {\n  return 2;\n}\n"
UNITS = {"src/a.cpp": object(), "src/b.cpp": object()}


def _udiff(rel, old: str, new: str) -> str:
    import difflib
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        f"a/{rel}", f"b/{rel}", n=1))


@pytest.fixture
def checkout(tmp_path):
    src = tmp_path / "src-root"
    (src / "src").mkdir(parents=True)
    (src / "src" / "a.cpp").write_text(A)
    (src / "src" / "b.cpp").write_text(A)
    return src


def _series(tmp_path, steps, names=None):
    """Diffs of src/a.cpp, each on top of the previous one's result, and the series file."""
    d = tmp_path / "patches"
    d.mkdir(exist_ok=True)
    text, names = A, names or [f"{i + 1:02d}.diff" for i in range(len(steps))]
    for name, (old, new) in zip(names, steps):
        after = text.replace(old, new)
        assert after != text
        (d / name).write_text(_udiff("src/a.cpp", text, after))
        text = after
    (d / "series").write_text("# applied in order\n" + "".join(f"{n}\n" for n in names))
    return d / "series", text


def test_a_series_applies_in_order_and_touches_a_file_twice(tmp_path, checkout):
    series, final = _series(tmp_path, [("return 1;", "return 10;"), ("return 2;", "return 20;"),
                                       ("return 10;", "return 100;")])
    text, touched, groups = GI.check_patch(series, checkout, UNITS)
    assert touched == {"src/a.cpp": (A, final)} and groups == {"src/a.cpp": "mlx"}
    assert "return 100;" in final and "return 20;" in final
    # the recorded text is the combination: it applies in one pass to the same result,
    # and names its diffs in order with their digests
    combined = tmp_path / "combined.diff"
    combined.write_text(text)
    assert not P.is_series(text)
    assert GI.check_patch(combined, checkout, UNITS)[1] == touched
    parts = P.split_combined(text)
    assert [n for n, _ in parts] == ["01.diff", "02.diff", "03.diff"]
    assert parts[0][1] == (series.parent / "01.diff").read_text()
    assert hashlib.sha256(parts[2][1].encode()).hexdigest() in text


def test_a_series_gives_what_git_apply_gives(tmp_path, checkout):
    series, final = _series(tmp_path, [("return 1;", "return 10;"), ("return 10;", "return 11;")])
    assert "return 11;" in final
    repo = tmp_path / "git"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.cpp").write_text(A)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("01.diff", "02.diff"):
        subprocess.run(["git", "apply", str(series.parent / name)], cwd=repo, check=True)
    assert (repo / "src" / "a.cpp").read_text() == GI.check_patch(series, checkout, UNITS)[1]["src/a.cpp"][1]


def test_a_missing_diff_of_a_series_is_one_line(tmp_path, checkout):
    series, _ = _series(tmp_path, [("return 1;", "return 10;")])
    series.write_text("01.diff\n02-gone.diff\n")
    with pytest.raises(GI.InputError) as e:
        GI.check_patch(series, checkout, UNITS)
    msg = str(e.value)
    assert "02-gone.diff" in msg and "does not exist" in msg and "\n" not in msg


def test_a_hunk_that_does_not_apply_names_its_diff(tmp_path, checkout):
    # negative control: the second diff was made against the pristine text, not the first's result
    series, _ = _series(tmp_path, [("return 1;", "return 10;")])
    (series.parent / "02.diff").write_text(_udiff("src/a.cpp", A, A.replace("return 1;", "return 5;")))
    series.write_text("01.diff\n02.diff\n")
    with pytest.raises(GI.InputError, match=r"^02\.diff: patch does not apply: src/a\.cpp hunk 1"):
        GI.check_patch(series, checkout, UNITS)


def test_unsafe_names_and_plain_diffs(tmp_path, checkout):
    series = tmp_path / "series"
    series.write_text("../outside.diff\n")
    with pytest.raises(GI.InputError, match="unsafe"):
        GI.check_patch(series, checkout, UNITS)
    one = tmp_path / "one.diff"
    one.write_text(_udiff("src/b.cpp", A, A.replace("return 2;", "return 3;")))
    text, touched, _ = GI.check_patch(one, checkout, UNITS)
    assert text == one.read_text() and list(touched) == ["src/b.cpp"]
    assert P.split_combined(text) == [("patch.diff", text)]
    assert not P.is_series(one.read_text()) and not P.is_series("") and P.is_series("x.diff -p1\n")


def test_the_default_is_the_series_when_there_is_one():
    from mlx_vjpcheck.core import resources
    series = resources.patch_dir() / "series"
    assert GI.DEFAULT_PATCH == (series if series.is_file() else resources.patch_dir() / "gather_vjp_sorted.diff")
