"""MLX's own test suites against a gate's two builds, one outcome per test.

* Python: `python/tests` of the checkout (unittest), discovered and run by this
  module's child (`python -m <package>.gate.mlxtests`, below) with the built
  package first on PYTHONPATH. The child prints one JSON line per test as it
  starts and as it ends, so a test that kills the interpreter is one `crashed`
  outcome and the run resumes at the next test (as the scenario worker does).
* C++: the `tests` binary (doctest) linked from MLX's test objects, run with
  doctest's XML reporter; a test case that kills the process is one `crashed`
  outcome and the binary restarts at the next one (`--first`).

Outcomes: pass, fail, error, skip, xfail (an expected failure), xpass (an
unexpected success), crashed. `compare` pairs the two builds' outcomes per test:
a test that passes pristine and does not pass patched is a regression the
gate names; a test that fails on both is pre-existing, not the patch's doing.
Nothing here imports mlx.
"""
from __future__ import annotations

import argparse
import fnmatch
import html
import json
import os
import re
import sys
import time
import traceback

from ..core.exits import died, exit_text
from ..judging.gate_verdict import GOOD, handoff_problems, mlx_confirmed, mlx_flaky, mlx_key, mlx_regressions
from ..judging.gate_verdict import MLX_RERUNS as RERUNS
from ..judging.gate_verdict import mlx_change as rule_change

SCHEMA = "mlx-vjpcheck/mlx-tests/1"
RANK = {"pass": 0, "skip": 0, "xfail": 0, "xpass": 2, "fail": 3, "error": 4, "crashed": 5}


def matches(test_id: str, pattern: str | None) -> bool:
    """A glob when the pattern has * ? [, else a substring (as --filter)."""
    if not pattern:
        return True
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(test_id, pattern)
    return pattern in test_id


# --- a patch that edits MLX's Python tests ----------------------------------------------

def _test_methods(text: str, module: str) -> dict:
    """{test id: its source} of every test method of every class in a test file
    (ids as unittest names them with the tests folder as top level: module.Class.method)."""
    import ast
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    out = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test"):
                out[f"{module}.{cls.name}.{fn.name}"] = ast.get_source_segment(text, fn) or ""
    return out


def edited_tests(rel: str, old: str, new: str) -> list:
    """The test ids of python/tests/<file>.py whose method the patch adds, removes or
    changes (a test's own text; a change to a helper outside the methods names none)."""
    module = os.path.splitext(os.path.basename(rel))[0]
    a, b = _test_methods(old, module), _test_methods(new, module)
    return sorted(t for t in set(a) | set(b) if a.get(t) != b.get(t))


# --- the child: MLX's Python tests under unittest, one JSON line per event ----------------

def _flatten(suite) -> list:
    import unittest
    out = []
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            out += _flatten(t)
        else:
            out.append(t)
    return out


def _emit(proto, obj) -> None:
    proto.write(json.dumps(obj) + "\n")
    proto.flush()


def _short(err) -> str:
    if err is None:
        return ""
    etype, value, _ = err
    return f"{etype.__name__}: {value}".replace("\n", " ")[:300]


class _Result:
    """A unittest result that streams each test's outcome."""

    def __new__(cls, proto, index):
        import unittest

        class Result(unittest.TestResult):
            def __init__(self):
                super().__init__()
                self.current = None

            def _mark(self, test, outcome, detail=""):
                tid = test.id()
                if self.current is None or self.current["id"] != tid:
                    # class or module fixtures (setUpClass ...) fail outside any test
                    _emit(proto, {"result": {"id": tid, "outcome": outcome, "detail": detail,
                                             "seconds": 0.0}})
                    return
                if RANK[outcome] >= RANK[self.current["outcome"]] or self.current["outcome"] == "pass":
                    self.current.update(outcome=outcome, detail=detail or self.current["detail"])

            def startTest(self, test):
                super().startTest(test)
                self.current = {"id": test.id(), "outcome": "pass", "detail": "", "t0": time.perf_counter()}
                _emit(proto, {"start": test.id(), "index": index.get(test.id())})

            def stopTest(self, test):
                super().stopTest(test)
                cur, self.current = self.current, None
                if cur is not None:
                    _emit(proto, {"result": {"id": cur["id"], "outcome": cur["outcome"], "detail": cur["detail"],
                                             "seconds": round(time.perf_counter() - cur["t0"], 4)}})

            def addError(self, test, err):
                super().addError(test, err)
                self._mark(test, "error", _short(err))

            def addFailure(self, test, err):
                super().addFailure(test, err)
                self._mark(test, "fail", _short(err))

            def addSkip(self, test, reason):
                super().addSkip(test, reason)
                self._mark(test, "skip", str(reason)[:300])

            def addExpectedFailure(self, test, err):
                super().addExpectedFailure(test, err)
                self._mark(test, "xfail", _short(err))

            def addUnexpectedSuccess(self, test):
                super().addUnexpectedSuccess(test)
                self._mark(test, "xpass")

            def addSubTest(self, test, subtest, err):
                super().addSubTest(test, subtest, err)
                if err is not None:
                    failed = issubclass(err[0], test.failureException)
                    self._mark(test, "fail" if failed else "error", f"{subtest._subDescription()} {_short(err)}")
        return Result()


def child_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=f"python -m {__name__}")
    p.add_argument("--start-dir", required=True)
    p.add_argument("--pattern", default="test_*.py")
    p.add_argument("--filter", default=None)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--ids", default=None, help="JSON file: run exactly these test ids (in this order)")
    p.add_argument("--list", action="store_true", help="print the test ids and exit")
    args = p.parse_args(argv)
    # The protocol goes to a private copy of stdout; what tests print goes to stderr.
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import unittest
    loader = unittest.TestLoader()
    suite = loader.discover(args.start_dir, pattern=args.pattern, top_level_dir=args.start_dir)
    tests = [t for t in _flatten(suite) if matches(t.id(), args.filter)]
    if args.ids:
        with open(args.ids, encoding="utf-8") as fh:
            wanted = json.load(fh)
        by_id = {t.id(): t for t in tests}
        tests = [by_id[i] for i in wanted if i in by_id]
    _emit(proto, {"tests": [t.id() for t in tests]} if args.list else {"count": len(tests)})
    if args.list:
        return 0
    import mlx.core as mx   # what the tests will import: say which build it is
    _emit(proto, {"mlx": {"version": getattr(mx, "__version__", None), "file": getattr(mx, "__file__", None)}})
    result = _Result(proto, {t.id(): i for i, t in enumerate(tests)})
    try:
        unittest.TestSuite(tests[args.start:]).run(result)
    except Exception:   # a failure of unittest itself, not of a test
        traceback.print_exc()
        return 3
    return 0


# --- the parent: run, restart after a crash, collect --------------------------------------

def python_argv(start_dir, start: int, pattern_filter=None, ids_file=None) -> list:
    return [sys.executable, "-m", __name__, "--start-dir", str(start_dir), "--start", str(start)] + \
        (["--filter", pattern_filter] if pattern_filter else []) + (["--ids", str(ids_file)] if ids_file else [])


def parse_python(stdout: str) -> tuple:
    """(count, {id: result}, (id, index) of a test started but unfinished or None, mlx info)."""
    count, results, current, info = None, {}, None, None
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "count" in msg:
            count = msg["count"]
        elif "mlx" in msg:
            info = msg["mlx"]
        elif "start" in msg:
            current = (msg["start"], msg.get("index"))
        elif "result" in msg:
            r = msg["result"]
            results[r["id"]] = r
            if current is not None and r["id"] == current[0]:
                current = None
    return count, results, current, info


def run_python(start_dir, execute, pattern_filter=None, max_restarts: int = 50, ids_file=None) -> dict:
    """{"tests": {id: {"outcome", "detail", "seconds"}}, "count", "mlx", "processes"}.
    `execute(argv, n) -> (rc, stdout, stderr)` runs (and records) one process."""
    results, start, n, count, info = {}, 0, 0, None, None
    while True:
        n += 1
        rc, out, err = execute(python_argv(start_dir, start, pattern_filter, ids_file), n)
        c, got, current, mi = parse_python(out)
        count = c if c is not None else count
        info = info or mi
        results.update(got)
        if current is None:
            if rc != 0 and c is None:
                tail = (err.strip().splitlines() or ["(no output)"])[-1]
                raise RuntimeError(f"MLX's Python tests could not start ({exit_text(rc, 'exit')}): {tail[:300]}")
            break
        tid, index = current
        results[tid] = {"id": tid, "outcome": "crashed", "seconds": None, "detail": _death(rc, err)}
        if index is None or n > max_restarts:
            break
        start = index + 1
        if count is not None and start >= count:
            break
    return {"tests": results, "count": count, "mlx": info, "processes": n}


def _death(rc: int, err: str) -> str:
    return died(rc, err)


# --- C++: doctest's XML reporter --------------------------------------------------------------

CASE = re.compile(r"<TestCase\b([^>]*?)(/?)>")
ATTR = re.compile(r'(\w+)="([^"]*)"')
RESULT = re.compile(r"<OverallResultsAsserts\b([^>]*)/>")


def _attrs(text: str) -> dict:
    return {k: html.unescape(v) for k, v in ATTR.findall(text)}


def test_id(attrs: dict) -> str:
    """<file stem>::<test case name>, e.g. ops_tests::test gather: names are only unique
    per file, and the file makes them easy to select."""
    stem = os.path.splitext(os.path.basename(attrs.get("filename", "")))[0]
    return f"{stem}::{attrs.get('name', '?')}" if stem else attrs.get("name", "?")


def parse_doctest_xml(text: str) -> tuple:
    """([(name, outcome, detail)], name started but unfinished or None), from doctest's
    XML reporter output, complete or cut short by a crash."""
    out, current = [], None
    events = sorted([(m.start(), "case", m) for m in CASE.finditer(text)] +
                    [(m.start(), "result", m) for m in RESULT.finditer(text)], key=lambda e: e[0])
    seen_case = {}
    for at, kind, m in events:
        if kind == "case":
            a = _attrs(m.group(1))
            name = test_id(a)
            if a.get("skipped") == "true" or m.group(2) == "/":
                out.append((name, "skip", ""))
                current = None
            else:
                current = name
                seen_case[name] = at
        elif current is not None:
            a = _attrs(m.group(1))
            if "test_case_success" not in a:
                continue   # the run's totals
            body = text[seen_case[current]:at]
            ok = a["test_case_success"] == "true"
            detail = ""
            if not ok:
                exc = re.search(r"<Exception\b[^>]*>(.*?)</Exception>", body, re.S)
                exp = re.search(r"<Expression\b[^>]*>(.*?)</Expression>", body, re.S)
                pick = exc or exp
                detail = html.unescape(re.sub(r"<[^>]+>", " ", pick.group(1))).strip()[:300] if pick else \
                    f"{a.get('failures', '?')} failed assertions"
            crash = re.search(r'<Exception\s+crash="true"', body)
            out.append((current, "crashed" if crash else ("pass" if ok else "fail"), detail))
            current = None
    return out, current


def cpp_argv(binary, xml_path, first: int, only: str | None = None) -> list:
    argv = [str(binary), "--reporters=xml", f"--out={xml_path}", "--no-version", "--order-by=file"]
    if first > 1:
        argv.append(f"--first={first}")
    if only:   # one test case by its id (<file stem>::<name>); doctest filters treat , as a separator
        stem, _, name = only.partition("::") if "::" in only else ("", "", only)
        name = re.sub(r" #\d+$", "", name)
        argv.append("--test-case=" + re.sub(r"[,\[\]\\]", "?", name))
        if stem:
            argv.append(f"--source-file=*{stem}.*")
    return argv


def run_cpp(binary, work_dir, execute, pattern_filter=None, max_restarts: int = 50, only=None) -> dict:
    """{"tests": {id: {...}}, "processes", "xml": [texts]}: the doctest binary from the
    first test case, again after each that kills it (`--first` counts test cases from 1).
    Every test case runs (the whole binary takes seconds); `pattern_filter` selects which
    outcomes are kept."""
    results, first, n, xmls = {}, 1, 0, []
    while True:
        n += 1
        xml_path = os.path.join(str(work_dir), f"doctest-{n}.xml")
        rc, out, err = execute(cpp_argv(binary, xml_path, first, only), n)
        try:
            with open(xml_path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            text = ""
        xmls.append(text)
        cases, current = parse_doctest_xml(text)
        ran = 0
        for name, outcome, detail in cases:
            results[_unique(results, name)] = {"id": name, "outcome": outcome, "detail": detail, "seconds": None}
            ran += 1
        if current is None:
            if rc != 0 and not cases:
                tail = (err.strip().splitlines() or ["(no output)"])[-1]
                raise RuntimeError(f"MLX's C++ tests could not start ({exit_text(rc, 'exit')}): {tail[:300]}")
            break
        results[_unique(results, current)] = {"id": current, "outcome": "crashed", "seconds": None,
                                              "detail": _death(rc, err)}
        first += ran + 1
        if n > max_restarts:
            break
    results = {k: r for k, r in results.items() if matches(k, pattern_filter)}
    return {"tests": results, "count": len(results), "processes": n, "xml": xmls}


def _unique(results: dict, name: str) -> str:
    """doctest allows two test cases of one name (in different files): number the later ones."""
    if name not in results:
        return name
    k = 2
    while f"{name} #{k}" in results:
        k += 1
    return f"{name} #{k}"


# --- pristine vs patched ------------------------------------------------------------------------

def compare(suite: str, pristine: dict, patched: dict) -> list:
    """One row per test either build ran: {suite, test, pristine, patched, change, detail}.
    change: "regression" (passes pristine, not patched), "fixed" (the reverse),
    "pre-existing" (fails on both), "changed" (failing differently), "missing"
    (ran on one build only), "" (the same)."""
    rows = []
    for tid in sorted(set(pristine) | set(patched)):
        a, b = pristine.get(tid, {}).get("outcome"), patched.get(tid, {}).get("outcome")
        change = rule_change(a, b)
        row = {"suite": suite, "test": tid, "pristine": a, "patched": b, "change": change}
        detail = (patched.get(tid) or {}).get("detail") if change in ("regression", "missing", "changed") \
            else (pristine.get(tid) or {}).get("detail")
        if detail:
            row["detail"] = detail
        rows.append(row)
    return rows


def confirm(rows: list, rerun) -> dict:
    """Each regression (a test passing pristine, not patched) run again RERUNS times on each
    build by itself: `rerun(suite, test, variant) -> outcome`. Returns {suite:test:
    {"pristine": [...], "patched": [...], "confirmed": bool}}: a regression is confirmed
    when every rerun on pristine passes and none on patched does; otherwise it is
    flaky (timing or order dependent: not the patch's doing). The rows stay as the two
    full runs give them."""
    out = {}
    for r in rows:
        if r["change"] != "regression":
            continue
        seen = {v: [rerun(r["suite"], r["test"], v) for _ in range(RERUNS)] for v in ("pristine", "patched")}
        out[mlx_key(r)] = dict(seen, confirmed=mlx_confirmed(seen))
    return out


def verdict(rows: list, reruns: dict | None = None) -> tuple:
    """(ok, one line). Regressions fail the gate (unless reruns show them flaky); so does
    a test that ran on pristine, passing, and not at all on patched."""
    bad = mlx_regressions(rows, reruns)
    by = {}
    for r in rows:
        by.setdefault(r["suite"], []).append(r)
    parts = []
    for suite, rs in sorted(by.items()):
        passed = sum(r["patched"] in GOOD for r in rs)
        parts.append(f"{suite} {passed}/{len(rs)} pass patched, "
                     f"{sum(r['change'] == 'regression' and not mlx_flaky(r, reruns) for r in rs)} pass->fail, "
                     f"{sum(r['change'] == 'pre-existing' for r in rs)} failing on both, "
                     f"{sum(r['change'] == 'fixed' for r in rs)} fixed"
                     + (f", {sum(mlx_flaky(r, reruns) for r in rs)} flaky (passed again on patched)"
                        if any(mlx_flaky(r, reruns) for r in rs) else ""))
    line = "MLX tests: " + ("; ".join(parts) if parts else "none ran")
    # a test the patch edits is compared old (pristine) against new (patched); its old
    # version's outcome on patched is always said, never folded silently into a pass
    edited = [r for r in rows if r.get("edited")]
    if edited:
        line += f"; {len(edited)} edited by the patch: " + ", ".join(
            f"{r['test']} (old: {r['pristine']} pristine, {r['edited']['old_on_patched']} patched; "
            f"new: {r['patched']} patched)" for r in edited)
    handoff = handoff_problems(rows)
    n_files = len({r["test"].split(".")[0] for r in rows if r["suite"] == "handoff"})
    if n_files:
        line += (f"; the patch's regression tests: {n_files - len({h.split(':')[0] for h in handoff})}/{n_files} "
                 "files fail pristine and pass patched" + (f" ({handoff[0]})" if handoff else ""))
    if bad:
        line += f" (first regression: {bad[0]['suite']} {bad[0]['test']})"
    return not bad and not handoff, line


if __name__ == "__main__":
    sys.exit(child_main())
