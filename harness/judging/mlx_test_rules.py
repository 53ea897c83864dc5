"""The rules over MLX test outcomes that the gate applies to its run and the validator
re-derives offline (native/mlxtests.py runs the tests; validation/native.py checks what
was recorded): which outcomes count as working, when a pass -> fail is flaky by its
reruns, what the patch's own regression tests must show, and which recorded reruns are
well-formed enough to be read."""
from __future__ import annotations

GOOD = ("pass", "xfail")          # what a test that works gives
NOT_RUN = ("skip", None)
RERUNS = 3                        # each pass -> fail is run again this many times a side


def change(a, b) -> str:
    """One test's outcomes on the two builds, as a change: "regression" (passes pristine,
    not patched), "fixed" (the reverse), "pre-existing" (fails on both the same way),
    "changed" (failing differently, or pass <-> skip / xfail), "missing" (ran on one build
    only), "" (the same)."""
    good_a, good_b = a in GOOD or a == "skip", b in GOOD or b == "skip"
    if a is None or b is None:
        return "missing"
    if a == b:
        return "pre-existing" if not good_a else ""
    if a in GOOD and not good_b:
        return "regression"
    if not good_a and b in GOOD:
        return "fixed"
    return "changed"


def key(row: dict) -> str:
    return f"{row['suite']}:{row['test']}"


def confirmed(seen: dict) -> bool:
    """A pass -> fail its reruns confirm: every rerun passes on pristine, none on patched."""
    return all(o in GOOD for o in seen["pristine"]) and all(o not in GOOD for o in seen["patched"])


def flaky(row: dict, reruns: dict | None) -> bool:
    """A regression its reruns did not confirm."""
    seen = (reruns or {}).get(key(row))
    return row["change"] == "regression" and seen is not None and not confirmed(seen)


def handoff_problems(rows: list) -> list:
    """The patch's regression tests (suite "handoff") that do not do their job, one line
    each: a file none of whose tests fails on pristine does not show the defect, and a
    file with a test that does not pass patched is not fixed. (A file may hold a test
    that passes on pristine beside those that carry the class.)"""
    files = {}
    for r in rows:
        if r["suite"] == "handoff":
            files.setdefault(r["test"].split(".")[0], []).append(r)
    out = []
    for name, rs in sorted(files.items()):
        if not any(r["pristine"] not in GOOD and r["pristine"] not in NOT_RUN for r in rs):
            out.append(f"regression test {name}: no test fails on pristine (it does not show the defect)")
        bad = [r["test"] for r in rs if r["patched"] not in GOOD]
        if bad:
            out.append(f"regression test {name}: {len(bad)} of {len(rs)} do not pass patched (first: {bad[0]})")
    return out


def recorded_reruns(gate_doc) -> dict:
    """The MLX tests the gate ran again after a pass -> fail (gate.json mlx_test_reruns:
    {suite:test: {"pristine": [outcomes], "patched": [outcomes]}}), each with exactly
    RERUNS outcomes a side; anything else recorded there is left out (and its regression
    then stands). Their "confirmed" flag is not read: the rule re-derives it."""
    got = gate_doc.get("mlx_test_reruns") if isinstance(gate_doc, dict) else None
    out = {}
    for k, seen in (got.items() if isinstance(got, dict) else ()):
        sides = [seen.get(v) if isinstance(seen, dict) else None for v in ("pristine", "patched")]
        if all(isinstance(x, list) and len(x) == RERUNS and all(isinstance(o, str) for o in x) for x in sides):
            out[k] = {"pristine": sides[0], "patched": sides[1]}
    return out
