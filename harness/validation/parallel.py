"""Re-checking many records on several CPUs: the records of one results file are
cut into chunks of consecutive records, forked copies of this process (which
already hold the parsed evidence and the catalog table) and this process take
chunks from one queue until none is left, and the chunks' groups are joined in
chunk order, so the output is the one a single process gives, line for line.

A queue rather than fixed shares: this process may have other work first (the
file's schema check, started.finish below), and a busy machine slows the
processes unevenly; whoever is free takes the next chunk, so no CPU waits for
another's share. The queue is a pipe holding every chunk's number, written
before the fork; a read of one number is atomic (the pipe's lock is held for the
whole read), and the join trusts none of it: a chunk nobody reported, reported
twice or out of range is checked here, in order.

Fork only (Linux): no interpreter start-up, nothing pickled but the findings.
A chunk whose process dies, raises or says nothing is checked again here (where
an exception then stops the checks where a single process would stop them);
anywhere fork is not the platform's safe default (macOS, Windows) everything
runs here.
"""
from __future__ import annotations

import os
import pickle
import signal
import struct
import sys

from .groups import Group

MIN_SHARE = 48     # records per process: below this a fork costs more than it saves
CHUNK = 64         # records per chunk (records.py checks this many together)
MAX_CHUNKS = 4096  # their numbers fill at most 16 KiB of the pipe, written before the fork
_NUMBER = struct.Struct("<I")


def jobs() -> int:
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def _chunks(items: list) -> list:
    size = max(CHUNK, -(-len(items) // MAX_CHUNKS))
    return [items[k:k + size] for k in range(0, len(items), size)]


def _take(queue_fd: int):
    """The next chunk's number from the queue, or None when it is empty."""
    data = os.read(queue_fd, _NUMBER.size)
    return _NUMBER.unpack(data)[0] if len(data) == _NUMBER.size else None


def _check(fn, chunk) -> tuple:
    """(group, exception or None) of one chunk checked here."""
    g = Group("chunk")
    try:
        fn(g, chunk)
    except Exception as e:   # the records before it count; the join raises it in order
        return g, e
    return g, None


def _child(fn, chunks: list, queue_fd: int, write_fd: int, report) -> None:
    done = []
    while (k := _take(queue_fd)) is not None:
        if not 0 <= k < len(chunks):
            break
        g, error = _check(fn, chunks[k])
        if error is not None:   # the parent checks it again and raises there
            break
        done.append((k, g.ok, g.total, g.failures, g.notes))
    with os.fdopen(write_fd, "wb") as out:
        out.write(pickle.dumps((done, report() if report is not None else None)))


def _fork(fn, chunks: list, queue_fd: int, report=None):
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: check, report, leave without running anything of the parent's
        os.close(read_fd)
        code = 0
        try:
            _child(fn, chunks, queue_fd, write_fd, report)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> tuple:
    """What one child reported: ([(chunk, ok, total, failures, notes)], its report), ([], None)
    when it failed."""
    with os.fdopen(read_fd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return [], None
    try:
        done, report = pickle.loads(data)
        return list(done), report
    except Exception:
        return [], None


class Started:
    """Checks of a list of items under way: the other processes already take chunks;
    finish(group) takes part, then joins everything into `group` in order. `report`, when
    given, is called in each other process once its chunks are done, and what it returns
    (picklable) is in `reports` after finish, one per process that ended well."""

    def __init__(self, fn, items: list, n_jobs: int | None = None, report=None):
        self.fn, self.items, self.report, self.reports = fn, items, report, []
        self.chunks, self.children, self.queue = None, [], None
        n = min(n_jobs or jobs(), max(1, len(items) // MIN_SHARE))
        if n > 1:
            self._start(n)

    def _start(self, n: int) -> None:
        self.chunks = _chunks(self.items)
        read_fd, write_fd = os.pipe()
        os.write(write_fd, b"".join(_NUMBER.pack(k) for k in range(len(self.chunks))))
        os.close(write_fd)   # the queue ends where the numbers end
        self.queue = read_fd
        self.children = [_fork(self.fn, self.chunks, read_fd, self.report) for _ in range(n - 1)]

    def finish(self, group: Group) -> None:
        """Check what is left, then join every chunk's group into `group` in order; the
        first exception of a chunk is raised after the records before it are joined."""
        if self.chunks is None:
            self.fn(group, self.items)
            return
        mine = {}
        while (k := _take(self.queue)) is not None:
            mine[k] = _check(self.fn, self.chunks[k])
            if mine[k][1] is not None:
                break
        self._close_queue()
        got = {}
        for pid, fd in self.children:
            done, report = _collect(pid, fd)
            for k, ok, total, failures, notes in done:
                got.setdefault(k, (ok, total, failures, notes))
            if report is not None:
                self.reports.append(report)
        self.children = []
        for k, chunk in enumerate(self.chunks):
            _join(group, k, chunk, mine, got, self.fn)

    def cancel(self) -> None:
        """Stop the other processes (the items turned out not to be checked)."""
        for pid, fd in self.children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            os.close(fd)
            os.waitpid(pid, 0)
        self.children = []
        self._close_queue()

    def _close_queue(self) -> None:
        if self.queue is not None:
            os.close(self.queue)
            self.queue = None


def _join(group: Group, k: int, chunk: list, mine: dict, got: dict, fn) -> None:
    """Chunk k's group into `group` (checked here when nobody else did)."""
    error = None
    if k in got:
        ok, total, failures, notes = got[k]
    else:
        g, error = mine[k] if k in mine else _check(fn, chunk)
        ok, total, failures, notes = g.ok, g.total, g.failures, g.notes
    group.ok += ok
    group.total += total
    group.failures += failures
    group.notes += notes
    if error is not None:
        raise error


def start(fn, items: list, n_jobs: int | None = None, report=None) -> Started:
    """fn(group, chunk) for chunks of consecutive items, started on the other processes."""
    return Started(fn, items, n_jobs, report)


def run(group: Group, fn, items: list, n_jobs: int | None = None) -> None:
    """fn(group, chunk) for chunks of consecutive items (each in order, the chunks in order),
    into `group`, on up to n_jobs processes."""
    start(fn, items, n_jobs).finish(group)
