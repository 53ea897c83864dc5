"""The published JSON Schemas (harness/evidence/schemas/): valid draft 2020-12
documents, followed by what the writers write, and the validator's own checker
(validation/schema.py) agreeing with the `jsonschema` package on them and on
mutations of them."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import helpers.evidence_fixtures as fx
from mlx_vjpcheck.evidence import strict
from mlx_vjpcheck.validation import evidence, schema

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

SCHEMAS = sorted(p.name for p in schema.SCHEMA_DIR.glob("*.schema.json"))


def _registry():
    docs = {name: schema.document(name) for name in SCHEMAS}
    resources = [(doc["$id"], referencing.Resource.from_contents(doc)) for doc in docs.values()]
    resources += [(name, referencing.Resource.from_contents(doc)) for name, doc in docs.items()]
    return referencing.Registry().with_resources(resources)


def reference_errors(name: str, raw) -> list:
    """What the jsonschema package says of raw JSON (non-finite numbers still tagged)."""
    v = jsonschema.Draft202012Validator(schema.document(name), registry=_registry())
    return [e.message for e in v.iter_errors(raw)]


def ours(name: str, raw_text: bytes):
    return schema.problem(name, strict.loads(raw_text))


@pytest.mark.parametrize("name", SCHEMAS)
def test_each_schema_is_a_valid_2020_12_schema(name):
    jsonschema.Draft202012Validator.check_schema(schema.document(name))
    schema.validator(name)   # and our checker knows every keyword it uses


def test_every_evidence_kind_has_a_schema_file():
    assert {k.schema for k in evidence.KINDS} <= set(SCHEMAS)


def test_an_unknown_keyword_in_a_schema_is_refused():
    with pytest.raises(schema.SchemaFileError):
        schema._Compiler().compile({"type": "object", "maxProperties": 3}, "test")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("schemas")
    dirs = [fx.run_dir(root / "run"), fx.native_dir(root / "native"), fx.fuzz_dir(root / "fuzz"),
            fx.versions_dir(root / "versions")]
    out = []
    for d in dirs:
        for p in sorted(d.rglob("*.json")):
            kind = evidence.kind_of(p.relative_to(d).as_posix())
            out.append((kind.schema, p.read_bytes()))
    return out


def test_what_the_writers_write_follows_the_schemas(written):
    assert len({name for name, _ in written}) >= 8
    for name, raw in written:
        assert ours(name, raw) is None
        assert reference_errors(name, json.loads(raw)) == []


def _mutations(doc):
    """Edits a writer never makes: a wrong top-level type, a missing required field, an
    unknown top-level field, a wrong type one level down."""
    yield "top-level list" if isinstance(doc, dict) else "top-level object", \
        ([doc] if isinstance(doc, dict) else {"items": doc})
    if isinstance(doc, dict) and doc:
        first = sorted(doc)[0]
        yield f"without {first}", {k: v for k, v in doc.items() if k != first}
        yield "unknown field", dict(doc, unexpected_field_xyz=1)
    if isinstance(doc, list) and doc and isinstance(doc[0], dict):
        bad = copy.deepcopy(doc)
        bad[0][sorted(bad[0])[0]] = {"not": "this"}
        yield "an entry's field of another type", bad


def test_our_checker_and_jsonschema_reject_the_same_mutations(written):
    checked = 0
    for name, raw in written:
        doc = json.loads(raw)
        for what, bad in _mutations(doc):
            text = json.dumps(bad).encode()
            theirs, mine = reference_errors(name, bad), ours(name, text)
            assert bool(theirs) == bool(mine), (name, what, theirs[:1], mine)
            checked += 1
    assert checked > 20


def test_a_schema_problem_is_one_line_naming_the_place():
    why = ours("findings-index.schema.json", b'{"findings": []}')
    assert why == "does not follow findings-index.schema.json at /: {'findings': []} is not array"
    why = ours("results.schema.json", json.dumps({"schema": "mlx-vjpcheck/results/3"}).encode())
    assert "required field" in why and "\n" not in why


def test_nonfinite_numbers_follow_the_number_definition():
    ok = b'{"nonfinite": "nan"}'
    assert ours("common.schema.json", b"{}") is None
    assert schema.problem("results.schema.json", strict.loads(ok)) is not None   # not a results file
    assert reference_errors("common.schema.json", json.loads(ok)) == []
    mine = schema._Compiler().ref("common.schema.json#/$defs/number", "common.schema.json")
    assert mine(strict.loads(ok)) is None and mine({"nonfinite": "bogus"}) is not None
    assert mine(True) is not None   # a boolean is not a number


def test_the_shipped_schema_files_are_what_the_package_data_ships():
    # pyproject's package-data must carry them (tests/test_packaging.py builds the wheel)
    assert Path(schema.SCHEMA_DIR).name == "schemas" and len(SCHEMAS) >= 15
