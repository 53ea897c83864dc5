"""The validator's fast paths give what the plain ones give: comparisons of many checks
computed together (core/checks.compare_many, oracles/recheck.Batch), a results file's
check values read as arrays while it is parsed (validation/arrays.py), and the schema
checker compiled to Python source (validation/schema.py). Each is held to the plain
computation on ordinary, non-finite, complex, malformed and hostile inputs, and each
test first shows that its inputs make the difference it looks for (a negative control).
So are the record rechecks on several processes (validation/parallel.py: chunks from one
queue, joined in order; begun before the file's schema check) held to one process."""
from __future__ import annotations

import copy
import gc
import json
import math
import os
import re
import time

import numpy as np
import pytest

import helpers.evidence_fixtures as fx
from mlx_vjpcheck.core import checks, jsonio
from mlx_vjpcheck.evidence import strict, summary
from mlx_vjpcheck.oracles import recheck
from mlx_vjpcheck.validation import arrays, parallel, records, schema
from mlx_vjpcheck.validation.groups import Group

# Random values overflow and meet NaN on purpose; the validator computes under errstate too.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e308, 5e-324]


def _values(rng, shape, cplx=False):
    a = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4)
    flat = a.reshape(-1)
    for i in range(flat.size):
        if rng.random() < 0.15:
            flat[i] = SPECIAL[rng.integers(len(SPECIAL))]
    return a + 1j * _values(rng, shape) if cplx else a


def _request(rng, k: int) -> tuple:
    shape = tuple(int(d) for d in rng.integers(0, 4, size=rng.integers(0, 4)))
    cplx = rng.random() < 0.15
    exp = _values(rng, shape, cplx)
    obs = exp + rng.normal(size=shape) * 10.0 ** rng.integers(-14, 0) if rng.random() < 0.7 else _values(rng, shape)
    observed = obs.tolist() if rng.random() < 0.5 else obs
    if cplx and rng.random() < 0.5:   # the [re, im] pair form a results file writes
        observed = np.stack([np.real(obs), np.imag(obs)], axis=-1).tolist()
    observed = [[1.0, 2.0], [3.0]] if rng.random() < 0.03 else observed   # ragged: compare raises
    observed = _values(rng, (3,)) if rng.random() < 0.05 else observed     # another shape
    atol, rtol = [(3e-5, 3e-5), (0.0, 0.0), (1e-12, 1e-12), (0, 0.5), (-0.0, 0.0), (math.inf, 0.0)][k % 6]
    acc = None
    if shape and rng.random() < 0.15:
        acc = {"unit_roundoff": 2.0 ** -8, "depth": 3, "terms": rng.integers(0, 300, size=shape).tolist(),
               "magnitude": np.abs(_values(rng, shape)).tolist()}
        if rng.random() < 0.2:
            acc["terms"] = [1]   # of another shape: compare raises
    return f"c{k}", observed, exp, atol, rtol, "reference", acc


def _one(request):
    try:
        return checks.compare(*request)
    except Exception as e:
        return e


def _same(a, b) -> bool:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    return json.dumps(a, default=repr) == json.dumps(b, default=repr)   # key order included


def test_compare_many_gives_compare_check_for_check():
    rng = np.random.default_rng(7)
    seen = {"pass": 0, "fail": 0, "raise": 0, "complex": 0}
    for trial in range(150):
        reqs = [_request(rng, k) for k in range(int(rng.integers(1, 30)))]
        want = [_one(r) for r in reqs]
        for got, w in zip(checks.compare_many(reqs), want):
            assert _same(got, w), (got, w)
            if isinstance(w, Exception):
                seen["raise"] += 1
            else:
                seen["pass" if w["passed"] else "fail"] += 1
                seen["complex"] += bool(w.get("complex"))
    assert min(seen.values()) > 20, seen   # every kind of outcome was compared


def test_compare_many_without_values_gives_the_arrays_of_the_written_values():
    rng = np.random.default_rng(8)
    reqs = [_request(rng, k) for k in range(200)]
    for got, w in zip(checks.compare_many(reqs, values=False), map(_one, reqs)):
        if isinstance(w, Exception):
            assert _same(got, w)
            continue
        assert not isinstance(got["observed"], list) and not isinstance(got["expected"], list)   # numpy values
        written = dict(got, observed=checks._written(got["observed"]), expected=checks._written(got["expected"]))
        assert _same(written, w)


def test_compare_many_negative_control_one_value_out_of_tolerance_fails_that_check_only():
    exp = np.arange(12.0).reshape(3, 4)
    reqs = [(f"c{k}", exp.copy(), exp, 3e-5, 3e-5, "reference", None) for k in range(5)]
    reqs[2][1][1, 3] += 1.0
    got = checks.compare_many(reqs)
    assert [c["passed"] for c in got] == [True, True, False, True, True]
    assert got[2]["worst_index"] == [1, 3] and got[2]["reason"] == "1 of 12 elements outside tolerance"


def test_agree_many_gives_agree():
    rng = np.random.default_rng(9)
    pairs, want = [], []
    for k in range(400):
        shape = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3)))
        b = _values(rng, shape)
        a = b + rng.normal(size=shape) * 10.0 ** rng.integers(-16, -9)
        pairs.append((a, b))
        want.append(recheck.agree(a, b))
    assert recheck._agree_many(pairs) == want
    assert True in want and False in want


def _immediate(monkeypatch):
    """recheck.Batch made to compute each comparison at once (the plain path)."""
    monkeypatch.setattr(recheck.Batch, "agree", lambda self, recorded, want: recheck.agree(recorded, want))
    monkeypatch.setattr(recheck.Batch, "compare", lambda self, c, reasons, agreed, request:
                        recheck._judged(c, reasons, agreed, checks.compare(*request)))


def _tampered(data: dict) -> dict:
    """Every kind of recorded check edited one way or another, and malformed values."""
    data = copy.deepcopy(data)
    for n, rec in enumerate(data["records"]):
        for k, c in enumerate(rec.get("checks") or []):
            edit = (n + k) % 7
            if edit == 1 and isinstance(c.get("observed"), list) and c["observed"]:
                c["observed"] = (np.asarray(c["observed"], dtype=float) + 0.5).tolist()
            elif edit == 2:
                c["expected"] = [[1.0, 2.0], [3.0]]
            elif edit == 3:
                c["worst_index"] = [0] * len(c.get("observed_shape") or [])
            elif edit == 4:
                c["observed"] = [math.nan] * max(1, len(c.get("observed") or []))
            elif edit == 5:
                c["passed"] = not c.get("passed")
    return data


@pytest.mark.parametrize("tamper", [False, True])
def test_batched_rechecks_say_what_one_at_a_time_says(monkeypatch, tamper):
    data = fx.results_data()
    data = _tampered(data) if tamper else data
    work = [(f"r{n}", data["scenarios"][r["scenario"]], r) for n, r in enumerate(data["records"])]
    batched = Group("batched")
    records.check_records(batched, work, records.Recomputer())
    with monkeypatch.context() as m:
        _immediate(m)
        plain = Group("plain")
        records.check_records(plain, work, records.Recomputer())
    assert (batched.ok, batched.total, batched.failures) == (plain.ok, plain.total, plain.failures)
    assert bool(batched.failures) == tamper   # the tampered records are caught, the honest pass


@pytest.mark.parametrize("step", ["_forward_ok", "_accepted_error_input"])
def test_an_escaping_exception_stops_the_batch_where_it_stopped_one_record_at_a_time(monkeypatch, step):
    """An exception no check catches (before or after a record's first item) ends the
    results file's checks; the records before it have been counted either way."""
    data = fx.results_data()
    work = [(f"r{n}", data["scenarios"][r["scenario"]], r) for n, r in enumerate(data["records"])]
    fourth, real = work[3][2], getattr(records, step)

    def breaks(*args):
        if any(a is fourth or a is fourth["checks"] for a in args) or args[0] == {c["name"]: c for c in
                                                                             fourth["checks"]}:
            raise KeyError("boom")
        return real(*args)

    monkeypatch.setattr(records, step, breaks)
    one = Group("one at a time")
    with pytest.raises(KeyError):
        for w in work:
            records.check_record(one, *w, records.Recomputer())
    batched = Group("batched")
    with pytest.raises(KeyError):
        records.check_records(batched, work, records.Recomputer())
    assert (batched.ok, batched.total, batched.failures) == (one.ok, one.total, one.failures)
    assert one.total > 3 * 2   # the three records before the fourth were counted


def _results_text(data: dict) -> bytes:
    return jsonio.dumps(data, indent=1).encode()


def test_compact_reading_makes_the_arrays_a_plain_read_implies():
    data = fx.results_data()
    data["records"][0]["checks"][0]["observed"] = [[1.0, 2.0], [3.0]]   # ragged: stays a list
    data["records"][1]["checks"][0]["expected"] = [True, 2]              # what _as_array reads as 1.0, 2.0
    text = _results_text(data)
    plain = jsonio.loads(text)
    reader = arrays.Reader()
    compact = jsonio.loads(text, reader.hook)
    assert reader.placed(compact) and reader.made > 0
    for rec_c, rec_p in zip(compact["records"], plain["records"]):
        for c, p in zip(rec_c["checks"], rec_p["checks"]):
            for key in arrays.KEYS:
                if isinstance(c[key], np.ndarray):
                    assert not c[key].flags.writeable
                    np.testing.assert_array_equal(c[key], checks._as_array(p[key]))
                else:
                    assert c[key] == p[key] or (c[key] != c[key] and p[key] != p[key])
    assert compact["records"][0]["checks"][0]["observed"] == [[1.0, 2.0], [3.0]]
    assert compact["scenarios"] == plain["scenarios"]


def test_a_check_like_object_out_of_its_place_makes_the_file_read_plain():
    data = fx.results_data()
    # negative control: the same object at a place the schema walks element by element
    data["environment"]["packages"] = {"x": 1}
    data["scenarios"][next(iter(data["scenarios"]))]["params"]["trap"] = {
        "observed_shape": [2], "observed": [1.0, 2.0]}
    files = strict.Files({"results.json": _results_text(data)})
    files.release_text, files.compact = True, arrays.for_results
    doc = files.doc("results.json")
    trap = doc["scenarios"][next(iter(doc["scenarios"]))]["params"]["trap"]
    assert trap["observed"] == [1.0, 2.0]   # a list: the whole file was read again as plain JSON
    assert all(not isinstance(c["observed"], np.ndarray) for r in doc["records"] for c in r["checks"])
    reader = arrays.Reader()
    assert not reader.placed(jsonio.loads(_results_text(data), reader.hook))


def test_validation_with_compact_reading_says_what_plain_reading_says(tmp_path):
    from mlx_vjpcheck.evidence.load import load
    from mlx_vjpcheck.validation import evidence
    run = fx.run_dir(tmp_path / "run")
    fx.edit_json(run / "results.json", lambda d: d["records"][0]["checks"][0].update(
        observed=[[7.0, 7.0]], observed_shape=[1, 2]), remanifest=True)
    reports = []
    for compact in (None, arrays.for_results):
        ev = load(run)
        ev.files.release_text, ev.files.compact = True, compact
        reports.append(evidence.report(evidence.validate_all(ev)[0]))
    assert reports[0] == reports[1]
    assert not reports[0][1]   # the edited value is caught either way


VALUES = [None, True, False, 0, 1, -1, 2.0, 2.5, -0.0, math.nan, math.inf, -math.inf, "", "x", "pass", "cpu",
          "a\x00b", "0" * 64, "f" * 40, "1.2.3", "x" * 401, [], [1], [1.0, -2.0], ["a"], [None], [[1, 2], [3]],
          {}, {"nonfinite": "nan"}, {"nonfinite": "bogus"}, {"a": 1}, 10 ** 20, 3.0, list(range(40))]


@pytest.mark.parametrize("name", sorted(p.name for p in schema.SCHEMA_DIR.glob("*.schema.json")))
def test_a_compiled_test_expression_holds_exactly_when_its_node_passes(name):
    c = schema._Compiler()
    c.compile(schema.document(name), name)
    assert c.tests   # every schema has nodes made of tests alone (names, numbers, enums)
    for fn, pairs in c.tests.items():
        test = eval(f"lambda v: {schema._at(schema._all_of(pairs), 'v')}", c.env)
        for v in VALUES:
            assert test(v) == (c.env[fn](v) is None), (name, fn, v)


def test_compiled_schema_problems_name_the_place_and_the_first_problem():
    check = schema._Compiler().compile({
        "type": "object", "required": ["a"], "additionalProperties": False,
        "properties": {"a": {"type": "integer", "minimum": 0},
                       "b": {"type": "array", "items": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 2}]}}}},
        "test")
    assert check({"a": 2.0}) is None and check({"a": 1, "b": [None, "ab"]}) is None
    assert check({"a": -1}) == ("/a", ("{} is less than 0", -1))
    assert check({"a": 1.5}) == ("/a", ("{} is not integer", 1.5))
    assert check({"b": []}) == ("", "required field 'a' is missing")
    assert check({"a": 1, "c": 1}) == ("/c", "unexpected field 'c'")
    assert check({"a": 1, "b": [None, "abc"]}) == ("/b/1", ("{} is not null", "abc"))
    assert check({"a": 1, "b": [3]}) == ("/b/0", ("{} is not null", 3))   # alternatives as deep: the first


def test_a_parse_leaves_the_cyclic_collector_as_it_found_it():
    assert gc.isenabled()
    jsonio.loads("[1, 2]")
    assert gc.isenabled()
    gc.disable()
    try:
        jsonio.loads("[1, 2]")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_passes_is_compare_passed_check_for_check():
    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0, "raise": 0}
    for k in range(600):
        name, observed, expected, atol, rtol, _, _ = _request(rng, k)
        try:
            want = checks.compare(name, observed, expected, atol, rtol)["passed"]
        except Exception as e:
            with pytest.raises(type(e), match=re.escape(str(e))):
                recheck.passes(observed, expected, atol, rtol)
            seen["raise"] += 1
            continue
        assert recheck.passes(observed, expected, atol, rtol) is want
        seen[want] += 1
    assert all(seen.values()), seen   # negative control: passing, failing and raising requests all met


# --- several processes: chunks taken from one queue, joined in order (validation/parallel.py) ----------

def _items_fn(log: list | None = None, boom: int | None = None, die_at: int | None = None, parent: int = 0):
    """fn(group, chunk): one item per number (every 7th fails), a note per chunk; raises
    KeyError at `boom`; a forked process dies outright at any number from `die_at` on; `log`: the numbers this
    process (the test's own) checked."""
    def fn(g, chunk):
        g.note(f"chunk from {chunk[0]}")
        for i in chunk:
            if die_at is not None and i >= die_at and os.getpid() != parent:
                os._exit(3)
            if i == boom:
                raise KeyError(f"boom at {i}")
            if log is not None and os.getpid() == parent:
                log.append(i)
            g.item([] if i % 7 else [f"bad {i}"], f"item {i}")
    return fn


def _one_process(fn, items) -> tuple:
    g = Group("one")
    error = None
    try:
        for chunk in parallel._chunks(items):
            fn(g, chunk)
    except KeyError as e:
        error = e
    return (g.ok, g.total, g.failures, g.notes), error


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(parallel, "CHUNK", 5)
    monkeypatch.setattr(parallel, "MIN_SHARE", 5)


def test_the_other_processes_tell_the_scenario_hashes_they_made(small_chunks, monkeypatch):
    """records.Recomputer.made() as a child's report: the parent learns each hash for its
    own dict (by id, the memory being the child's copy) and then does not make it again;
    ids of other objects and malformed values are ignored."""
    from mlx_vjpcheck.validation import catalog_table
    scenarios = [{"name": f"s{i}", "values": [float(i), -0.0]} for i in range(40)]
    rc = records.Recomputer()

    def fn(g, share):
        time.sleep(0.01)   # slow enough that the child takes chunks too
        for d in share:
            g.check(len(rc.identity(d)[1]) == 64)

    st = parallel.start(fn, scenarios, n_jobs=2, report=rc.made)
    st.finish(Group("all"))
    assert len(st.reports) == 1 and st.reports[0]   # negative control: the child made some
    told = {**st.reports[0], 12345: "x" * 64, id(scenarios[0]): 7}
    parent = records.Recomputer()
    parent.learn(told, scenarios)
    want = {id(d): catalog_table.text_hash(catalog_table.canonical(d)) for d in scenarios}
    monkeypatch.setattr(catalog_table, "canonical", lambda d: (_ for _ in ()).throw(AssertionError("made again")))
    for k in st.reports[0]:
        if k != id(scenarios[0]):
            d = next(x for x in scenarios if id(x) == k)
            assert parent.digest(d) == want[k]
    with pytest.raises(AssertionError, match="made again"):   # not told (or told a non-hash): made here
        parent.digest(scenarios[0])


def test_a_scenario_known_by_its_form_has_the_hash_its_text_has(tmp_path):
    """catalog_table.Table.known: a catalog scenario as a results file holds it is named by
    its marshal form, with the hash its canonical text has; any change a text would show
    (-0.0 for 0.0, 1 for 1.0, another value, true for 1, a key more) misses the form and
    takes the text, as does a key order or a NaN that a text does not show."""
    from mlx_vjpcheck.validation import catalog_table
    table = catalog_table.get()
    data = jsonio.loads((fx.run_dir(tmp_path / "run") / "results.json").read_bytes())   # as written
    by_text = lambda d: catalog_table.text_hash(catalog_table.canonical(d))   # noqa: E731
    rc = records.Recomputer(table)
    for name, d in data["scenarios"].items():
        text, digest = rc.identity(d)
        assert text is None and digest == by_text(d) == table.hashes[name]   # known by its form
    d = next(iter(data["scenarios"].values()))
    operand = next(iter(d["operands"].values()))
    first = operand["values"][0]

    def edited(fn):
        e = copy.deepcopy(d)
        fn(e, next(iter(e["operands"].values())))
        return e

    changes = [lambda e, o: o["values"].__setitem__(0, -0.0 if first == 0.0 else 0.0),
               lambda e, o: o["values"].__setitem__(0, int(first) if float(first).is_integer() and not isinstance(first, int) else first + 1),
               lambda e, o: o["values"].__setitem__(0, first + 1e-9),
               lambda e, o: o.__setitem__("dtype", True),
               lambda e, o: e.__setitem__("zz", 1),
               lambda e, o: e.update(dict(reversed(list(e.items()))) or {}) or e.__setitem__("name", e.pop("name"))]
    for change in changes:
        e = edited(change)
        text, digest = records.Recomputer(table).identity(e)
        assert text is not None and digest == by_text(e)   # the text decided
        if catalog_table.canonical(e) != catalog_table.canonical(d):
            assert digest != table.hashes[d["name"]]   # negative control: not taken for the catalog's
    assert catalog_table.form_hash({"x": object()}) is None   # no marshal form: the text decides


def test_chunks_on_several_processes_join_to_what_one_process_gives(small_chunks):
    items = list(range(300))
    want, _ = _one_process(_items_fn(), items)
    got = Group("many")
    parallel.run(got, _items_fn(), items, n_jobs=3)
    assert (got.ok, got.total, got.failures, got.notes) == want
    # negative control: the chunks really were checked elsewhere (this process saw few of
    # them). Each chunk takes a while here, so that on a loaded machine the forked processes
    # get to the queue before this one has emptied it.
    log = []
    fn = _items_fn(log, parent=os.getpid())
    def slow(g, chunk):
        time.sleep(0.02)
        fn(g, chunk)
    parallel.run(Group("x"), slow, items, n_jobs=3)
    assert len(log) < len(items)


@pytest.mark.parametrize("boom", [3, 151, 299])
def test_an_exception_in_a_chunk_stops_the_join_where_one_process_stops(small_chunks, boom):
    items = list(range(300))
    want, error = _one_process(_items_fn(boom=boom), items)
    got = Group("many")
    with pytest.raises(KeyError, match=f"boom at {boom}"):
        parallel.run(got, _items_fn(boom=boom), items, n_jobs=3)
    assert (got.ok, got.total, got.failures, got.notes) == want
    assert error is not None and got.total == boom   # negative control: the items after it never count


def test_a_chunk_whose_process_dies_is_checked_here(small_chunks):
    items, log = list(range(300)), []
    want, _ = _one_process(_items_fn(), items)
    got = Group("many")
    parallel.run(got, _items_fn(log, die_at=0, parent=os.getpid()), items, n_jobs=3)
    assert (got.ok, got.total, got.failures, got.notes) == want
    assert sorted(log) == items   # every process forked died: this one checked every chunk


def test_cancel_stops_and_reaps_the_processes(small_chunks):
    def slow(g, chunk):
        time.sleep(0.05)
        g.check(True)
    started = parallel.start(slow, list(range(300)), n_jobs=3)
    pids = [pid for pid, _ in started.children]
    assert len(pids) == 2   # negative control: there were processes to stop
    started.cancel()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)   # reaped already: no such child left


def _report_of(run, early: bool, monkeypatch, jobs: int = 3) -> tuple:
    from mlx_vjpcheck.evidence.load import load
    from mlx_vjpcheck.validation import evidence
    with monkeypatch.context() as m:
        m.setattr(parallel, "MIN_SHARE", 1)
        m.setattr(parallel, "CHUNK", 1)
        m.setattr(parallel, "jobs", lambda: jobs)
        if not early:
            m.setattr(evidence, "_start_early", lambda ctx, kind, name: None)
        ev = load(run)
        ev.files.release_text, ev.files.compact = True, arrays.for_results
        return evidence.report(evidence.validate_all(ev)[0])


@pytest.mark.parametrize("edit", ["none", "value", "schema", "summary", "renamed"])
def test_rechecks_begun_before_the_schema_check_say_what_checking_in_turn_says(tmp_path, monkeypatch, edit):
    """Begun early on three processes, the rechecks, SUMMARY.md's check (made meanwhile)
    and the binding (from the scenario hashes the other processes tell) report what one
    process checking each in its turn reports."""
    run = fx.run_dir(tmp_path / "run")
    (run / "SUMMARY.md").write_text(summary.render(files_of(run)), encoding="utf-8")
    fx.rewrite_manifest(run)
    change = {"value": lambda d: d["records"][3]["checks"][0].update(observed=[[7.0, 7.0]], observed_shape=[1, 2]),
              "schema": lambda d: d["records"][2]["checks"][0].update(atol=-1.0),
              "renamed": _other_inputs_under_a_catalog_name}.get(edit)
    if change:
        fx.edit_json(run / "results.json", change, remanifest=True)
    if edit == "summary":
        (run / "SUMMARY.md").write_text("all pass\n", encoding="utf-8")
        fx.rewrite_manifest(run)
    early = _report_of(run, True, monkeypatch)
    assert early == _report_of(run, False, monkeypatch) == _report_of(run, False, monkeypatch, jobs=1)
    assert early[1] == (edit == "none")   # negative control: each edit is caught
    if edit == "schema":
        assert any("does not follow results.schema.json" in line for line in early[0])
    if edit == "summary":
        assert any("SUMMARY.md differs" in line for line in early[0])
    if edit == "renamed":
        assert any("carries the name of a catalog scenario but differs" in line for line in early[0])


def _other_inputs_under_a_catalog_name(d) -> None:
    """The last record's scenario (the one most likely rechecked by another process) given
    other inputs under its catalog name."""
    name = d["records"][-1]["scenario"]
    operand = next(iter(d["scenarios"][name]["operands"].values()))
    operand["values"][0] = operand["values"][0] + 1.0 if not isinstance(operand["values"][0], list) else [9.0, 9.0]


def files_of(root) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("few,block", [(True, 1 << 20), (True, 3), (False, 1 << 20)])
def test_escaped_quotes_found_run_by_run_are_those_two_replaces_find(monkeypatch, few, block):
    """strict._kept keeps exactly what the two passes of bytes.replace then a translate
    keep, on every short text of backslashes, quotes and brackets, also when the text is
    translated in blocks of 3 bytes (escapes across a block's end); past _FEW_BACKSLASHES it
    is those passes. Negative control: a quote after an even run of backslashes is a string
    end and stays."""
    import random

    def replaced(data):
        return data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, strict._DELETE)

    if not few:
        monkeypatch.setattr(strict, "_FEW_BACKSLASHES", 2)
    monkeypatch.setattr(strict, "_BLOCK", block)
    rng = random.Random(7)
    alphabet = [b"\\", b'"', b"a", b"[", b"]", b",", b"{", b"n"]
    for _ in range(6000):
        text = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert strict._kept(text) == replaced(text), text
    assert strict._kept(b'"a\\\\"]') == b'""]'
    assert strict.shape(b'["a\\"]"]').depth == 1 and strict.shape(b'["a\\\\"]').depth == 1


def test_shape_counts_as_a_running_sum_over_the_brackets_outside_strings():
    """shape against the definition (a quote toggles inside/outside; depth the running
    sum's maximum, never below 0) on random texts. Negative control: brackets inside a
    string count for nothing."""
    import random

    def by_definition(text):
        inside, depth, top, opens, commas = False, 0, 0, 0, 0
        for ch in strict._kept(text).decode():
            if ch == '"':
                inside = not inside
            elif not inside and ch in "[{":
                depth, opens = depth + 1, opens + 1
                top = max(top, depth)
            elif not inside and ch in "]}":
                depth -= 1
            elif not inside and ch == ",":
                commas += 1
        return strict.Shape(top, opens, commas + opens + 1)

    rng = random.Random(11)
    alphabet = [b"\\", b'"', b"a", b"[", b"]", b",", b"{", b"}"]
    for _ in range(6000):
        text = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert strict.shape(text) == by_definition(text), text
    assert strict.shape(b'["[[[[", [1]]') == strict.Shape(2, 2, 4)


@pytest.mark.parametrize("kept", [False, True])
def test_the_console_script_leaves_at_once_only_when_objects_were_kept(kept):
    """cli.leave: the exit code either way; with kept objects the process ends at once,
    its output flushed (a line still buffered is not lost), and nothing after it runs."""
    import subprocess
    import sys
    code = ("import sys\nfrom mlx_vjpcheck.cli import leave, options\n"
            "sys.stdout.write('said'); sys.stderr.write('warned')\n"
            + ("options.keep(list(range(10)))\n" if kept else "")
            + "rc = leave(3)\nprint(' and returned'); sys.exit(rc)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 3
    assert p.stdout == ("said" if kept else "said and returned\n") and p.stderr == "warned"


def test_a_shape_measured_ahead_bounds_the_parse_as_one_measured_then():
    """Files.measure (the validator measures JSON files while another thread hashes them):
    doc then refuses what it refuses unmeasured, and parses what it parses. Negative
    control: the deep file is refused either way."""
    deep = b"[" * (strict.MAX_DEPTH + 1) + b"]" * (strict.MAX_DEPTH + 1)
    fine = b'{"a": [1, 2]}'
    for measured in (False, True):
        files = strict.Files({"deep.json": deep, "fine.json": fine})
        if measured:
            files.measure("deep.json")
            files.measure("fine.json")
        assert files.doc("deep.json") is None and "levels deep" in files.problems["deep.json"]
        assert files.doc("fine.json") == {"a": [1, 2]}


def test_the_manifest_check_with_hashes_from_the_other_thread_still_rejects_a_changed_file(tmp_path):
    """validate_all hashes on another thread: a file changed after its hash was written is
    still a sha256 mismatch (negative control: the unchanged evidence passes that check)."""
    from mlx_vjpcheck.evidence import manifest
    from mlx_vjpcheck.evidence.load import Evidence
    from mlx_vjpcheck.validation import evidence as ev_mod

    data = b'{"x": 1}'
    listing = f"{manifest.sha256(data)}  environment.json\n".encode()
    for body, ok in ((data, True), (b'{"x": 2}', False)):
        ev = Evidence("e", {"environment.json": body, manifest.NAME: listing})
        g, verified, _ = ev_mod.check_manifest(ev, ev_mod._hashed_meanwhile(dict(ev.files))())
        assert ("environment.json" in verified) is ok
        assert any("sha256 mismatch" in f for f in g.failures) is (not ok)
