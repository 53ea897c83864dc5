"""The campaign: short hypothesis rounds over one op at a time, each locked on
the first defect signature not yet reported and shrunk to a minimal
counterexample.

Ops take turns (Schedule): a smooth weighted round robin, so that every op
gets its first cases early and an op's turns are spread out instead of
clustered (one slow op cannot hold the campaign for a run of cases); a turn
is EXPLORE_CASES evaluated cases. An op's weight is its fuzz_weight, times a
boost (up to BOOST_MAX) while its recent turns keep revealing signatures not
seen before: productive ops get more turns, and none goes without.

A sighting of an unreported defect is parked: its hypothesis choices and its
smallest case. Before each turn, the campaign shrinks the parked sighting that
is most severe, then smallest (the cheapest to shrink), then oldest; while it
defers (DEFER_FRACTION), only first-order wrong values, so that the plain
VJP's silent defects come first however many loud or transform defects a
large op table holds. Afterwards the backlog of other sightings is shrunk
budget-fairly: exploration gets as many cases as those shrinks took before
the next one starts, so the ops still unexplored do not wait for all of it.

A shrink locks on the signature's five parts (op, gradient, oracle, kind,
form) and shrinks freely across the counterexample's features (dtype, rank-0,
zero-size, views: judging/judge.py). It takes no step
to a counterexample larger than the smallest seen (findings.size: what a
reader pays), and ends after SHRINK_CASES evaluated cases, or SHRINK_STALL of
them without a smaller one; then the smallest seen is the finding, marked not
shrunk. The finding is filed under the minimal case's full signature. A later
failure is new unless a known finding with the same five parts needs no
feature it lacks (judge.covered): so a bfloat16-only defect still surfaces
after a strided-only one of the same op and gradient.

Every decision counts cases, never seconds, except the end of deferral at
DEFER_FRACTION of the budget: a fixed seed gives the same sequence of findings
on any machine, and a budget in cases (max_examples) makes the whole set
reproducible.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.errors import HypothesisException, NoSuchExample

from ..judging import judge
from . import database, engine, findings, targets

ROUND_EXAMPLES = 400      # hypothesis's own bound on one round (cache hits included)
EXPLORE_CASES = 4         # evaluated cases in one op's exploration turn
SHRINK_CASES = 150        # evaluated cases allowed for shrinking one finding
SHRINK_STALL = 40         # evaluated cases without a smaller counterexample end a shrink
DEFER_FRACTION = 0.5      # loud defects (shapes, exceptions, crashes) wait this share of the budget
QUIET_CASES = 400         # exploration cases (every op having had a turn) without a new wrong value end deferral
BOOST_MAX = 4             # at most this many times an op's fuzz_weight
BOOST_TURNS = 20          # an op's boost lasts this many of its turns after its last new signature


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
    cases: int = 0          # evaluated (cache misses; the extra executions of confirm() are part of one)
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


class _Yield(BaseException):
    """The op's exploration turn is over (no lock): the next op's turn."""


class Schedule:
    """Which op explores next: a smooth weighted round robin (each op's turns
    spread evenly through the cycle, ties in an order drawn from the seed).
    Weight: the op's fuzz_weight, times 1 + the new signatures it revealed
    (at most BOOST_MAX) while its last one is within BOOST_TURNS of its turns."""

    def __init__(self, ops, seed: int):
        self.order = list(ops)
        random.Random(seed).shuffle(self.order)
        self.base = {op: targets.weight(op) for op in ops}
        self.credit = dict.fromkeys(ops, 0)
        self.turns = dict.fromkeys(ops, 0)
        self.revealed = dict.fromkeys(ops, 0)
        self.last_new = dict.fromkeys(ops, 0)

    def weight(self, op: str) -> int:
        recent = self.turns[op] - self.last_new[op] <= BOOST_TURNS
        return self.base[op] * (min(BOOST_MAX, 1 + self.revealed[op]) if recent else 1)

    def next(self) -> str:
        weights = {op: self.weight(op) for op in self.order}
        for op, w in weights.items():
            self.credit[op] += w
        op = max(self.order, key=self.credit.__getitem__)   # the first of equals in the seed's order
        self.credit[op] -= sum(weights.values())
        self.turns[op] += 1
        return op

    def reward(self, op: str) -> None:
        """Its cases revealed a signature not seen before."""
        self.revealed[op] += 1
        self.last_new[op] = self.turns[op]


class Campaign:
    def __init__(self, run_case, ops, dtypes, seed=0, budget_s=60.0, max_cases=None,
                 db=None, on_event=None, device="cpu"):
        self.run_case, self.ops, self.seed, self.device = run_case, list(ops), seed, device
        self.budget_s, self.max_cases = budget_s, max_cases
        self.db = db if db is not None else database.CampaignDatabase(None)
        self.strategies = targets.per_op(self.ops, dtypes)
        self.schedule = Schedule(self.ops, seed)
        self.on_event = on_event or (lambda kind, payload: None)
        self.stats, self.found, self.cache, self.parked = Stats(), [], {}, {}
        self.defer = True
        self.quiet_ops, self.quiet_cases = set(), 0   # explored since the last new wrong value
        self.owed = 0   # cases exploration is owed for loud shrinks (budget-fair once deferral ends)
        self.keys = {op: database.key([op]) for op in self.ops}
        self.interrupted = False
        # Cases kept by earlier campaigns, replayed in each op's first round: a finding
        # first seen while replaying one is reported as coming from the database.
        self.stored = {op: set(self.db.stored(k)) for op, k in self.keys.items()}
        self.replayed, self.replaying = set(), False

    # -- evaluation ---------------------------------------------------------
    def over_budget(self) -> bool:
        return (self.stats.elapsed() >= self.budget_s
                or (self.max_cases is not None and self.stats.cases >= self.max_cases))

    def evaluate(self, s):
        if s.name in self.cache:
            self.stats.cache_hits += 1
            return self.cache[s.name]
        out = self.run_case(s, self.stats.cases)
        if out.status == "fail" and not out.confirmed:
            out = self.confirm(s, out)
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

    def confirm(self, s, out):
        """A failure no confirming oracle made gets two more chances to be
        confirmed, each an execution whose record is the evidence if a confirming
        oracle flags it: the call once more (a call whose values change between
        identical executions reads memory it does not own), then its float32 twin
        (engine.float32_twin: a half-precision bound too wide to confirm). If
        neither is, the first stays, unconfirmed."""
        for case in (s, engine.float32_twin(s)):
            if case is not None:
                again = self.run_case(case, self.stats.cases)
                if again.status == "fail" and again.confirmed:
                    return again
        return out

    # -- rounds ---------------------------------------------------------------
    def _settings(self):
        return settings(max_examples=ROUND_EXAMPLES, deadline=None, database=self.db,
                        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                        verbosity=Verbosity.quiet, phases=(Phase.reuse, Phase.generate, Phase.shrink))

    # -- scheduling: silent wrong values first ------------------------------------
    def deferring(self) -> bool:
        """Shapes, exceptions and crashes announce themselves; wrong values do
        not. Until half the budget is spent (or every op has explored, QUIET_CASES
        cases in all, without a new wrong value), new loud defects are noted and
        parked instead of shrunk."""
        half = self.stats.elapsed() < self.budget_s * DEFER_FRACTION and (
            self.max_cases is None or self.stats.cases < self.max_cases * DEFER_FRACTION)
        return self.defer and half

    def silent_new(self, sig: str, known: set) -> bool:
        """A first-order wrong value (the plain VJP against the float64 reference)
        of a class (op, oracle, kind, call form) not reported yet for any gradient."""
        return (_kind(sig) == "wrong-value" and _oracle(sig) in FIRST_ORDER
                and _klass(sig) not in {_klass(k) for k in known})

    def urgent(self, sig: str, known: set) -> bool:
        """Shrunk now: a new first-order wrong value; everything else, the
        transforms' wrong values included, once deferral is over."""
        return not self.deferring() or self.silent_new(sig, known)

    def note(self, op: str, sig: str, out, known: set) -> None:
        """Park a sighting of an unreported defect: its hypothesis choices (to
        replay and shrink later) and its case; a smaller sighting replaces both,
        so the shrink starts from the smallest."""
        p = self.parked.get(sig)
        if p is None:
            data = choices_of_current_case()
            self.parked[sig] = {"op": op, "data": data, "out": out, "t": self.stats.elapsed(),
                                "cases": self.stats.cases,
                                "from_database": self.replaying and data in self.stored[op]}
            self.schedule.reward(op)
            if self.silent_new(sig, known):
                self.quiet_ops, self.quiet_cases = set(), 0
            self.on_event("hit", out)
        elif findings.size(out.scenario) < findings.size(p["out"].scenario):
            p["out"] = out
            p["data"] = choices_of_current_case() or p["data"]

    def next_focus(self, known: set):
        """The parked sighting to shrink next, (signature, op, choices): most
        severe kind first, then the smallest, then the oldest; loud kinds only
        once deferral is over. (None, None, None) when none is due."""
        due = [sig for sig, p in self.parked.items()
               if p["data"] is not None and not judge.covered(sig, known) and self.urgent(sig, known)]
        if not due:
            return None, None, None
        sig = min(due, key=lambda s: (SEVERITY.index(_kind(s)), findings.size(self.parked[s]["out"].scenario),
                                      self.parked[s]["cases"]))
        return sig, self.parked[sig]["op"], self.parked[sig]["data"]

    def explored(self, op: str, cases: int) -> None:
        """An exploration turn without a lock; deferral ends once every op has
        had one, QUIET_CASES cases in all, since the last new wrong value."""
        self.quiet_ops.add(op)
        self.quiet_cases += cases
        if len(self.quiet_ops) == len(self.ops) and self.quiet_cases >= QUIET_CASES:
            self.defer = False

    # -- rounds ---------------------------------------------------------------
    def pick(self, known: set):
        """(focus, op, choices) of the next round: the parked sighting due for a
        shrink, unless exploration is owed cases (a new first-order wrong value is
        never made to wait); else no focus and the schedule's next op."""
        focus, op, data = self.next_focus(known)
        if focus is not None and self.owed > 0 and not self.silent_new(focus, known):
            focus = op = data = None
        return focus, op or self.schedule.next(), data

    def one_round(self, known: set):
        focus, op, data = self.pick(known)
        loud = focus is not None and not self.silent_new(focus, known)
        start = self.stats.cases
        state = {"lock": None, "best": None, "lock_cases": 0, "improved": 0, "choices": None, "start": start}
        shrunk = self.search(op, data, self.condition(op, focus, known, state))
        spent = self.stats.cases - start
        if loud:
            self.owed += spent
        elif focus is None:
            self.owed = max(0, self.owed - spent)
        if state["lock"] is not None:
            if shrunk:   # hypothesis's minimal case, kept for the next campaign
                self.db.keep(self.keys[op], state["choices"])
            return self.finding(state["lock"], state["best"], shrunk, self.stats.elapsed())
        if focus is not None:   # its replay no longer fails that way: it is reported as seen
            self.parked[focus]["data"] = None
        else:
            self.explored(op, spent)
        return None

    def condition(self, op: str, focus, known: set, state: dict):
        """Hypothesis's condition for one round: evaluate the case, park what is
        new, lock on the focus or the first urgent signature, and say whether the
        case is a step of the locked defect's shrink."""
        def check(s):
            st = self.stats
            if state["lock"] is None:
                if self.over_budget():
                    raise _Stop
                if st.cases - state["start"] >= EXPLORE_CASES:
                    raise _Yield
            elif st.cases - state["lock_cases"] >= SHRINK_CASES or st.cases - state["improved"] >= SHRINK_STALL:
                raise _ShrinkCap
            out = self.evaluate(s)
            sig = out.signature
            if sig is None or judge.covered(sig, known):
                return False
            if state["lock"] is None and (sig == focus or self.urgent(sig, known)):
                self.note(op, sig, out, known)
                state.update(lock=sig, lock_cases=st.cases, improved=st.cases)
            if state["lock"] is None or judge.coarse(sig) != judge.coarse(state["lock"]):
                self.note(op, sig, out, known)
                return False
            return self.step(state, out)
        return check

    def search(self, op: str, data, condition) -> bool:
        """One hypothesis run over the op's cases (first replaying `data`, or the
        database's cases in the op's first round); False when its shrink was cut short."""
        rnd = random.Random(self.seed * 1_000_003 + self.stats.rounds)
        self.replaying = op not in self.replayed
        self.replayed.add(op)
        self.db.replay_disk = self.replaying
        self.stats.rounds += 1
        self.db.focus = data
        try:
            find_seeded(self.strategies[op], condition, self._settings(), rnd.getrandbits(64), self.keys[op])
        except (NoSuchExample, _Yield):
            pass
        except (_ShrinkCap, HypothesisException):   # capped, or e.g. a flaky replay: keep what was seen
            return False
        return True

    def step(self, state: dict, out) -> bool:
        """A case of the locked defect: a shrink step unless it is larger than the
        smallest seen (hypothesis would walk away from it: a larger shape can be
        a simpler choice)."""
        best = state["best"]
        size = findings.size(out.scenario)
        if best is not None and size > findings.size(best.scenario):
            return False
        if best is None or size < findings.size(best.scenario):
            state["improved"] = self.stats.cases
        state["best"], state["choices"] = out, choices_of_current_case()
        return True

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
