"""Rich progress for a campaign: cases run, findings, time left."""
from __future__ import annotations

import time
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from .. import report


@contextmanager
def display(budget_s: float, enabled: bool = True):
    """Yields on_event(kind, payload) for search.Campaign."""
    if not enabled:
        yield lambda kind, payload: None
        return
    bar = Progress(TextColumn("[bold]fuzz"), BarColumn(), TextColumn("{task.fields[info]}"),
                   TimeRemainingColumn(), console=report.console(stderr=True), transient=True)
    t0, counts, last = time.monotonic(), {"cases": 0, "findings": 0}, [0.0]
    with bar:
        task = bar.add_task("fuzz", total=budget_s, info="starting")

        def on_event(kind, payload):
            if kind == "case":
                counts["cases"] += 1
            elif kind == "finding":
                counts["findings"] += 1
                bar.console.print(f"[red]finding[/] {payload.signature}  size {payload.size}  "
                                  f"found {payload.time_found_s:.1f}s, minimal {payload.time_minimal_s:.1f}s")
            now = time.monotonic()
            if kind != "case" or now - last[0] > 0.1:
                last[0] = now
                el = now - t0
                bar.update(task, completed=min(el, budget_s),
                           info=f"cases {counts['cases']} ({counts['cases'] / max(el, 1e-9):.0f}/s)  "
                                f"findings {counts['findings']}  left {max(budget_s - el, 0):.0f}s")
        yield on_event
