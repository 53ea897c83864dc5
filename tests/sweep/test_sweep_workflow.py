"""The sweep's CI workflow: a matrix over `--shard I/N` whose length is N, each shard's
evidence validated, and a final job failing on any unexplained finding."""
from __future__ import annotations

import re

from conftest import ROOT

TEXT = (ROOT / ".github" / "workflows" / "sweep.yml").read_text()


def test_the_matrix_covers_every_shard_exactly_once():
    shards = int(re.search(r'^  SHARDS: "(\d+)"', TEXT, re.M).group(1))
    matrix = re.search(r"^        shard: \[([\d, ]+)\]", TEXT, re.M).group(1)
    assert [int(s) for s in matrix.split(",")] == list(range(shards))
    assert '--shard "$SHARD/$SHARDS"' in TEXT


def test_each_shard_is_validated_and_unexplained_findings_fail_the_run():
    assert 'mlx-vjpcheck validate "sweep/shard-$SHARD"' in TEXT
    assert "needs: shard" in TEXT and 'sys.exit(1 if new else 0)' in TEXT
