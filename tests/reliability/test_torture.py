"""Crash torture at CI size: 20 SIGKILLs, nothing acknowledged lost."""

from pathlib import Path

import pytest

from tests.reliability.torture import torture

#: Timing-bound (kills, races): `make test` runs these after the parallel phase, two at a time (each keeps a core).
pytestmark = pytest.mark.serial


async def test_nothing_acknowledged_is_lost_across_sigkills(tmp_path: Path):
    """Twenty SIGKILLs at random moments lose no acknowledged call."""
    report = await torture(20, tmp_path, seed=1)
    assert report.losses == []
    assert report.kills >= 20
    assert report.acknowledged > 20
    assert report.checks == report.rounds + 1 or report.checks >= 20
