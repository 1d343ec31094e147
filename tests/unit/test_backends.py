"""The table of storage backends: which one the settings choose, and each one's primer."""

from pathlib import Path

import pytest

from nineplan_adapters.backends import BACKENDS, chosen
from nineplan_adapters.config import Settings
from nineplan_adapters.storage.memory import primer as memory_primer
from nineplan_adapters.storage.postgres import primer as postgres_primer
from nineplan_adapters.storage.priming import PrimerFactory
from nineplan_adapters.storage.sqlite import primer as sqlite_primer
from nineplan_core.model import STUCK_DEFERS

#: Each backend's factory, typed as the table loads it: mypy holds each one to PrimerFactory.
FACTORIES: dict[str, PrimerFactory] = {
    "sqlite": sqlite_primer.primer,
    "postgres": postgres_primer.primer,
    "memory": memory_primer.primer,
}


def test_the_settings_choose_postgres_with_a_url_else_their_storage(tmp_path: Path):
    """A database URL chooses PostgreSQL whatever the storage says; otherwise memory or the
    SQLite default, as NINEPLAN_STORAGE says."""
    url = "postgresql://nobody@127.0.0.1:1/none"
    assert chosen(Settings(sessions_path=tmp_path)).name == "sqlite"
    assert chosen(Settings(sessions_path=tmp_path, storage="memory")).name == "memory"
    assert chosen(Settings(sessions_path=tmp_path, database_url=url)).name == "postgres"


def test_every_backend_in_the_table_has_a_primer_module():
    """The table names every backend once, and each package's primer module is the one the
    table loads."""
    assert set(BACKENDS) == set(FACTORIES)
    for name, backend in BACKENDS.items():
        assert backend.name == name
        assert backend.package.rsplit(".", 1)[-1] == name


@pytest.mark.parametrize("name", ["sqlite", "memory"])
def test_a_primer_over_an_empty_folder_finds_nothing(name: str, tmp_path: Path):
    """A backend's primer over a sessions folder with no session bound to the folder finds
    nothing and raises nothing (prime then prints nothing)."""
    settings = Settings(
        sessions_path=tmp_path / "none", storage="memory" if name == "memory" else "sqlite"
    )
    primer = BACKENDS[name].primer(settings)  # type: ignore[index]
    assert primer.find(str(tmp_path)) is None
    assert settings.stuck_defers == STUCK_DEFERS


def test_the_postgres_primer_needs_a_database_url(tmp_path: Path):
    """Asked for without NINEPLAN_DATABASE_URL, the PostgreSQL primer says what it lacks."""
    with pytest.raises(ValueError, match="NINEPLAN_DATABASE_URL"):
        BACKENDS["postgres"].primer(Settings(sessions_path=tmp_path))
