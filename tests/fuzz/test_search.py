"""The campaign's scheduling, without MLX: every op gets its turns (in weight
proportion, spread out, more while productive), a shrink never steps to a
larger counterexample and stops when it has stopped paying, and a failure no
confirming oracle made is executed once more before it counts as unconfirmed.
Each property is also shown failing on a campaign built to break it."""
import collections
import dataclasses

import pytest
from hypothesis import strategies as st

from mlx_vjpcheck import ops
from mlx_vjpcheck.core import draw as D
from mlx_vjpcheck.core.scenario import Scenario, Tensor
from mlx_vjpcheck.fuzz import engine, findings, search, targets

WRONG = {"oracle": "reference", "gradient": "a", "kind": "wrong-value", "check": "grad:a"}
UNCONFIRMED = {"oracle": "finite_differences", "gradient": "a", "kind": "wrong-value", "check": "fd:directional"}


# --- the schedule --------------------------------------------------------------------

def test_one_cycle_gives_every_op_its_weight_in_turns_spread_out():
    names = targets.names()
    sched = search.Schedule(names, seed=0)
    cycle = sum(targets.weight(op) for op in names)
    picks = [sched.next() for _ in range(cycle)]
    assert collections.Counter(picks) == {op: targets.weight(op) for op in names}
    heavy = max(names, key=targets.weight)
    at = [i for i, op in enumerate(picks) if op == heavy]
    # spread: the heaviest op's turns evenly spaced through the cycle, never two in a row
    gaps = [b - a for a, b in zip(at, at[1:])]
    assert max(gaps) - min(gaps) <= 2 and max(gaps) <= cycle // (targets.weight(heavy) - 1) + 1
    assert all(a != b for a, b in zip(picks, picks[1:]))


def test_the_seed_orders_equals_and_the_same_seed_gives_the_same_turns():
    names = targets.names()
    scheds = [search.Schedule(names, seed) for seed in (0, 0, 1)]
    turns = [[sched.next() for _ in range(200)] for sched in scheds]
    assert turns[0] == turns[1] and turns[0] != turns[2]


def test_a_productive_op_gets_more_turns_until_its_boost_runs_out():
    names = ["abs", "exp", "log"]
    sched = search.Schedule(names, seed=0)
    sched.reward("exp")
    sched.reward("exp")
    first = collections.Counter(sched.next() for _ in range(50))
    assert first["exp"] > first["abs"] + first["log"]      # weight 1 x 3 against 1 and 1
    rest = collections.Counter(sched.next() for _ in range(300))
    assert abs(rest["exp"] - rest["abs"]) <= 2               # boost spent: back to equal shares
    assert min(first.values()) > 0                           # nobody waits it out


# --- campaigns over a made-up defect --------------------------------------------------

def _case(n: int, k: int, seed: int = 0) -> Scenario:
    values = tuple(float(v + seed + 1) for v in range(n + k))
    s = Scenario(name="", op="abs", operands={"a": Tensor(values, (n + k,))}, wrt=("a",), family="unary")
    return D.finish(s).bound(ops.get("abs"))


@st.composite
def _trap(draw):
    """A strategy whose simplest choice is the larger case: `n` shrinks towards 4,
    away from 1 (as a broadcast dimension that shrinks towards the full shape)."""
    return _case(draw(D.choice((4, 1))), draw(D.irange(0, 3)), draw(D.irange(0, 50)))


def _campaign(monkeypatch, fails, seed, run_case=None, max_cases=60, on_event=None):
    monkeypatch.setattr(targets, "per_op", lambda names, dtypes: {op: _trap() for op in names})

    def default(s, n):
        return engine.Outcome(s, "fail", failures=[WRONG]) if fails(s) else engine.Outcome(s, "pass")
    return search.Campaign(run_case or default, ["abs"], {}, seed=seed, budget_s=20.0, max_cases=max_cases,
                           on_event=on_event)


def test_a_shrink_never_trades_a_smaller_counterexample_for_a_simpler_larger_one(monkeypatch):
    sizes = []
    for seed in range(6):
        camp = _campaign(monkeypatch, lambda s: findings.size(s) not in (1, 4), seed)
        (f,) = camp.run()
        assert f.size <= f.first_size
        sizes.append(f.size)
    assert min(sizes) == 2        # n = 1, k = 1: some seed's first sighting had n = 1, and it stayed


def test_negative_control_the_old_step_would_walk_to_the_larger_case(monkeypatch):
    """Without the size rule (every case of the locked class a step) the same
    campaigns end larger than they started: the rule is what the test above sees."""
    def old_step(self, state, out):
        state["best"], state["choices"] = out, search.choices_of_current_case()
        state["improved"] = self.stats.cases
        return True
    monkeypatch.setattr(search.Campaign, "step", old_step)
    grew = 0
    for seed in range(6):
        (f,) = _campaign(monkeypatch, lambda s: findings.size(s) not in (1, 4), seed).run()
        grew += f.size > f.first_size
    assert grew > 0


@pytest.mark.parametrize("stall", [3, 10**6])   # 10**6: the control, a shrink allowed to finish
def test_a_shrink_that_stops_paying_ends_and_says_it_was_not_finished(monkeypatch, stall):
    monkeypatch.setattr(search, "SHRINK_STALL", stall)
    events = []
    # Cases of size 4, failing from i = 500000 up: hypothesis takes many steps down to the
    # least failing value (simpler values), none of them a smaller case.
    same_size = st.builds(lambda i: _case(4, 0, i), st.integers(0, 10**6))
    camp = _campaign(monkeypatch, lambda s: s.operands["a"].values[0] > 500000, 0,
                     on_event=lambda kind, p: events.append(kind), max_cases=40)
    camp.strategies = {"abs": same_size}
    f = camp.run()[0]
    shrink = events[events.index("hit"):events.index("finding")].count("case")
    assert f.size == 4 and f.shrunk == (stall > 3)
    assert (shrink <= 1 + 3) == (stall == 3)        # the locking case, then three without a smaller one


def _loud_rounds(monkeypatch):
    """Round kinds (focus or not, cases spent) of a campaign over four loud defect
    classes, all parked while it defers, shrunk once deferral ends."""
    rounds = []
    pick = search.Campaign.pick

    def logged(self, known):
        focus, op, data = pick(self, known)
        rounds.append([focus is not None, self.stats.cases])
        return focus, op, data
    monkeypatch.setattr(search.Campaign, "pick", logged)

    def loud(s, n):
        gradient = f"g{len(s.operands['a'].values) % 4}"
        return engine.Outcome(s, "fail", failures=[dict(WRONG, gradient=gradient, kind="shape")])
    camp = _campaign(monkeypatch, None, 0, run_case=loud, max_cases=200)
    camp.run()
    ends = [r[1] for r in rounds[1:]] + [camp.stats.cases]
    return [(focus, end - start) for (focus, start), end in zip(rounds, ends) if start >= 100]


@pytest.mark.parametrize("fair", [True, False])   # False: the control, exploration never owed anything
def test_after_deferral_loud_shrinks_take_turns_with_exploration(monkeypatch, fair):
    if not fair:
        monkeypatch.setattr(search.Campaign, "owed", property(lambda self: 0, lambda self, v: None), raising=False)
    rounds = _loud_rounds(monkeypatch)
    shrinks = [i for i, (focus, _) in enumerate(rounds) if focus]
    assert len(shrinks) >= 2
    between = [sum(n for _, n in rounds[a + 1:b]) for a, b in zip(shrinks, shrinks[1:])]
    owed = [rounds[a][1] for a in shrinks[:-1]]
    assert all(e >= o for e, o in zip(between, owed)) == fair


# --- the second execution of an unconfirmed failure -----------------------------------

def _flaky(first: dict, second: dict):
    seen = collections.Counter()

    def run(s, n):
        seen[s.name] += 1
        failure = first if seen[s.name] == 1 else second
        return engine.Outcome(s, "fail", failures=[failure]) if failure else engine.Outcome(s, "pass")
    return run, seen


@pytest.mark.parametrize("second, confirmed", [(WRONG, True), (UNCONFIRMED, False), (None, False)])
def test_an_unconfirmed_failure_counts_only_if_its_second_execution_is_confirmed(monkeypatch, second, confirmed):
    run, seen = _flaky(UNCONFIRMED, second)
    camp = _campaign(monkeypatch, None, 0, run_case=run, max_cases=10)
    found = camp.run()
    assert all(n == 2 for n in seen.values())                # each case executed twice, counted once
    assert camp.stats.cases == len(seen)
    assert bool(found) == confirmed
    assert (camp.stats.unconfirmed == 0) == confirmed
    if confirmed:
        assert found[0].oracle == "reference"                # filed from the execution that showed it


def _bf16(s):
    return D.finish(dataclasses.replace(s, operands={"a": dataclasses.replace(s.operands["a"], dtype="bfloat16")}))\
        .bound(s.info)


@pytest.mark.parametrize("twin_fails", [True, False])   # False: the control, nothing confirms it
def test_a_half_precision_failure_is_confirmed_by_its_float32_twin_only(monkeypatch, twin_fails):
    """bfloat16 cases fail an unconfirming oracle only (deterministically); their
    float32 twins fail the reference or pass."""
    monkeypatch.setattr(targets, "per_op", lambda names, dtypes: {op: _trap().map(_bf16) for op in names})
    ran = collections.Counter()

    def run(s, n):
        ran[s.dtype] += 1
        if s.dtype == "bfloat16":
            return engine.Outcome(s, "fail", failures=[UNCONFIRMED])
        return engine.Outcome(s, "fail", failures=[WRONG]) if twin_fails else engine.Outcome(s, "pass")
    camp = search.Campaign(run, ["abs"], {}, seed=0, budget_s=20.0, max_cases=10)
    found = camp.run()
    assert ran["float32"] > 0 and bool(found) == twin_fails
    if twin_fails:
        f = found[0]
        assert f.scenario["operands"]["a"]["dtype"] == "float32" and f.oracle == "reference"
        assert engine.float32_twin(f.scenario_obj()) is None   # already float32: no twin of a twin
    else:
        assert camp.stats.unconfirmed == camp.stats.cases


def test_a_confirmed_failure_is_not_executed_again(monkeypatch):
    run, seen = _flaky(WRONG, WRONG)
    _campaign(monkeypatch, None, 0, run_case=run, max_cases=10).run()
    assert set(seen.values()) == {1}
