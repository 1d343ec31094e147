"""Embedding nineplan: a whole session through the library, no MCP involved.

Run it with `python examples/embedding.py [FOLDER]`; it uses a temporary folder by default.
"""

import sys
import tempfile

import anyio

from nineplan_adapters import open_nineplan


async def main(folder: str) -> None:
    async with open_nineplan(folder) as nineplan:
        state = await nineplan.create_session("Publish the quarterly report")
        name = state.session.name
        print(f"session {name}")
        for goal, where in [
            ("Collect the figures", "back"),
            ("Write the summary", "back"),
            ("Get access to the data", "front"),
        ]:
            placed = await nineplan.add_plan(
                name,
                context="The report is due Friday.",
                goal=goal,
                approach="Do it step by step.",
                success_criteria="Someone else could check it.",
                position=where,
            )
            print(f"added {placed.plan.id} at rank {placed.rank}: {goal}")
        while (await nineplan.session_state(name)).queue:
            pulled = await nineplan.pull_plan(name)
            done = await nineplan.complete_plan(name, f"Finished: {pulled.plan.goal}.")
            print(f"completed {pulled.plan.id}; {done.queue_length} left")
        for match in await nineplan.search_history(name, "figures"):
            print(f"history: {match.rank}. {match.id} {match.goal}")
        print("valid" if (await nineplan.validate_session(name)).valid else "INVALID")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as temporary:
        anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else temporary)
