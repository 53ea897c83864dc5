"""The table printed after a campaign."""
from __future__ import annotations

from rich.table import Table

from .. import report


def print_summary(result: dict, out_dir) -> None:
    c = report.console()
    st = result["campaign"]["stats"]
    t = Table(title="mlx-vjpcheck fuzz findings")
    for col in ("signature", "oracles", "size", "found s", "minimal s"):
        t.add_column(col, overflow="fold")
    for f in result["findings"]:
        t.add_row(f.signature, ",".join(f.oracles), str(f.size), f"{f.time_found_s:.1f}",
                  f"{f.time_minimal_s:.1f}" + ("" if f.shrunk else " (shrink capped)"))
    c.print(t)
    c.print(f"{len(result['findings'])} findings from {st['cases']} cases "
            f"({st['cases_per_s']} cases/s, {st['invalid']} rejected by the forward, "
            f"{st['unconfirmed']} unconfirmed by the reference) in {st['elapsed_s']:.1f}s"
            f"  ->  {out_dir}/findings.json")
