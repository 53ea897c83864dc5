"""Human-facing output: progress while running, a verdict table after."""
from __future__ import annotations

import sys
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import verdict

STYLE = {"pass": "green", "fail": "red", "error": "magenta", "crashed": "bold red"}


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    # Piped output (logs, CI) gets a wide fixed width instead of rich's 80 columns.
    return Console(stderr=stderr, highlight=False, width=None if stream.isatty() else 160)


@contextmanager
def progress(total: int, label: str = "scenarios"):
    """Yields a callback that advances the bar by one record."""
    bar = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[last]}"), TimeElapsedColumn(),
                   console=console(stderr=True), transient=True)
    with bar:
        task = bar.add_task(label, total=total, last="")
        yield lambda rec: bar.update(task, advance=1, last=f"{rec['status']:7s} {rec['scenario']}")


def worst_text(rec: dict) -> str:
    if rec.get("error"):
        return rec["error"][:60]
    w = verdict.worst(rec["checks"])
    if not w or w.get("worst_error") is None:
        return ""
    return f"{w['name']} {w['worst_error']:.3g} (tol {w['worst_tolerance']:.2g})"


def table(records: list, title: str = "mlx-vjpcheck") -> Table:
    devices = sorted({r["device"] for r in records})
    t = Table(title=title, show_lines=False)
    # Names are the handle for --filter: never cut them.
    t.add_column("scenario", no_wrap=True, min_width=max((len(r["scenario"]) for r in records), default=8))
    for d in devices:
        t.add_column(d)
        t.add_column("worst error", overflow="fold")
    rows = {}
    for r in records:
        rows.setdefault(r["scenario"], {})[r["device"]] = r
    for name, per_dev in rows.items():
        cells = []
        for d in devices:
            r = per_dev.get(d)
            cells += ([f"[{STYLE[r['status']]}]{r['status']}[/]", worst_text(r)] if r else ["-", ""])
        t.add_row(name, *cells)
    return t


def print_summary(records: list, summary: dict, out_dir=None) -> None:
    c = console()
    c.print(table(records))
    c.print(f"{summary['total']} records: {summary['pass']} pass, {summary['fail']} fail, "
            f"{summary['error']} error, {summary['crashed']} crashed"
            + (f"  ->  {out_dir}/results.json" if out_dir else ""))
