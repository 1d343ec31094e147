"""A small run of the load benchmark, so that `make load` keeps working."""

from pathlib import Path

import pytest
from benchmarks.load import run_load


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_concurrent_clients_run_without_errors(tmp_path: Path, transport: str):
    """Three concurrent clients complete every cycle with no error and leave the session valid."""
    result = await run_load(transport, clients=3, cycles=10, folder=tmp_path)
    assert result.errors == 0
    assert result.calls == 3 * (1 + 3 * 10)
    assert result.valid
