"""The op record: everything the harness knows about one op, on one dataclass
(after PyTorch's OpInfo).

Each op module in `harness/ops/` declares its records in `OPS` and
`harness/ops/__init__.py` lists the modules explicitly. Generic code (catalog,
runner, validator, fuzzer, reproducers, native export) consumes the records
and never names an op itself.

The contract is op-agnostic: an op receives named operands and params.
`reference(inputs, params)` and `reference_vjp(inputs, g, params)` see the
logical operands as float64 (integer operands as int64); `mlx_call(operands,
params)` sees MLX arrays (integer operands as int64 numpy arrays, which the
call converts as MLX wants them). An optional operand absent from a scenario
is absent from `inputs` too.

The MLX call is named as a "module:attr" string, and only imported when a
command runs MLX: it lives in a standalone file (harness/ops/repro/) that a
reproducer embeds as text, so it imports mlx at its top. Everything else on
the record is a plain function reference; none of it imports mlx or
hypothesis at import time, so the validation path needs numpy alone.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, replace
from typing import Callable

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PATH = re.compile(r"^\.*[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class OpInfoError(ValueError):
    """An inconsistent op record (a programming error in an op module)."""


# The oracle of a defect the first-order checks show (reference, finite differences,
# the VJP's status); any other `revealed_by` names a transform oracle of harness/oracles/.
FIRST_ORDER_CHECKS = "first_order"


@dataclass(frozen=True)
class KnownDefect:
    """A known MLX defect of one op, declared on its record (in the spirit of PyTorch
    OpInfo's DecorateInfo / expected failures): the register, the regression corpus,
    the reproducers and the gate are checked against these declarations
    (tests/cases/test_known_defects.py), so knowledge of a defect has one home.

    `tag`: the scenario defect tag, which is also the class of its register entries.
    `when`: the param under which it bites ("param": must be truthy, "!param": must be
    falsy; None: wherever a scenario carries the tag). `revealed_by`: FIRST_ORDER_CHECKS, or the
    transform oracle that alone shows it ("second_order", "vmap", "forward_mode",
    "compile"): a context that does not run that oracle does not expect it. `fatal`: it
    kills the process (only an isolated worker may run a call it bites). `register`:
    its ids in harness/cases/defects.json (empty: the one id "<op>__<tag>"). `unregistered`:
    why the class has no register entry at all (a class only the regression corpus holds);
    it then has corpus entries instead. `rule`: the
    op's tag rule, scenario -> bool, where one function decides which catalog scenarios
    carry the tag (`tag_by_rules` adds it); None where the op's scenarios carry it as
    written."""
    tag: str
    when: str | None = None
    revealed_by: str = FIRST_ORDER_CHECKS
    fatal: bool = False
    register: tuple = ()
    unregistered: str = ""
    rule: Callable | None = field(default=None, compare=False)

    def problems(self):
        if not isinstance(self.tag, str) or not _NAME.match(self.tag):
            yield f"known defect {self.tag!r}: the tag must be a lower-case name"
        if self.when is not None and not (isinstance(self.when, str) and _NAME.match(self.when.lstrip("!"))):
            yield f"known defect {self.tag!r}: when={self.when!r} must be a param name, or '!' and one"
        if not isinstance(self.revealed_by, str) or not _NAME.match(self.revealed_by):
            yield f"known defect {self.tag!r}: revealed_by={self.revealed_by!r} must name an oracle"
        if not isinstance(self.fatal, bool):
            yield f"known defect {self.tag!r}: fatal must be True or False"
        if not isinstance(self.register, tuple) or not all(isinstance(i, str) for i in self.register):
            yield f"known defect {self.tag!r}: register must be a tuple of register ids"
        if not isinstance(self.unregistered, str) or (self.unregistered and self.register):
            yield f"known defect {self.tag!r}: unregistered is the reason it has no register ids"
        if self.rule is not None and not callable(self.rule):
            yield f"known defect {self.tag!r}: rule is not callable"

    def register_ids(self, op: str) -> tuple:
        if self.unregistered:
            return ()
        return self.register or (f"{op}__{self.tag}",)


def tag_by_rules(s, defects):
    """Scenario `s` with the tag of every defect in `defects` whose rule holds for it
    added, in declaration order (the op's catalog passes its scenarios through this)."""
    tags = tuple(d.tag for d in defects if d.rule is not None and d.rule(s))
    return replace(s, defect_tags=tuple(s.defect_tags) + tags) if tags else s


@dataclass(frozen=True, kw_only=True, eq=False)   # compared and hashed by identity
class OpInfo:
    # Identity: the name scenarios use in their `op` field, and one line for listings.
    name: str
    summary: str = ""

    # Call signature. Operands in call order; the differentiable ones (a VJP may be
    # taken with respect to any non-empty subset); integer operands, held fixed and
    # never perturbed (index arrays, quantization codes, masks, offsets); optional
    # operands, which a scenario may leave out (MLX then applies its default).
    operands: tuple
    differentiable: tuple
    integer_operands: tuple = ()
    optional_operands: tuple = ()

    # Catalog forms: every base scenario is expanded into one scenario per
    # (name suffix, params) pair here, e.g. gather_mm's sorted and unsorted
    # calls; () means each scenario appears once, as written.
    variants: tuple = ()
    # Params under which MLX promises the same result (gather_mm: sorted_indices
    # off, the flag being a performance hint): the metamorphic oracle compares.
    equivalent_params: dict = field(default_factory=dict)
    # The known MLX defects of this op, one KnownDefect each (below): the one place
    # that says which tag, when it bites, which oracle shows it, whether it kills the
    # process, and its entries in the defect register. conditional_tags, revealed_by
    # and fatal_tags are read from them.
    known_defects: tuple = ()
    # The ops this project's first patch is about (gather_mm, gather_qmm): the gate
    # holds all of them once one changes (judging/gate_verdict.TARGET).
    first_patch: bool = False

    # The float64 oracle, numpy only: reference(inputs, params) -> Y and
    # reference_vjp(inputs, G, params) -> {operand: gradient}. Without a
    # hand-written VJP, core/numeric.py differentiates the reference (complex step when
    # it is analytic in its floating inputs, else extrapolated central differences),
    # within a stated error bound. `exact`: on the small-integer inputs of the catalog
    # and the strategy, float32 arithmetic is exact (sums of integer products), so the
    # fuzzer may also demand exact zeros wherever the reference is exactly zero.
    reference: Callable
    reference_vjp: Callable | None = None
    analytic: bool = False
    exact: bool = False
    # `multilinear`: linear in each operand separately (matmuls, gathers, scans by sums,
    # convolutions), so along any line the forward is a polynomial of degree <= 2 and a
    # central difference with a large step is exact: the fuzzer's finite-difference
    # oracle runs only for these.
    multilinear: bool = False
    # The rule the reference implements, in one line: the comment a reproducer
    # puts above its expected values.
    rule: str = ""

    # The call under test: "module:attr" of mlx_call(operands, params), in a
    # standalone file (mlx, numpy and the standard library only) that reproducers embed.
    mlx_call: str
    # Optional: the same call for given params as one Python expression over the
    # operands' variable names, call_expression(params, names) -> str, so that a
    # reproducer shows the one MLX call instead of the general call file (a test
    # holds both to the same results).
    call_expression: Callable | None = None

    # Catalog: () -> base scenarios (expanded by `variants`).
    scenarios: Callable | None = None
    # Error inputs (PyTorch OpInfo's idea): () -> scenarios of calls MLX's forward
    # refuses (a shape or dtype it does not take); the catalog runs each with
    # must_refuse set, and the VJP must refuse it too (the "refusal" oracle).
    error_inputs: Callable | None = None

    # Fuzzing: strategy(draw, dtypes) -> Scenario, built from harness.core.draw (which
    # imports hypothesis only when drawing); how often the op is drawn relative to others.
    strategy: Callable | None = None
    fuzz_weight: int = 1

    # Coverage: the MLX primitives (C++ class names, e.g. "GatherMM") whose `vjp`
    # this op's calls exercise; the coverage table counts them against MLX's source.
    primitives: tuple = ()
    # Floating dtypes the op accepts (its catalog and strategy use each), and whether
    # it takes complex64 inputs with a VJP (its reference is then complex128).
    dtypes: tuple = ("float32",)
    complex: bool = False

    # Which transforms compose with the op's call (the transform oracles run only
    # where True): its VJP is differentiable again (second order), it maps over a
    # leading batch axis (vmap), it compiles (mx.compile).
    second_order: bool = True
    vmap: bool = True
    compile: bool = True

    # The native C++ suite implements this op (native/src/mlx_ops.cpp, reference.cpp).
    native: bool = False

    # False: MLX defines no gradient for this op. Its scenarios check the forward, and
    # that asking for a VJP raises (check "no_vjp"): recorded as such, never as a defect.
    # Nothing else (fuzzing, reproducers, mutants) applies.
    has_vjp: bool = True

    def __post_init__(self):
        for problem in self._problems():
            raise OpInfoError(f"OpInfo {self.name!r}: {problem}")

    def _problems(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            yield "field name: lower-case letters, digits and underscores, starting with a letter"
        yield from self._signature_problems()
        yield from self._variant_problems()
        if not callable(self.reference):
            yield "field reference: not callable"
        if self.reference_vjp is not None and not callable(self.reference_vjp):
            yield "field reference_vjp: not callable"
        for name in ("scenarios", "strategy", "call_expression", "error_inputs"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                yield f"field {name}: not callable"
        if not (isinstance(self.mlx_call, str) and _PATH.match(self.mlx_call)):
            yield f"field mlx_call: {self.mlx_call!r} is not a 'module:attr' path"
        yield from self._fuzz_problems()

    def _signature_problems(self):
        ops, diff, ints = tuple(self.operands), tuple(self.differentiable), tuple(self.integer_operands)
        if not ops or len(set(ops)) != len(ops):
            yield "field operands: empty or repeated names"
        if not diff or not set(diff) <= set(ops):
            yield f"field differentiable: {diff} is empty or not among the operands {ops}"
        if not set(ints) <= set(ops) or set(ints) & set(diff):
            yield f"field integer_operands: {ints} must be operands that are not differentiable"
        if not set(self.optional_operands) <= set(ops):
            yield f"field optional_operands: {self.optional_operands} must be operands"
        if diff and diff[0] in self.optional_operands:
            yield "field optional_operands: the first differentiable operand sets the dtype, it cannot be absent"

    def _variant_problems(self):
        for v in self.variants:
            if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)
                    and _NAME.match(v[0]) and isinstance(v[1], dict)):
                yield f"field variants: {v!r} is not a (suffix, params) pair"
        if not isinstance(self.equivalent_params, dict):
            yield "field equivalent_params: must be a dict of params"
        yield from self._defect_problems()

    def _defect_problems(self):
        if not isinstance(self.known_defects, tuple) or \
                not all(isinstance(d, KnownDefect) for d in self.known_defects):
            yield "field known_defects: must be a tuple of KnownDefect"
            return
        for d in self.known_defects:
            yield from (f"field known_defects: {p}" for p in d.problems())
        tags = [d.tag for d in self.known_defects]
        if len(set(tags)) != len(tags):
            yield "field known_defects: a tag is declared twice"
        if not isinstance(self.first_patch, bool):
            yield "field first_patch: must be True or False"

    def _transform_problems(self):
        floats = ("float32", "float16", "bfloat16", "float64")
        if not self.dtypes or not set(self.dtypes) <= set(floats):
            yield f"field dtypes: {self.dtypes!r} must be a non-empty subset of {floats}"
        if not all(isinstance(p, str) and p[:1].isupper() for p in self.primitives):
            yield f"field primitives: {self.primitives!r} must be MLX primitive class names"
        for name in ("complex", "second_order", "vmap", "compile"):
            if not isinstance(getattr(self, name), bool):
                yield f"field {name}: must be True or False"

    def _fuzz_problems(self):
        if not self.has_vjp and self.strategy is not None:
            yield "field has_vjp: an op without a VJP has no fuzz strategy"
        if not isinstance(self.fuzz_weight, int) or self.fuzz_weight < 1:
            yield f"field fuzz_weight: {self.fuzz_weight!r} is not a positive integer"
        if self.strategy is not None and not self.rule:
            yield "field rule: a fuzzed op needs the one-line rule its reproducers quote"

    # --- what generic code asks of a record -------------------------------------------------

    # --- what the known defects say, read the ways the stages ask ------------------------

    @property
    def conditional_tags(self) -> dict:
        """tag -> the param it bites under ("!param": that must be falsy); any other
        tag bites wherever a scenario carries it."""
        return {d.tag: d.when for d in self.known_defects if d.when}

    @property
    def revealed_by(self) -> dict:
        """tag -> the transform oracle that alone shows it; any other tag is shown by
        the first-order checks."""
        return {d.tag: d.revealed_by for d in self.known_defects if d.revealed_by != FIRST_ORDER_CHECKS}

    @property
    def fatal_tags(self) -> tuple:
        """The tags whose defect kills the process: the runner isolates every call
        anyway; tests that run calls in-process skip these."""
        return tuple(d.tag for d in self.known_defects if d.fatal)

    def catalog_scenarios(self) -> list:
        """Its scenarios, then its error inputs marked must_refuse."""
        out = list(self.scenarios()) if self.scenarios else []
        errors = list(self.error_inputs()) if self.error_inputs else []
        return out + [replace(s, must_refuse=True) for s in errors]

    def expects_defect(self, tags, params, oracles=None) -> bool:
        """Whether any of `tags` bites on a call with `params`; with `oracles` (names),
        only the tags those oracles can show (`revealed_by`) count."""
        return any(self._bites(self.conditional_tags.get(t), params) for t in tags
                   if oracles is None or t not in self.revealed_by or self.revealed_by[t] in oracles)

    @staticmethod
    def _bites(condition, params) -> bool:
        if condition is None:
            return True
        if condition.startswith("!"):
            return not params.get(condition[1:])
        return bool(params.get(condition))

    def call_problems(self, s) -> list:
        """What is wrong with a scenario as a call of this op (unknown or missing
        operands, wrt outside the differentiable ones)."""
        out = []
        names = set(s.operands)
        if names - set(self.operands):
            out.append(f"unknown operands {sorted(names - set(self.operands))}")
        missing = set(self.operands) - set(self.optional_operands) - names
        if missing:
            out.append(f"missing operands {sorted(missing)}")
        if not s.wrt or not set(s.wrt) <= set(self.differentiable) & names:
            out.append(f"wrt {list(s.wrt)} is not a non-empty subset of {list(self.differentiable)}")
        return out


def resolve(path: str):
    """Import "module:attr". Relative module paths (".ops.repro.pad") are taken
    relative to this package, which is installed under its own name."""
    module, attr = path.split(":")
    package = __name__.rsplit(".", 2)[0] if module.startswith(".") else None
    return getattr(importlib.import_module(module, package), attr)


def source_file(path: str) -> str:
    """The file a "module:attr" path lives in, without importing it (reproducers
    embed it as text; importing it would import mlx)."""
    import importlib.util
    module = path.split(":")[0]
    package = __name__.rsplit(".", 2)[0] if module.startswith(".") else None
    spec = importlib.util.find_spec(module, package)
    if spec is None or spec.origin is None:
        raise OpInfoError(f"cannot find the source of {path!r}")
    return spec.origin
