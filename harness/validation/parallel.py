"""Re-checking many records on several CPUs: the records of one results file are
cut into contiguous shares, each share is checked in a forked copy of this
process (which already holds the parsed evidence and the catalog table), and
the shares' groups are joined in order, so the output is the one a single
process gives, line for line.

Fork only (Linux): no interpreter start-up, nothing pickled but the findings.
A share whose process dies or says nothing is checked again here; anywhere
fork is not the platform's safe default (macOS, Windows) everything runs here.
"""
from __future__ import annotations

import os
import pickle
import sys

from .groups import Group

MIN_SHARE = 48     # records: below this a fork costs more than it saves


def jobs() -> int:
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def _child(fn, share, write_fd: int) -> None:
    g = Group("share")
    try:
        fn(g, share)
        data = pickle.dumps((g.ok, g.total, g.failures, g.notes))
    except BaseException:   # the parent checks this share again itself
        data = b""
    with os.fdopen(write_fd, "wb") as out:
        out.write(data)


def _fork(fn, share):
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: check, report, leave without running anything of the parent's
        os.close(read_fd)
        code = 0
        try:
            _child(fn, share, write_fd)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int):
    with os.fdopen(read_fd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return None
    return pickle.loads(data)


def run(group: Group, fn, items: list, n_jobs: int | None = None) -> None:
    """fn(group, share) for contiguous shares of items (each in order, the shares in order),
    into `group`, on up to n_jobs processes."""
    n = min(n_jobs or jobs(), max(1, len(items) // MIN_SHARE))
    if n <= 1:
        fn(group, items)
        return
    size = -(-len(items) // n)
    shares = [items[k:k + size] for k in range(0, len(items), size)]
    started = [_fork(fn, share) for share in shares[1:]]
    fn(group, shares[0])   # this process takes the first share meanwhile
    for share, (pid, fd) in zip(shares[1:], started):
        got = _collect(pid, fd)
        if got is None:
            fn(group, share)
            continue
        ok, total, failures, notes = got
        group.ok += ok
        group.total += total
        group.failures += failures
        group.notes += notes
