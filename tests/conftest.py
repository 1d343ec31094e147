"""Shared fixtures: the asyncio backend, hypothesis profiles, and each storage backend."""

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.fakes import Backend, open_backend

settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci",
    parent=settings.get_profile("ci"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "soak", deadline=None, max_examples=2000, suppress_health_check=list(HealthCheck)
)
settings.load_profile(
    "soak" if os.environ.get("NINEPLAN_SOAK") else "ci" if os.environ.get("CI") else "dev"
)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """The use cases over each storage backend, with a fixed clock and sequential ids."""
    async with open_backend(request.param, tmp_path) as opened:
        yield opened
