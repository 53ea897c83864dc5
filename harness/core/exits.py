"""How a process ended, as text: the one place that reads an exit status (a negative
status is the signal that ended it, as subprocess reports it). These texts are part
of records and signatures ("process died (signal SIGSEGV)", the fuzz signature
"crash-signal-SIGSEGV", a probe's "killed by SIGABRT"), so each caller keeps the
words it has always used and passes them in."""
from __future__ import annotations

import signal


def exit_text(rc: int, code: str = "exit code", killed: str = "signal") -> str:
    """`killed` and the signal's name when a signal ended the process ("signal
    SIGSEGV"; a number Python does not name: "signal 99"), else `code` and the status."""
    if rc >= 0:
        return f"{code} {rc}"
    try:
        name = signal.Signals(-rc).name
    except ValueError:
        name = f"signal {-rc}"
        if killed == "signal":
            return name
    return f"{killed} {name}"


def died(rc: int, stderr: str, what: str = "process", how: str | None = None) -> str:
    """A dead process in one line: how it ended (`how`, else its exit status) and the
    last line of its stderr."""
    tail = stderr.strip().splitlines()[-1:] if stderr.strip() else []
    return f"{what} died ({how or exit_text(rc)})" + (f": {tail[0][:300]}" if tail else "")
