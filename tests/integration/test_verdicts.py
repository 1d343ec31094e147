"""Done with evidence (docs/agents.md, "Done with evidence") through a real `nineplan serve`
over stdio and the SDK client: numbered criteria at the pull, verdicts at completion, unmet
criteria becoming the next plan, the chain's limit, the `require` and `ask` policies, bad
verdicts named by place, and a retry that adds no second follow-up."""

from pathlib import Path
from typing import Any

from mcp import Client

from tests.integration.servers import stdio_server
from tests.mcp_helpers import error, ok

PLAN = {"context": "Login for the notekeeper app", "approach": "Do it"}
SECTIONS = {
    "bullets": ("- hashed with argon2\n- 401 on a wrong password", 2),
    "numbers": ("1. hashed with argon2\n2) 401 on a wrong password\n3. a label", 3),
    "checkboxes": ("- [ ] hashed with argon2\n- [x] 401 on a wrong password", 2),
    "paragraph": ("Logging in works for a user with the right password.", 1),
}


def _met(n: int) -> dict[str, Any]:
    return {"criterion": n, "status": "met", "evidence": f"pytest -k criterion_{n}: 1 passed"}


def _unmet(n: int, evidence: str = "no test for it yet") -> dict[str, Any]:
    return {"criterion": n, "status": "unmet", "evidence": evidence}


async def _pulled(client: Client, criteria: str, goal: str = "Add login") -> dict[str, Any]:
    await ok(client, "9plan_queue_add", goal=goal, success_criteria=criteria, **PLAN)
    return await ok(client, "9plan_queue_pull")


async def test_a_pull_numbers_the_criteria_and_met_verdicts_finish(tmp_path: Path):
    """Bullets, numbers, checkboxes and a one-paragraph section are numbered at the pull (in
    `criteria` and a notice); an agent's edit of the section in the file before completing
    renumbers them; all met completes with verdict `met` and no follow-up; history_get shows
    each verdict with its criterion and evidence."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        await ok(client, "9plan_session_create")
        for section, count in SECTIONS.values():
            pulled = await _pulled(client, section)
            assert [c["n"] for c in pulled["criteria"]] == list(range(1, count + 1))
            listed = [n for n in pulled["notices"] if n.startswith("Success criteria to answer")]
            assert len(listed) == 1
            assert "1. " in listed[0]
            done = await ok(
                client,
                "9plan_plan_complete",
                outcome="done",
                verdicts=[_met(n) for n in range(1, count + 1)],
            )
            assert (done["verdict"], done["follow_up"]) == ("met", None)
        pulled = await _pulled(client, "- hashed with argon2\n- 401 on a wrong password")
        path = Path(pulled["plan_path"])
        path.write_text(path.read_text().replace("- hashed", "- a label\n- hashed"))
        done = await ok(
            client, "9plan_plan_complete", outcome="done", verdicts=[_met(1), _met(2), _met(3)]
        )
        assert done["verdict"] == "met"
        got = await ok(client, "9plan_history_get", plan_id=pulled["plan_id"])
        assert [(v["n"], v["text"], v["status"]) for v in got["verdicts"]] == [
            (1, "a label", "met"),
            (2, "hashed with argon2", "met"),
            (3, "401 on a wrong password", "met"),
        ]
        assert got["verdicts"][0]["evidence"] == "pytest -k criterion_1: 1 passed"


async def test_unmet_criteria_become_the_next_plan_until_the_chain_ends(tmp_path: Path):
    """One unmet: the follow-up is at the front, linked both ways, its criteria the unmet
    one, named in the result's text; completing follow-ups with the criterion still unmet
    goes three deep, then the criterion waits for a person (verdict needs_person)."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        await ok(client, "9plan_session_create")
        first = await _pulled(client, "- hashed with argon2\n- 401 on a wrong password")
        result = await client.call_tool(
            "9plan_plan_complete",
            {"outcome": "hashing done", "verdicts": [_met(1), _unmet(2)]},
        )
        done = result.structured_content or {}
        follow_up = done["follow_up"]
        assert done["verdict"] == "partial"
        assert follow_up["goal"] == f"Meet the unmet criteria of {first['plan_id']}: Add login"
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        assert f"became plan {follow_up['plan_id']} at the front of the queue" in text
        pulled = await ok(client, "9plan_queue_pull")
        assert pulled["plan_id"] == follow_up["plan_id"]
        assert [c["text"] for c in pulled["criteria"]] == ["401 on a wrong password"]
        got = await ok(client, "9plan_history_get", plan_id=first["plan_id"])
        assert got["follow_ups"] == [follow_up["plan_id"]]
        for depth in (2, 3):
            done = await ok(client, "9plan_plan_complete", outcome="no", verdicts=[_unmet(1)])
            assert done["follow_up"] is not None, depth
            await ok(client, "9plan_queue_pull")
        done = await ok(client, "9plan_plan_complete", outcome="no", verdicts=[_unmet(1)])
        assert (done["follow_up"], done["verdict"]) == (None, "needs_person")
        assert any("now wait for a person" in line for line in done["notices"])
        assert (await ok(client, "9plan_admin_validate"))["valid"] is True


async def test_require_refuses_and_ask_names_what_has_no_verdict(tmp_path: Path):
    """NINEPLAN_VERDICTS=require: a complete leaving criterion 2 without a verdict is refused
    naming `verdicts` and 2, and nothing is stored (the plan is still active); the default
    `ask` completes it and adds one line naming criterion 2."""
    strict = stdio_server(tmp_path / "strict", NINEPLAN_VERDICTS="require")
    async with Client(strict, mode="legacy") as client:
        await ok(client, "9plan_session_create")
        pulled = await _pulled(client, "- hashed with argon2\n- 401 on a wrong password")
        kind, body = await error(client, "9plan_plan_complete", outcome="x", verdicts=[_met(1)])
        assert kind == "VALIDATION_ERROR"
        assert "verdicts: criteria 2 have no verdict" in body
        state = await ok(client, "9plan_admin_state")
        assert state["active_plan"]["id"] == pulled["plan_id"]
    async with Client(stdio_server(tmp_path / "ask"), mode="legacy") as client:
        await ok(client, "9plan_session_create")
        pulled = await _pulled(client, "- hashed with argon2\n- 401 on a wrong password")
        done = await ok(client, "9plan_plan_complete", outcome="x", verdicts=[_met(1)])
        said = [n for n in done["notices"] if n.startswith("No verdict on criteria")]
        assert said == [
            (
                f"No verdict on criteria 2 of {pulled['plan_id']}: answer each numbered criterion"
                " in 9plan_plan_complete's verdicts (met, unmet or needs_person, with evidence)."
            )
        ]
        assert done["verdict"] == "unchecked"


async def test_bad_verdicts_are_named_by_place_and_a_retry_adds_nothing(tmp_path: Path):
    """An unknown criterion number and evidence that copies the criterion are refused naming
    `verdicts[i]`; a complete retried with its `request_id` returns the first follow-up and
    adds no second one."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        await ok(client, "9plan_session_create")
        await _pulled(client, "- hashed with argon2\n- 401 on a wrong password")
        kind, body = await error(
            client, "9plan_plan_complete", outcome="x", verdicts=[_met(1), _met(7)]
        )
        assert (kind, "verdicts[1]" in body) == ("VALIDATION_ERROR", True)
        copied = {"criterion": 1, "status": "met", "evidence": "Hashed with   argon2"}
        kind, body = await error(client, "9plan_plan_complete", outcome="x", verdicts=[copied])
        assert (kind, "verdicts[0]" in body) == ("VALIDATION_ERROR", True)
        arguments = {"outcome": "x", "verdicts": [_met(1), _unmet(2)], "request_id": "done-1"}
        first = await ok(client, "9plan_plan_complete", **arguments)
        again = await ok(client, "9plan_plan_complete", **arguments)
        assert again["follow_up"] == first["follow_up"]
        state = await ok(client, "9plan_admin_state")
        assert [item["id"] for item in state["queue"]] == [first["follow_up"]["plan_id"]]
