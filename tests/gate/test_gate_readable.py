"""The verdict is readable: one pristine-vs-patched table per suite (counts per op), verdict
lines that count long lists instead of spelling them, and the full lists kept in gate.json's
"verdict". No MLX build: rows written here."""
from __future__ import annotations

from mlx_vjpcheck.gate import compare as GC


def _row(name, op, pristine, patched, expects=True, source="catalog"):
    return {"scenario": name, "op": op, "device": "cpu", "pristine": pristine, "patched": patched,
            "expects_defect": expects, "source": source, "in_scope": True}


def _series(n_ops=10, per=6):
    """A series claiming `per` classes of each of `n_ops` ops, every scenario fixed but one."""
    rows, tags, claims = [], {}, []
    for i in range(n_ops):
        for k in range(per):
            name = f"op{i}/c{k}"
            rows.append(_row(name, "pad" if i == 0 else f"op{i}", "fail", "pass"))
            tags[name] = [f"class_{i}_{k}"]
            claims.append(["pad" if i == 0 else f"op{i}", f"class_{i}_{k}"])
    rows[-1]["patched"] = "fail"
    rows.append(_row("other/x", "sign", "pass", "pass", expects=False))
    return {"comparison": {"rows": rows}, "gate": {"defect_tags_first_order": tags, "claims": claims}}


def test_long_lists_are_counted_in_the_lines_and_kept_in_full_in_the_verdict():
    outcome = _series()
    v = GC.overall_full(outcome)
    assert v["exit"] == 1
    text = "\n".join(v["lines"])
    assert "class_3_2" not in text and "60 from the series' manifest (10 ops: " in v["lines"][0], v["lines"]
    assert "(60 defect classes, and the corpus: listed in gate.json's verdict)" in v["lines"][1], v["lines"]
    assert "not passing patched: op9/c5" in v["lines"][1], v["lines"]
    j = v["judged"]["harness"]
    assert len(j["classes"]) == 60 and len(j["scoped"]) == 60 and j["unfixed"] == ["op9/c5"]
    # negative control: a short list is still spelled out
    short = GC.overall_full(_series(n_ops=1, per=2))
    assert "pad: class_0_0, class_0_1" in short["lines"][0], short["lines"]


def test_the_table_has_one_row_per_op_of_the_scope_and_one_for_the_rest():
    outcome = _series(n_ops=2, per=2)
    v = GC.overall_full(outcome)
    rows = GC.op_table(outcome["comparison"], v["scope"], v["judged"]["harness"])
    assert [r["op"] for r in rows] == ["op1", "pad", "(other ops)"]
    op1 = rows[0]
    assert (op1["scenarios"], op1["pass_pristine"], op1["pass_patched"], op1["fixed"], op1["held"],
            op1["held_passing"]) == (2, 0, 1, 1, 2, 1)
    assert rows[-1]["scenarios"] == 1 and rows[-1]["pass_patched"] == 1
    # every row counted once
    assert sum(r["scenarios"] for r in rows) == len(outcome["comparison"]["rows"])
