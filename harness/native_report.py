"""The pristine-vs-patched table, printed with rich."""
from __future__ import annotations

from rich.table import Table

from .report import STYLE, console


def _cell(status) -> str:
    return f"[{STYLE[status]}]{status}[/]" if status in STYLE else "-"


def table(comp: dict) -> Table:
    t = Table(title=f"native: pristine vs patched ({', '.join(comp['units'])})")
    t.add_column("scenario", overflow="fold")
    t.add_column("expects defect")
    t.add_column("pristine")
    t.add_column("patched")
    for r in comp["rows"]:
        t.add_row(r["scenario"], "yes" if r["expects_defect"] else "", _cell(r["pristine"]),
                  _cell(r["patched"]))
    return t


def print_table(comp: dict, out_dir=None) -> None:
    c = console()
    c.print(table(comp))
    for k in comp.get("skipped", []):
        c.print(f"skipped {k['scenario']}: {k['reason']}")
