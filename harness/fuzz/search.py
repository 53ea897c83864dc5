"""The campaign: rounds of hypothesis `find`, each locked on the first defect
signature not yet reported, shrunk to a minimal counterexample.

A round ends when hypothesis returns its minimal example (a finding), when
it runs out of examples (next round, new random stream), or when the time or
case budget is spent. A round locks on the signature's five parts (op,
gradient, oracle, kind, form) and shrinks freely across the counterexample's
features (dtype, rank-0, zero-size, views: judging/judge.py); the finding is
filed under the minimal case's full signature. A later failure is new unless
a known finding with the same five parts needs no feature it lacks
(judge.covered): so a bfloat16-only defect still surfaces after a strided-only
one of the same op and gradient. Shrinking is bounded by a case count, not wall time, so
a fixed seed gives the same sequence of findings on any machine; a budget in
cases (max_examples) makes the whole set reproducible.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.errors import HypothesisException, NoSuchExample

from ..judging import judge
from . import database, findings, targets

ROUND_EXAMPLES = 400      # generated cases per round before a fresh random stream
SHRINK_CASES = 150        # evaluated cases allowed for shrinking one finding
DEFER_FRACTION = 0.5      # loud defects (shapes, exceptions, crashes) wait this share of the budget


SEVERITY = ("wrong-value", "unselected-nonzero", "shape", "other")


def _klass(sig: str) -> str:
    """A signature without its gradient: the same defect seen through another output."""
    parts = sig.split("__")
    return "__".join(parts[:1] + parts[2:])


FIRST_ORDER = ("reference", "exact_zero")   # oracles of the plain VJP's values


def _oracle(sig: str) -> str:
    parts = sig.split("__")
    return parts[2] if len(parts) > 2 else ""


def _kind(sig: str) -> str:
    kind = sig.split("__")[3] if sig.count("__") >= 4 else "other"
    return kind if kind in SEVERITY else "other"


class _Found(Exception):
    pass


def find_seeded(strategy, condition, settings_, seed: int, key: bytes):
    """hypothesis.find, except that a seed does not switch the example database
    off (hypothesis's @seed does): the campaign needs both, a reproducible
    random stream and replay of parked and saved counterexamples."""
    last = []

    @settings_
    @given(strategy)
    def test(v):
        if condition(v):
            last[:] = [v]
            raise _Found

    test._hypothesis_internal_use_seed = seed
    test._hypothesis_internal_database_key = key
    try:
        test()
    except _Found:
        return last[0]
    raise NoSuchExample("no new defect in this round")


def choices_of_current_case():
    """The choice sequence hypothesis drew for the case being evaluated, as
    database bytes (None where this hypothesis version hides it)."""
    try:
        from hypothesis.control import current_build_context
        from hypothesis.database import choices_to_bytes
        return choices_to_bytes(current_build_context().data.choices)
    except Exception:
        return None


class _Stop(BaseException):
    """Budget spent while generating: leave hypothesis at once (not a failure)."""


class _ShrinkCap(BaseException):
    """Shrink budget spent: keep the smallest counterexample seen so far."""


@dataclass
class Stats:
    cases: int = 0          # evaluated (cache misses)
    passed: int = 0
    failed: int = 0
    invalid: int = 0
    unconfirmed: int = 0
    cache_hits: int = 0
    rounds: int = 0
    started: float = field(default_factory=time.monotonic)
    unconfirmed_samples: list = field(default_factory=list)
    # per op: cases, passed, failed, invalid, and the oracles its judged cases went through
    per_op: dict = field(default_factory=dict)

    def count(self, op: str, out) -> None:
        row = self.per_op.setdefault(op, {"cases": 0, "pass": 0, "fail": 0, "invalid": 0, "oracles": []})
        row["cases"] += 1
        row[out.status] = row.get(out.status, 0) + 1
        row["oracles"] = sorted(set(row["oracles"]) | set(out.oracles))

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Campaign:
    def __init__(self, run_case, ops, dtypes, seed=0, budget_s=60.0, max_cases=None,
                 db=None, on_event=None, device="cpu"):
        self.run_case, self.ops, self.seed, self.device = run_case, list(ops), seed, device
        self.budget_s, self.max_cases = budget_s, max_cases
        self.db = db if db is not None else database.CampaignDatabase(None)
        self.strategy = targets.cases(self.ops, dtypes)
        self.on_event = on_event or (lambda kind, payload: None)
        self.stats, self.found, self.cache, self.parked = Stats(), [], {}, {}
        self.defer = True
        self.key = database.key(self.ops)
        self.interrupted = False
        # Cases kept by earlier campaigns: a finding first seen while replaying one
        # of them is reported as coming from the database, not from this search.
        self.stored = set(self.db.stored(self.key))

    # -- evaluation ---------------------------------------------------------
    def over_budget(self) -> bool:
        return (self.stats.elapsed() >= self.budget_s
                or (self.max_cases is not None and self.stats.cases >= self.max_cases))

    def evaluate(self, s):
        if s.name in self.cache:
            self.stats.cache_hits += 1
            return self.cache[s.name]
        out = self.run_case(s, self.stats.cases)
        self.cache[s.name] = out
        st = self.stats
        st.cases += 1
        st.count(s.op, out)
        if out.status == "invalid":
            st.invalid += 1
        elif out.status == "pass":
            st.passed += 1
        else:
            st.failed += 1
            if not out.confirmed:
                st.unconfirmed += 1
                if len(st.unconfirmed_samples) < 20:
                    st.unconfirmed_samples.append({"scenario": s.to_dict(), "failures": out.failures})
        self.on_event("case", out)
        return out

    # -- rounds ---------------------------------------------------------------
    def _settings(self):
        return settings(max_examples=ROUND_EXAMPLES, deadline=None, database=self.db,
                        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                        verbosity=Verbosity.quiet, phases=(Phase.reuse, Phase.generate, Phase.shrink))

    # -- scheduling: silent wrong values first ------------------------------------
    def deferring(self) -> bool:
        """Shapes, exceptions and crashes announce themselves; wrong values do
        not. Until half the budget is spent (or a whole round finds no new wrong
        value), new loud defects are noted and parked instead of shrunk."""
        half = self.stats.elapsed() < self.budget_s * DEFER_FRACTION and (
            self.max_cases is None or self.stats.cases < self.max_cases * DEFER_FRACTION)
        return self.defer and half

    def urgent(self, sig: str, known: set) -> bool:
        """A first-order wrong value (the plain VJP against the float64 reference)
        of a class (op, oracle, kind, call form) not reported yet for any gradient;
        everything else, the transforms' wrong values included, once deferral is
        over: the plain VJP's silent defects come first, however many transform
        findings a large op table also holds."""
        if not self.deferring():
            return True
        return (_kind(sig) == "wrong-value" and _oracle(sig) in FIRST_ORDER
                and _klass(sig) not in {_klass(k) for k in known})

    def note(self, sig: str, out) -> None:
        """Park a sighting of an unreported defect: its hypothesis choices (to
        replay and shrink later) and the smallest case seen (kept if never shrunk)."""
        p = self.parked.get(sig)
        if p is None:
            data = choices_of_current_case()
            self.parked[sig] = {"data": data, "out": out, "t": self.stats.elapsed(),
                                "cases": self.stats.cases,
                                "from_database": self.stats.rounds == 1 and data in self.stored}
            self.on_event("hit", out)
        elif findings.size(out.scenario) < findings.size(p["out"].scenario):
            p["out"] = out

    def next_focus(self, known: set):
        """(signature, choices) of the parked defect to shrink next: most severe
        kind first, then oldest; loud kinds only once deferral is over."""
        order = sorted(self.parked, key=lambda s: SEVERITY.index(_kind(s)))
        for sig in order:
            p = self.parked[sig]
            if not judge.covered(sig, known) and p["data"] is not None and self.urgent(sig, known):
                return sig, p["data"]
        return None, None

    # -- rounds ---------------------------------------------------------------
    def one_round(self, known: set):
        focus, data = self.next_focus(known)
        state = {"lock": None, "last": None, "best": None, "lock_cases": 0, "choices": None}

        def condition(s):
            if state["lock"] is None and self.over_budget():
                raise _Stop
            if state["lock"] is not None and self.stats.cases - state["lock_cases"] > SHRINK_CASES:
                raise _ShrinkCap
            out = self.evaluate(s)
            sig = out.signature
            if sig is None or judge.covered(sig, known):
                return False
            if state["lock"] is None and (sig == focus or self.urgent(sig, known)):
                self.note(sig, out)
                state.update(lock=sig, lock_cases=self.stats.cases)
            if state["lock"] is None or judge.coarse(sig) != judge.coarse(state["lock"]):
                self.note(sig, out)
                return False
            state["last"], state["choices"] = out, choices_of_current_case()
            if state["best"] is None or findings.size(s) < findings.size(state["best"].scenario):
                state["best"] = out
            return True

        rnd = random.Random(self.seed * 1_000_003 + self.stats.rounds)
        self.db.replay_disk = self.stats.rounds == 0
        self.stats.rounds += 1
        self.db.focus = data
        shrunk = True
        try:
            find_seeded(self.strategy, condition, self._settings(), rnd.getrandbits(64), self.key)
            self.db.keep(self.key, state["choices"])
        except NoSuchExample:
            if focus is None:
                self.defer = False   # a whole round without a new wrong value
            return None
        except _ShrinkCap:
            shrunk = False
        except HypothesisException:   # e.g. flaky replay: keep what was seen
            shrunk = False
        if state["lock"] is None:
            return None
        out = state["last"] if shrunk else state["best"]
        return self.finding(state["lock"], out, shrunk, self.stats.elapsed())

    def finding(self, sig, out, shrunk, t_minimal):
        p = self.parked.pop(sig)
        return findings.Finding.from_outcome(
            out, seed=self.seed, round=self.stats.rounds, time_found_s=p["t"], time_minimal_s=t_minimal,
            cases_before=p["cases"], shrunk=shrunk, first_size=findings.size(p["out"].scenario),
            device=self.device, from_database=p["from_database"])

    def run(self) -> list:
        known = set()
        try:
            while not self.over_budget():
                f = self.one_round(known)
                if f is not None:
                    known.add(f.signature)
                    self.found.append(f)
                    self.on_event("finding", f)
        except _Stop:
            pass
        except KeyboardInterrupt:   # keep what was found; the caller writes it and exits 130
            self.interrupted = True
        # Budget spent (or interrupted): defects seen but not shrunk are reported, as seen,
        # plainest first, so that one a plainer sighting accounts for is not reported again.
        for sig in sorted(self.parked, key=lambda s: len(judge.features_of(s))):
            if judge.covered(sig, known):
                continue
            p = self.parked[sig]
            f = self.finding(sig, p["out"], False, p["t"])
            known.add(f.signature)
            self.found.append(f)
            self.on_event("finding", f)
        self.found.sort(key=lambda f: f.time_found_s)
        return self.found
