"""This validator's own catalog, for binding and recomputation: each scenario's
canonical text (by its SHA-256), the catalog digest, and each scenario's float64
expected values.

Building it means building the catalog and running every reference (most of a
validation's time), and the result depends on nothing but this package's code,
numpy and the plugins named in $MLX_VJPCHECK_PLUGINS. So it is kept in the
cache ($MLX_VJPCHECK_CACHE/validator/, see core/resources.py) under a key made
of exactly those: the bytes of every .py file of the package and of every
plugin module, the versions of the package, numpy and Python. Nothing from the
evidence enters the key or the table, so no recorded field can select or skip
what is recomputed; a record's scenario either is, byte for byte, a catalog
scenario (its expected values come from the table) or it is recomputed.
A table that cannot be read is rebuilt; one that cannot be written is used in
memory only.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMAT = 5   # the layout of the cached files (a change rebuilds them)
# What else a catalog record's rechecks re-derive, kept beside the expected values
# under these names: the direction-dependent values of the second-order and
# forward-mode oracles along the direction a `run` record's seed gives
# (oracles/directions.py DIRECTION_SEED), and the half-precision accumulation bound. A
# record with another seed, or a scenario not byte for byte the catalog's, is recomputed.
JU, HU = "@ju", "@hu:"
PACKAGE = Path(__file__).resolve().parents[1]


def canonical(scenario_dict: dict) -> str:
    """The text a scenario is compared and hashed by (the catalog digest's form)."""
    return json.dumps(scenario_dict, sort_keys=True, separators=(",", ":"))


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def form_hash(scenario_dict: dict) -> str | None:
    """The sha256 of a parsed scenario's marshal form (version 2: every type, key order and
    float bit exactly, nothing shared), None when it has none. For parsed JSON only (str,
    int, float, bool, None, lists, dicts: marshal would write any buffer, a numpy array too,
    as bytes). Equal forms have equal canonical texts (the text is a function of what the
    form fixes), so a form known to be a catalog scenario's names that scenario's text hash
    without the text being written: floats written as text were most of a validation's cost
    of telling scenarios apart. The converse does not hold (keys in another order, another
    NaN): those take the text."""
    try:
        return hashlib.sha256(marshal.dumps(scenario_dict, 2)).hexdigest()
    except ValueError:   # something marshal does not write: only the text tells
        return None


def read_form(scenario) -> dict:
    """A scenario as a results file holds it after the parse: written as the runner writes
    it (core/jsonio, keys sorted), read back."""
    from ..core import jsonio
    return jsonio.loads(jsonio.dumps(scenario.to_dict(), sort_keys=True))


@dataclass
class Table:
    digest: str        # catalog.digest() of this package's catalog
    names: list        # catalog order
    hashes: dict       # name -> sha256 of the scenario's canonical text
    expected: dict     # sha256 of canonical text -> {key: array} (float64; derived values under JU, HU)
    accumulation: dict = None   # sha256 -> the accumulation records (JSON-able), where there are any
    # sha256 of every catalog text that reads back to itself (Scenario.from_dict, then to_dict):
    # a record's scenario with such a text is in the writers' form without a round trip of its own
    round_trips: frozenset = frozenset()
    # form_hash of each catalog scenario as a results file holds it -> its text hash
    forms: dict = None

    def known(self, scenario_dict: dict) -> str | None:
        """The text hash of a parsed scenario whose form is a catalog scenario's, else None."""
        if not self.forms:
            return None
        form = form_hash(scenario_dict)
        return None if form is None else self.forms.get(form)

    def is_catalog(self, key: str) -> bool:
        """Whether this text hash is a catalog scenario's text in the writers' form."""
        return key in self.round_trips

    def prefill(self, key: str) -> dict:
        """The rechecks' memo for a catalog scenario: what the table already holds."""
        from ..oracles.directions import DIRECTION_SEED as seed
        arrays, out = self.expected.get(key) or {}, {}
        if JU in arrays:
            out[("ju", seed)] = arrays[JU]
        hu = {k[len(HU):]: v for k, v in arrays.items() if k.startswith(HU)}
        if hu:
            out[("hu", seed)] = hu
        if self.accumulation is not None and key in self.accumulation:
            out[("acc",)] = self.accumulation[key]
        return out

    def values(self, key: str):
        """The expected values alone (None when the scenario is not in the table)."""
        arrays = self.expected.get(key)
        return None if arrays is None else {k: v for k, v in arrays.items() if not k.startswith("@")}


def _code_key() -> str:
    from .. import __version__
    from ..core import plugins
    h = hashlib.sha256(f"{FORMAT} {__version__} {np.__version__} {sys.version}".encode())
    files = sorted(PACKAGE.rglob("*.py"))
    for name in plugins.names():
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            files.append(Path(module.__file__))
        h.update(f"plugin {name}".encode())
    for f in files:
        h.update(str(f.relative_to(PACKAGE) if f.is_relative_to(PACKAGE) else f).encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def _derived(s, exp: dict) -> tuple:
    """(arrays under JU / HU, accumulation records) for one catalog scenario; what the
    reference cannot decide is left out (recomputed per record, where it fails as a check)."""
    from ..core import numeric, references
    from ..oracles.directions import DIRECTION_SEED
    arrays, acc = {}, None
    try:
        acc = references.accumulation(s, exp) or None
    except Exception:
        pass
    if s.must_refuse or not s.info.has_vjp or s.objective != "vjp":
        return arrays, acc
    u = references.direction(s, DIRECTION_SEED)
    try:
        arrays[JU] = np.asarray(references.directional(s, u))
        if s.info.reference_vjp is not None and s.info.second_order:
            hu = references.hvp(s, references.cotangent(s, exp["forward"]), u)
            arrays.update({HU + n: np.asarray(v) for n, v in hu.items()})
    except (numeric.ReferenceUndecided, ValueError, TypeError, IndexError):
        pass
    return arrays, acc


def _reads_back(text: str) -> bool:
    """Whether a scenario's canonical text is what Scenario.to_dict writes for it when read."""
    from ..core.scenario import Scenario
    try:
        return canonical(Scenario.from_dict(json.loads(text)).to_dict()) == text
    except (ValueError, TypeError, KeyError):
        return False


def _build() -> Table:
    from ..cases import catalog, expected
    scenarios = catalog.catalog()
    names, hashes, exp, accs, round_trips, forms = [], {}, {}, {}, set(), {}
    for s in scenarios:
        text = canonical(s.to_dict())
        key = text_hash(text)
        names.append(s.name)
        hashes[s.name] = key
        form = form_hash(read_form(s))
        if form is not None and text_hash(canonical(read_form(s))) == key:
            forms[form] = key
        if _reads_back(text):
            round_trips.add(key)
        try:
            values = {k: np.asarray(v) for k, v in expected.expected(s).items()}
        except Exception:   # undecided or broken: recomputed per record, where it fails as a check
            continue
        arrays, acc = _derived(s, values)
        exp[key] = {**values, **arrays}
        if acc:
            accs[key] = acc
    return Table(catalog.digest(scenarios), names, hashes, exp, accs, frozenset(round_trips), forms)


def _folder() -> Path:
    from ..core import resources
    return resources.cache_root() / "validator"


def _save(table: Table, path: Path) -> None:
    """index.json + one .npy of real and one of complex values, written beside and renamed:
    a reader sees all or nothing. Each array keeps its own dtype and shape."""
    layout, parts, offsets = [], {"real": [], "complex": []}, {"real": 0, "complex": 0}
    for key, arrays in table.expected.items():
        for name, a in arrays.items():
            buf = "complex" if np.iscomplexobj(a) else "real"
            layout.append([key, name, buf, offsets[buf], list(a.shape), a.dtype.str])
            parts[buf].append(a.ravel())
            offsets[buf] += a.size
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".table-", dir=path.parent))
    for buf, dtype in (("real", np.float64), ("complex", np.complex128)):
        np.save(tmp / f"{buf}.npy", np.concatenate(parts[buf]).astype(dtype) if parts[buf] else np.zeros(0, dtype))
    (tmp / "index.json").write_text(json.dumps({"format": FORMAT, "digest": table.digest, "names": table.names,
                                                "hashes": table.hashes, "layout": layout,
                                                "accumulation": table.accumulation or {},
                                                "round_trips": sorted(table.round_trips),
                                                "forms": table.forms or {}}))
    try:
        os.replace(tmp, path)
    except OSError:   # another validation wrote it first
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


def _load(path: Path) -> Table:
    index = json.loads((path / "index.json").read_text())
    if index.get("format") != FORMAT:
        raise ValueError("another format")
    bufs = {b: np.load(path / f"{b}.npy", allow_pickle=False) for b in ("real", "complex")}
    for buf in bufs.values():   # each array below is a view of these: read-only, shared by all readers
        buf.flags.writeable = False
    exp = {}
    for key, name, buf, offset, shape, dtype in index["layout"]:
        arr = bufs[buf][offset:offset + math.prod(shape)].reshape(shape)
        exp.setdefault(key, {})[name] = arr if arr.dtype.str == dtype else arr.astype(np.dtype(dtype))
    return Table(index["digest"], index["names"], index["hashes"], exp, index.get("accumulation") or {},
                 frozenset(index["round_trips"]), dict(index["forms"]))


_MEMO: list = []


def get(use_cache: bool = True) -> Table:
    """The table, once per process: from the cache when it holds this code's, else built
    (and kept there when it can be)."""
    if _MEMO:
        return _MEMO[0]
    table = None
    path = _folder() / _code_key() if use_cache else None
    if path is not None and path.is_dir():
        try:
            table = _load(path)
        except (OSError, ValueError, KeyError, TypeError):
            table = None
    if table is None:
        table = _build()
        # kept only when the sources did not change while it was built (an edit during a
        # run would otherwise file an old catalog's table under the new sources' key)
        if path is not None and path.name == _code_key():
            try:
                _save(table, path)
            except OSError:
                pass
    _MEMO.append(table)
    return table
