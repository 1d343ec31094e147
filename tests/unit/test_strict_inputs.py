"""The embedding API refuses what it does not understand, and its errors speak its language."""

import re
from pathlib import Path

import pytest

from nineplan_adapters import open_nineplan
from nineplan_adapters.entrypoints.mcp.suggestions import for_agents
from nineplan_core.callers import Caller
from nineplan_core.errors import (
    DatabaseError,
    InvalidTransitionError,
    NinePlanError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    PlanNotFoundError,
    QueueEmptyError,
    QueueFullError,
    SessionExistsError,
    SessionNameRequiredError,
    SessionNotFoundError,
)
from nineplan_core.service import NinePlan
from tests.fakes import PLAN
from tests.mcp_helpers import TOOLS

ERRORS: list[NinePlanError] = [
    SessionNotFoundError("brave-quiet-otter"),
    SessionNotFoundError(None),
    SessionNameRequiredError(),
    SessionExistsError("brave-quiet-otter"),
    PlanNotFoundError("a3x9k"),
    PlanNotFoundError("a3x9k", kind="queued or active"),
    NoActivePlanError("main"),
    PlanAlreadyActiveError("a3x9k", "main"),
    QueueEmptyError(),
    QueueEmptyError(completed_count=2),
    QueueFullError(10),
    InvalidTransitionError("a3x9k", "queued", "completed"),
    DatabaseError("broken"),
]
#: The use cases an embedder calls (the names a suggestion's library wording uses).
LIBRARY_CALLS = {name for name in dir(NinePlan) if "_" in name and not name.startswith("_")}


def test_an_unknown_keyword_to_open_nineplan_is_a_type_error_naming_it(tmp_path: Path):
    """A misspelt setting is refused at the call, by name, instead of being ignored."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'strage'"):
        open_nineplan(tmp_path, strage="memory")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ({"context": 123}, "context"),
        ({"position": 1}, "position"),
        ({"caller": "alice"}, "caller"),  # a worker name where its Caller belongs
    ],
)
async def test_wrong_types_through_the_library_are_validation_errors(
    tmp_path: Path, call: dict[str, object], field: str
):
    """add_plan(context=123) and friends: a NinePlanError naming the field, not AttributeError."""
    async with open_nineplan(tmp_path, storage="memory") as nineplan:
        name = (await nineplan.create_session()).session.name
        with pytest.raises(NinePlanError) as caught:
            await nineplan.add_plan(name, **{**PLAN, **call})
        assert caught.value.category == "VALIDATION_ERROR"
        assert caught.value.message.startswith(f"{field}: ")


def test_a_request_id_that_is_not_text_is_refused_where_the_call_is_read():
    """Caller.of(request_id=5): a VALIDATION_ERROR naming request_id, before any use case."""
    with pytest.raises(NinePlanError) as caught:
        Caller.of(request_id=5)  # type: ignore[arg-type]
    assert caught.value.message.startswith("request_id: ")


async def test_max_results_true_and_a_number_for_a_name_are_refused(tmp_path: Path):
    """A bool is not a whole number, and a session name or plan id must be text."""
    async with open_nineplan(tmp_path, storage="memory") as nineplan:
        service: NinePlan = nineplan
        name = (await service.create_session()).session.name
        for bad in [
            service.search_history(name, "x", True),
            service.session_state(7),  # type: ignore[arg-type]
            service.get_history(name, 12345),  # type: ignore[arg-type]
        ]:
            with pytest.raises(NinePlanError) as caught:
                await bad
            assert caught.value.category == "VALIDATION_ERROR"


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: type(error).__name__)
def test_library_errors_suggest_library_calls_and_agents_see_tools(error: NinePlanError):
    """No domain suggestion names an MCP tool; on MCP the same suggestion names tools that
    exist and no library call."""
    library = error.suggestion_text
    assert "9plan_" not in library
    assert any(re.search(rf"\b{call}\b", library) for call in LIBRARY_CALLS) or "Retry" in library
    shown = for_agents(error.suggestion)
    assert not any(re.search(rf"\b{call}\b", shown) for call in LIBRARY_CALLS)
    assert set(re.findall(r"9plan_\w+", shown)) <= TOOLS
