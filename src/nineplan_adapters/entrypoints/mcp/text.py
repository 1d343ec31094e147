"""What the server tells agents: its instructions and the bootstrap prompt.

Both are templates naming the tools by their own part (`{queue_pull}`); `instructions` and
`bootstrap_prompt` fill in the configured names (entrypoints.tool_names).
"""

from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames

INSTRUCTIONS = """\
9plan keeps a persistent, session-scoped queue of self-contained plans, so long tasks survive
the end of a conversation and context compaction.

QUICK START:
1. Create a session: {session_create} (or {session_resume} with its three-word name)
2. Add plans: {queue_add_many} in order ({queue_add} for one; 'front' for blocking work);
   after=[ids] makes a plan wait until those are done
3. Get work: {queue_pull} returns the whole plan and its file
4. Execute the plan; keep notes in the file's # Notes section (or pass notes when finishing)
5. Finish: {plan_complete} with an outcome naming what was produced and verdicts answering
   each numbered criterion with evidence (or {plan_defer} / {plan_discard})
6. Repeat until the queue is empty

PLAN FILE FORMAT:
# Context, # Goal, # Inputs, # Outputs, # Approach, # Success Criteria, # Notes

DEPENDENCY RESOLUTION:
- Use {history_search} to find the outputs of completed plans
- Inputs reference other plans by description, not by id

SESSION RECOVERY:
- Every result names its session ([Session: name], session_name) and lists in notices
  what to do next
- After compaction, resume with {session_resume} and that name

MANY AGENTS: a parent gives each subagent its worker name and the session name in the prompt
that starts it. Agents beside others pass their worker (worker="tests"), the session_name and,
to finish, the plan_id on every call; each worker holds one plan. Once a worker is named, a call
without one is refused: the lead agent passes worker="main".
"""

BOOTSTRAP = """\
You are helping the user set up a new 9plan session for a complex task.{task}

WORKFLOW:
1. CLARIFY: Ask questions to understand scope, components, dependencies
2. CREATE SESSION: Use {session_create} with a task description
3. DECOMPOSE: Break the task into discrete, self-contained plans
4. CAPTURE DEPENDENCIES: Give each plan inputs and outputs
5. ENQUEUE: Add them all in one {queue_add_many} call, in order; give a plan a key and name
   it in a later plan's after when that plan needs its output
6. START WORK: Pull the first plan with {queue_pull}; it returns the whole plan, and its file
   is for notes

PLAN QUALITY CHECKLIST:
- Goal is specific and measurable
- Approach has concrete steps
- Success criteria are observable, one per line ("- ..."): each is answered with evidence
  when the plan is completed
- Inputs reference other plans by description
- Outputs are specific enough to search for

NOTE: {queue_add_many} at 'front' gives [A, B, C, ...]; single {queue_add} calls at 'front'
give [C, B, A]. A plan with after is pulled only once those plans are completed or discarded.
A parent gives each subagent its worker name and the session name in the prompt that starts
it; agents working beside others on one session pass both on every call.
"""


def instructions(names: ToolNames = DEFAULT_NAMES) -> str:
    """The server's instructions, naming the tools as `names` does."""
    return names.fill(INSTRUCTIONS)


def bootstrap_prompt(task: str | None, names: ToolNames = DEFAULT_NAMES) -> str:
    """The bootstrap workflow, with the user's task when one is given."""
    return names.fill(BOOTSTRAP, task=f"\n\nTASK: {task.strip()}" if task and task.strip() else "")
