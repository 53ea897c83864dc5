"""Human-facing output, all of it rich: progress while running, tables after.

The run table, the native pristine-vs-patched table, the fuzz progress and
findings table. Only the command line imports this module. Every text that
comes from MLX, from a file or from a scenario name goes through `escape`:
rich would read "[scatter_add_axis]" as markup and drop it, and a terminal
would obey an ANSI sequence or a bidirectional override in it (evidence/text.py
writes those as escapes). Consoles are made with emoji codes off, so
"twice:scales:" stays text.
"""
from __future__ import annotations

import math
import os
import sys
import time
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from ..core import verdict
from ..evidence.text import visible

STYLE = {"pass": "green", "fail": "red", "error": "magenta", "crashed": "bold red"}


def escape(text) -> str:
    """Untrusted text for a rich console: control and bidi characters escaped, markup inert."""
    return _markup_escape(visible(text))


def console(stderr: bool = False) -> Console:
    """A terminal gets its own width and $COLUMNS is obeyed; other piped output
    (logs, CI) gets 120 columns instead of rich's 80."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS", "").isdigit() else 120
    return Console(stderr=stderr, highlight=False, width=width, emoji=False)


def number(x, digits: int = 3) -> str:
    """A float for a table cell: NaN and infinities shown as such, never blank."""
    if x is None:
        return "-"
    x = float(x)
    return f"{x:.{digits}g}" if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


@contextmanager
def progress(total: int, label: str = "scenarios"):
    """Yields a callback that advances the bar by one record."""
    bar = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[last]}"), TimeElapsedColumn(),
                   console=console(stderr=True), transient=True)
    with bar:
        task = bar.add_task(label, total=total, last="")
        yield lambda rec: bar.update(task, advance=1, last=escape(f"{rec['status']!s:7s} {rec['scenario']}"))


def worst_text(rec: dict) -> str:
    """The error MLX raised, or the worst check: error and tolerance, or why it failed."""
    if rec.get("error"):
        return escape(rec["error"][:80])
    w = verdict.worst(rec["checks"])
    if not w:
        return ""
    if w.get("worst_error") is None:
        return escape(f"{w['name']}: {w.get('reason', '')}")
    return escape(f"{w['name']} {number(w['worst_error'])} (tol {number(w['worst_tolerance'], 2)})")


def table(records: list, title: str = "mlx-vjpcheck") -> Table:
    devices = sorted({r["device"] for r in records})
    t = Table(title=title, show_lines=False)
    # Names are the handle for --filter: never cut them.
    t.add_column("scenario", overflow="fold", ratio=3)
    for d in devices:
        t.add_column(d)
        t.add_column("worst error", overflow="fold", ratio=2)
    rows = {}
    for r in records:
        rows.setdefault(r["scenario"], {})[r["device"]] = r
    for name, per_dev in rows.items():
        cells = []
        for d in devices:
            r = per_dev.get(d)
            cells += ([f"[{STYLE[r['status']]}]{r['status']}[/]", worst_text(r)] if r else ["-", ""])
        t.add_row(escape(name), *cells)
    return t


def print_summary(records: list, summary: dict, out_dir=None) -> None:
    c = console()
    c.print(table(records))
    c.print(f"{summary['total']} records: {summary['pass']} pass, {summary['fail']} fail, "
            f"{summary['error']} error, {summary['crashed']} crashed"
            + (f"  ->  {out_dir}/results.json" if out_dir else ""))


# --- native: pristine vs patched ---------------------------------------------

def _cell(status) -> str:
    return f"[{STYLE[status]}]{status}[/]" if status in STYLE else "-"


def native_table(comp: dict) -> Table:
    t = Table(title=escape(f"native: pristine vs patched ({', '.join(comp['units'])})"))
    t.add_column("scenario", overflow="fold")
    t.add_column("expects defect")
    t.add_column("pristine")
    t.add_column("patched")
    for r in comp["rows"]:
        t.add_row(escape(r["scenario"]), "yes" if r["expects_defect"] else "", _cell(r["pristine"]),
                  _cell(r["patched"]))
    return t


def print_native(comp: dict) -> None:
    c = console()
    c.print(native_table(comp))
    for k in comp.get("skipped", []):
        c.print(escape(f"skipped {k['scenario']}: {k['reason']}"))


# --- fuzz -------------------------------------------------------------------------

@contextmanager
def fuzz_progress(budget_s: float):
    """Yields on_event(kind, payload) for fuzz.search.Campaign."""
    bar = Progress(TextColumn("[bold]fuzz"), BarColumn(), TextColumn("{task.fields[info]}"),
                   TimeRemainingColumn(), console=console(stderr=True), transient=True)
    t0, counts, last = time.monotonic(), {"cases": 0, "findings": 0}, [0.0]
    with bar:
        task = bar.add_task("fuzz", total=budget_s, info="starting")

        def on_event(kind, payload):
            if kind == "case":
                counts["cases"] += 1
            elif kind == "finding":
                counts["findings"] += 1
                bar.console.print("[red]finding[/] " + escape(
                    f"{payload.signature}  size {payload.size}  found {payload.time_found_s:.1f}s, "
                    f"minimal {payload.time_minimal_s:.1f}s"))
            now = time.monotonic()
            if kind != "case" or now - last[0] > 0.1:
                last[0] = now
                el = now - t0
                bar.update(task, completed=min(el, budget_s),
                           info=f"cases {counts['cases']} ({counts['cases'] / max(el, 1e-9):.0f}/s)  "
                                f"findings {counts['findings']}  left {max(budget_s - el, 0):.0f}s")
        yield on_event


def print_fuzz(result: dict, out_dir) -> None:
    c = console()
    st = result["campaign"]["stats"]
    t = Table(title="mlx-vjpcheck fuzz findings")
    for col in ("signature", "oracles", "size", "found s", "minimal s"):
        t.add_column(col, overflow="fold")
    for f in result["findings"]:
        t.add_row(escape(f.signature), ",".join(f.oracles), str(f.size), f"{f.time_found_s:.1f}",
                  f"{f.time_minimal_s:.1f}" + ("" if f.shrunk else " (shrink capped)"))
    c.print(t)
    c.print(f"{len(result['findings'])} findings from {st['cases']} cases "
            f"({st['cases_per_s']} cases/s, {st['invalid']} rejected by the forward, "
            f"{st['unconfirmed']} unconfirmed by the reference) in {st['elapsed_s']:.1f}s"
            f"  ->  {out_dir}/findings.json")


# --- replay -----------------------------------------------------------------------------

def print_replay(outcomes: list) -> None:
    c = console()
    t = Table(title="mlx-vjpcheck replay")
    for col, kw in (("record", {"ratio": 3}), ("device", {}), ("recorded", {}), ("now", {}),
                    ("reproduced", {"ratio": 2})):
        t.add_column(col, overflow="fold", **kw)
    for o in outcomes:
        now = "/".join(sorted({str(m.get("status")) for m in o.measurements})) or "-"
        if o.reproduced:
            cell = "[green]yes[/]" + (escape(f" (nondeterministic here: {', '.join(o.varying)})")[:200]
                                      if o.varying else "")
        else:
            cell = "[red]NO[/] " + escape("; ".join(o.problems)[:300])
        t.add_row(escape(o.item.name), escape(o.item.device), escape(o.item.recorded.get("status")),
                  escape(now), cell)
    c.print(t)
    for o in outcomes:   # one plain line each, whatever the table folded
        if not o.reproduced:
            c.print(escape(f"NOT reproduced: {o.item.name} on {o.item.device}: {'; '.join(o.problems)}"),
                    soft_wrap=True)
    bad = sum(not o.reproduced for o in outcomes)
    c.print(f"{len(outcomes) - bad} of {len(outcomes)} records reproduced" + (f"; {bad} did not" if bad else ""))


if __name__ == "__main__":
    print("cli/terminal.py is the command line's output module, not a program: run `mlx-vjpcheck --help`",
          file=sys.stderr)
    sys.exit(2)
