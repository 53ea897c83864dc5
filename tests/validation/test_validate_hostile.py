"""Hostile bundles and directories: each unsafe entry is refused with its own line
(naming its reason) and exit 1, nothing is written outside the validator's memory,
nothing from the zip runs, and a directory is refused from its metadata before its
files are read."""
import os
import stat
import struct
import warnings
import zipfile
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
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
    assert all(line.rstrip()[-1] not in ":(" for line in lines), out   # every reason is stated
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
    for rc, out, _ in (fx.check(z), fx.validate(z)):
        # the script is not the reproducer this package writes for the record: refused, unrun
        assert rc == 1 and "is not the reproducer this package writes for the record" in out, out
    assert not marker.exists()


# --- names as the archive spells them (issue 11, item 6) ----------------------------------

def respell(path: Path, placeholder: str, raw: bytes, where=("local", "central")) -> None:
    """Give an entry raw name bytes zipfile cannot write (NUL, another local name):
    the placeholder is replaced, byte for byte, in the chosen headers."""
    data, old = bytearray(path.read_bytes()), placeholder.encode()
    assert len(old) == len(raw)
    sigs = {"local": (b"PK\x03\x04", 30), "central": (b"PK\x01\x02", 46)}
    for sig, name_at in (sigs[w] for w in where):
        i = data.find(sig)
        while i >= 0:
            if data[i + name_at:i + name_at + len(old)] == old:
                data[i + name_at:i + name_at + len(old)] = raw
            i = data.find(sig, i + 4)
    path.write_bytes(bytes(data))


def test_nul_in_raw_name_rejected(run_files, tmp_path):
    # zipfile reads b"results.json\0../../evil" as "results.json": the raw bytes decide
    raw = b"results.json\0../../evil"
    z = make_zip(tmp_path / "nul.zip", run_files, [("results.jsonX../../evil", b"{}")])
    respell(z, "results.jsonX../../evil", raw)
    assert "results.json" in zipfile.ZipFile(z).namelist()   # what zipfile alone would accept
    lines = rejected(z, "NUL byte in entry name b'results.json\\x00../../evil' (zipfile reads it as "
                        "'results.json')", tmp_path)
    assert any("duplicate entry 'results.json'" in line for line in lines)


def test_local_header_naming_another_file_rejected(run_files, tmp_path):
    z = make_zip(tmp_path / "local.zip", run_files, [("innocent.json", b"{}")])
    respell(z, "innocent.json", b"../../ev.json", where=("local",))
    rejected(z, "entry 'innocent.json' is named b'../../ev.json' in its local header", tmp_path)


CONTROL = {
    "newline": ("logs/a\nb.txt", "control character '\\n' in path"),
    "escape": ("x\x1b[2J.txt", "control character '\\x1b' in path"),
    "delete": ("x\x7f.txt", "control character '\\x7f' in path"),
    "c1": ("x\x9b31m.txt", "control character '\\x9b' in path"),
    "bidi": ("report\u202egpj.json", "control character '\\u202e' in path"),
}


@pytest.mark.parametrize("case", sorted(CONTROL))
def test_control_character_in_name_rejected(run_files, tmp_path, case):
    name, reason = CONTROL[case]
    rejected(make_zip(tmp_path / f"{case}.zip", run_files, [(name, b"x")]), reason, tmp_path)


def test_truncated_compressed_data_names_its_reason(run_files, tmp_path):
    # A deflate stream whose stored block claims more bytes than the archive holds:
    # zipfile raises EOFError with no message, which used to print as an empty reason.
    stored = zipfile.ZipInfo("zz.bin")   # stored as written: its bytes become the deflate stream below
    z = make_zip(tmp_path / "eof.zip", run_files, [(stored, b"\x00\xff\xff\x00\x00" + b"x" * 10)])
    data = bytearray(z.read_bytes())
    for sig, method_at, csize_at, usize_at, name_at in ((b"PK\x03\x04", 8, 18, 22, 30),
                                                        (b"PK\x01\x02", 10, 20, 24, 46)):
        i = data.find(sig)
        while i >= 0:
            if data[i + name_at:i + name_at + 6] == b"zz.bin":
                data[i + method_at:i + method_at + 2] = struct.pack("<H", zipfile.ZIP_DEFLATED)
                data[i + csize_at:i + csize_at + 4] = struct.pack("<I", 1 << 20)
                data[i + usize_at:i + usize_at + 4] = struct.pack("<I", 1 << 20)
            i = data.find(sig, i + 4)
    z.write_bytes(bytes(data))
    rejected(z, "entry 'zz.bin': its data runs past the end of the entries, into the directory", tmp_path)


def test_read_failures_always_name_a_reason():
    for e in (EOFError(), __import__("zlib").error(), zipfile.BadZipFile(), ValueError(), OSError(),
              NotImplementedError(), KeyError()):
        assert safezip.reason(e).strip(), type(e)


# --- directories: the zip limits, from metadata; links refused ----------------------------

@pytest.fixture
def run_dir(tmp_path):
    return fx.run_dir(tmp_path / "run")


def dir_rejected(path, reason):
    rc, out, err = fx.check(path)
    assert rc == 1, out + err
    lines = [line for line in out.splitlines() if line.startswith("  FAIL rejected: ")]
    assert any(reason in line for line in lines), out
    assert all(line.rstrip()[-1] not in ":(" for line in lines), out
    return lines


def test_clean_directory_validates(run_dir):
    assert fx.check(run_dir)[0] == 0


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


PEAK_SCRIPT = """
import resource, sys
from mlx_vjpcheck.cli import validate
rc = validate.script([sys.argv[1]])
print("PEAK_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(rc)
"""


def peak_kb(path) -> tuple:
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, str(path)], capture_output=True, text=True,
                       timeout=300)
    line = [x for x in p.stdout.splitlines() if x.startswith("PEAK_KB")][-1]
    return p.returncode, p.stdout, int(line.split()[1])


def test_sparse_files_refused_by_their_sizes(run_dir, tmp_path):
    # 6 x 60 MiB = 360 MiB > MAX_TOTAL, each under MAX_ENTRY: refused before any is read.
    for i in range(6):
        sparse(run_dir / f"blob{i}.bin", 60 << 20)
    rc_clean, _, clean_kb = peak_kb(fx.run_dir(tmp_path / "clean"))
    rc, out, kb = peak_kb(run_dir)
    assert rc_clean == 0 and rc == 1, out
    assert f"directory holds {6 * (60 << 20) + sum(p.stat().st_size for p in (tmp_path / 'clean').iterdir())}" \
           f" bytes in all (limit {safezip.MAX_TOTAL})" in out, out
    # the contents were never read: peak memory is the clean run's, not 360 MiB more
    print(f"peak memory: clean {clean_kb} KiB, 6 x 60 MiB sparse {kb} KiB")
    assert kb < clean_kb + (32 << 10), (clean_kb, kb)   # (the validator's own footprint: bench/validate.py)


def test_oversized_file_in_directory_refused(run_dir):
    sparse(run_dir / "big.bin", safezip.MAX_ENTRY + 1)
    dir_rejected(run_dir, f"file 'big.bin' is {safezip.MAX_ENTRY + 1} bytes (limit {safezip.MAX_ENTRY})")


def test_too_many_entries_in_directory_refused(run_dir, monkeypatch):
    monkeypatch.setattr(safezip, "MAX_ENTRIES", 3)
    for i in range(3):
        (run_dir / f"n{i}.txt").write_text("x")
    dir_rejected(run_dir, "more than 3 entries (limit 3)")


def test_symlinked_directory_root_refused(run_dir, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(run_dir, target_is_directory=True)
    dir_rejected(link, f"{str(link)!r} is a symlink (to {str(run_dir)!r})")
    dir_rejected(str(link) + "/", "is a symlink")   # a trailing slash does not look through it


def test_symlinked_zip_root_refused(run_files, tmp_path):
    z = make_zip(tmp_path / "ok.zip", run_files)
    link = tmp_path / "link.zip"
    link.symlink_to(z)
    dir_rejected(link, "is a symlink (to")


def test_hard_linked_file_refused(run_dir, tmp_path):
    # results.json shares its inode with a file outside the evidence
    os.link(run_dir / "results.json", tmp_path / "outside.json")
    dir_rejected(run_dir, "file 'results.json' has 2 hard links")


def test_symlink_inside_directory_names_its_target(run_dir):
    (run_dir / "logs").mkdir()
    (run_dir / "logs" / "passwd").symlink_to("/etc/passwd")
    dir_rejected(run_dir, "symlink 'logs/passwd' (to '/etc/passwd')")


def test_special_file_in_directory_refused(run_dir):
    os.mkfifo(run_dir / "pipe")
    dir_rejected(run_dir, "special file 'pipe'")


def test_control_character_in_directory_name_refused(run_dir):
    (run_dir / "a\x1b[2Jb.txt").write_text("x")
    dir_rejected(run_dir, "control character '\\x1b' in name 'a\\x1b[2Jb.txt'")


@pytest.mark.parametrize("maker", ["run_dir", "fuzz_dir", "native_dir"])
def test_clean_fixtures_still_validate(tmp_path, maker):
    root = getattr(fx, maker)(tmp_path / maker)
    rc, out, err = fx.check(root)
    assert rc == 0, out + err
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    rc, out, err = fx.check(make_zip(tmp_path / f"{maker}.zip", files))
    assert rc == 0, out + err


def test_undecodable_name_in_directory_refused(run_dir):
    with open(os.fsencode(run_dir) + b"/bad\xffname.txt", "wb") as fh:
        fh.write(b"x")
    lines = dir_rejected(run_dir, "bytes that are not UTF-8 in name 'bad\\udcffname.txt'")
    assert all(line.isascii() for line in lines)


# --- issue 31, item 6: depth, nested archives, parse bombs within the size limits ---------------

def test_an_entry_deeper_than_the_limit_is_refused_one_within_it_is_not(run_files, tmp_path):
    deep = "/".join(["d"] * (safezip.MAX_DEPTH + 1)) + "/x.txt"
    rejected(make_zip(tmp_path / "deep.zip", run_files, [(deep, b"x")]), "folders deep (limit", tmp_path)
    assert safezip.unsafe_path("/".join(["d"] * 3000) + "/x") is not None   # a listed path 3,000 deep
    assert safezip.unsafe_path("/".join(["d"] * safezip.MAX_DEPTH) + "/x") is None


@pytest.mark.parametrize("name,data", [("inner.zip", b"not even a zip"), ("logs/run.out", b"PK\x03\x04rest"),
                                       ("logs/x.log", b"\x1f\x8b\x08\x00"), ("notes.tar.gz", b"")])
def test_a_nested_archive_is_refused(run_files, tmp_path, name, data):
    rejected(make_zip(tmp_path / "nested.zip", {**run_files, name: data}), "nested archive", tmp_path)
    d = tmp_path / "dir"
    (d / name).parent.mkdir(parents=True, exist_ok=True)
    for n, b in run_files.items():
        (d / n).write_bytes(b)
    (d / name).write_bytes(data)
    rc, out, err = fx.check(d)
    assert rc == 1 and "nested archive" in out, out + err


def test_json_beyond_the_total_parsed_is_refused_by_its_sizes(run_files, tmp_path):
    d = tmp_path / "bomb"
    d.mkdir()
    for n, b in run_files.items():
        (d / n).write_bytes(b)
    for i in range(2):   # sparse: refused from the sizes, never read
        with open(d / f"sweep{i}.json", "wb") as fh:
            fh.truncate(safezip.MAX_JSON_TOTAL // 2 + 1)
    rejected(d, "JSON files hold", tmp_path)
    infos = [zipfile.ZipInfo(f"c{i}.json") for i in range(4)]
    for info in infos:
        info.file_size, info.compress_size = 60 << 20, 1 << 20
    assert any("parse bomb" in why for why in safezip.vet(infos))


def test_a_huge_value_in_a_schema_refusal_is_shown_in_a_few_characters():
    import time

    from mlx_vjpcheck.validation import schema
    values = [1.2345678901234567e-300] * 3_000_000
    t = time.perf_counter()
    shown = schema._show(values)
    assert time.perf_counter() - t < 0.5 and shown.startswith("[1.234") and len(shown) <= 60
