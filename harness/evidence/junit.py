"""JUnit XML for CI dashboards: one testcase per scenario and device.

classname is the device, name the scenario; a failing record carries its
worst check (or its error) so the CI page says what went wrong without
opening results.json.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from . import atomic
from ..core import verdict

SUITE = "mlx-vjpcheck"
# Characters XML 1.0 cannot carry at all, even escaped (an error text could hold one).
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text) -> str:
    return _BAD.sub("?", str(text))


def describe(rec: dict) -> tuple:
    """(one-line message, longer detail) for a non-passing record."""
    if rec.get("error"):
        return rec["error"], rec["error"]
    w = verdict.worst(rec.get("checks") or [])
    if w is None:
        return "no check ran", "no check ran"
    msg = f"{w['name']}: {w.get('reason') or 'outside tolerance'}"
    if w.get("worst_error") is not None:
        msg += (f" (worst error {w['worst_error']:.6g} at index {w.get('worst_index')},"
                f" tolerance {w.get('worst_tolerance'):.3g})")
    failed = [c["name"] for c in rec.get("checks", []) if not c["passed"]]
    detail = msg + "\nfailed checks: " + ", ".join(failed)
    if w.get("observed") is not None:
        # Big operands would swamp a CI page: the full values are in results.json.
        detail += (f"\nobserved: {str(w['observed'])[:300]}"
                   f"\nexpected: {str(w['expected'])[:300]}")
    return msg, detail


def testcase(rec: dict) -> ET.Element:
    tc = ET.Element("testcase", classname=_clean(rec["device"]), name=_clean(rec["scenario"]),
                    time=f"{rec.get('seconds') or 0:.6f}")
    status = rec["status"]
    if status != "pass":
        msg, detail = describe(rec)
        # A wrong value is a failure; an exception or dead process is an error.
        tag = "failure" if status == "fail" else "error"
        el = ET.SubElement(tc, tag, message=_clean(msg)[:1000], type=status)
        el.text = _clean(detail)
    return tc


def build(records: list, properties: dict | None = None) -> ET.Element:
    suite = ET.Element("testsuite", name=SUITE, tests=str(len(records)),
                       failures=str(sum(r["status"] == "fail" for r in records)),
                       errors=str(sum(r["status"] in ("error", "crashed") for r in records)),
                       skipped="0",
                       time=f"{sum(r.get('seconds') or 0 for r in records):.6f}")
    if properties:
        props = ET.SubElement(suite, "properties")
        for k, v in sorted(properties.items()):
            ET.SubElement(props, "property", name=_clean(k), value=_clean(v))
    for rec in records:
        suite.append(testcase(rec))
    root = ET.Element("testsuites")
    root.append(suite)
    return root


def render(records: list, properties: dict | None = None) -> str:
    root = build(records, properties)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path, records: list, properties: dict | None = None):
    return atomic.write_text(path, render(records, properties))
