"""Hostile bundles: each unsafe entry is refused with its own line and exit 1,
nothing is written outside the validator's memory, nothing from the zip runs."""
import stat
import struct
import warnings
import zipfile
from pathlib import Path

import pytest

import evidence_fixtures as fx
from mlx_vjpcheck.evidence import manifest
from mlx_vjpcheck.evidence import safezip


@pytest.fixture(scope="module")
def run_files(tmp_path_factory):
    root = fx.run_dir(tmp_path_factory.mktemp("hostile") / "run")
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def make_zip(path, files: dict, extra=()) -> Path:
    """files as regular entries, then `extra` (ZipInfo or name, bytes) entries as given."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # zipfile warns about the duplicate-name case
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in sorted(files.items()):
                zf.writestr(name, data)
            for info, data in extra:
                zf.writestr(info, data)
    return Path(path)


def declare_size(path: Path, name: str, size: int) -> None:
    """Rewrite the uncompressed size an entry declares, in both of its headers."""
    data = bytearray(path.read_bytes())
    raw = name.encode()
    for sig, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        start = 0
        while (i := data.find(sig, start)) >= 0:
            if data[i + name_at:i + name_at + len(raw)] == raw:
                data[i + size_at:i + size_at + 4] = struct.pack("<I", size)
            start = i + 4
    path.write_bytes(bytes(data))


def rejected(path, reason, tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    rc, out, err = fx.check(path)
    assert rc == 1, out + err
    lines = [line for line in out.splitlines() if line.startswith("  FAIL rejected: ")]
    assert any(reason in line for line in lines), out
    assert sorted(p.name for p in tmp_path.iterdir()) == before   # nothing extracted
    return lines


def test_clean_zip_validates(run_files, tmp_path):
    rc, out, err = fx.check(make_zip(tmp_path / "ok.zip", run_files))
    assert rc == 0, out + err


def test_zip_under_one_top_folder_validates(run_files, tmp_path):
    z = make_zip(tmp_path / "top.zip", {f"run/{n}": b for n, b in run_files.items()})
    assert fx.check(z)[0] == 0


def symlink_info(name):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


CASES = {
    "zip_slip": ([("../outside.txt", b"escaped\n")], "'..' component in path '../outside.txt'"),
    "nested_slip": ([("logs/../../outside.txt", b"x")], "'..' component"),
    "absolute": ([("/tmp/abs.txt", b"x")], "absolute path '/tmp/abs.txt'"),
    "drive": ([("C:/x.txt", b"x")], "absolute path 'C:/x.txt'"),
    "backslash": ([("..\\evil.txt", b"x")], "backslash in path"),
    "symlink": ([(symlink_info("link"), b"/etc/passwd")], "symlink entry 'link'"),
    "duplicate": ([("results.json", b"{}")], "duplicate entry 'results.json'"),
    "bomb": ([("bomb.bin", bytes(2 << 20))], "compression ratio"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_entry_rejected(run_files, tmp_path, case):
    extra, reason = CASES[case]
    z = make_zip(tmp_path / f"{case}.zip", run_files, extra)
    rejected(z, reason, tmp_path)
    assert not (tmp_path.parent / "outside.txt").exists()


def test_oversized_entry_rejected(run_files, tmp_path):
    z = make_zip(tmp_path / "big.zip", run_files, [("big.bin", b"small really")])
    declare_size(z, "big.bin", safezip.MAX_ENTRY + 1)
    rejected(z, f"entry 'big.bin' declares {safezip.MAX_ENTRY + 1} bytes", tmp_path)


def test_oversized_total_rejected(run_files, tmp_path):
    names = [f"part{i}.bin" for i in range(5)]
    z = make_zip(tmp_path / "total.zip", run_files, [(n, b"x" * 100) for n in names])
    for n in names:
        declare_size(z, n, 60 << 20)
    rejected(z, "archive declares", tmp_path)


def test_one_line_per_reason(run_files, tmp_path):
    extra = [("../a", b"x"), ("/b", b"x"), (symlink_info("c"), b"x")]
    lines = rejected(make_zip(tmp_path / "many.zip", run_files, extra), "symlink entry", tmp_path)
    assert len(lines) == 3


def test_manifest_listing_outside_path_in_zip(run_files, tmp_path):
    files = dict(run_files)
    files[manifest.NAME] += f"{'0' * 64}  ../../etc/passwd\n".encode()
    rc, out, err = fx.check(make_zip(tmp_path / "m.zip", files))
    assert rc == 1 and "manifest lists a path outside the bundle" in out, out


def test_size_lie_caught_when_reading(run_files, tmp_path):
    # Declares fewer bytes than it holds: the read is capped, so it cannot inflate past the claim.
    z = make_zip(tmp_path / "lie.zip", run_files, [("lie.bin", b"y" * 5000)])
    declare_size(z, "lie.bin", 10)
    rejected(z, "unreadable entry 'lie.bin'", tmp_path)


def test_reproducer_in_bundle_is_never_run(tmp_path):
    marker = tmp_path / "marker.txt"
    root = fx.fuzz_dir(tmp_path / "fuzz", marker=marker)
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    z = make_zip(tmp_path / "fuzz.zip", files)
    assert fx.check(z)[0] == 0
    assert fx.validate(z)[0] == 0
    assert not marker.exists()
