"""What the server tells agents: its instructions and the bootstrap prompt."""

INSTRUCTIONS = """\
9plan keeps a persistent, session-scoped queue of self-contained plans, so long tasks survive
the end of a conversation and context compaction.

QUICK START:
1. Create a session: 9plan_session_create (or 9plan_session_resume with its three-word name)
2. Add plans: 9plan_queue_add ('front' for blocking work, 'back' for eventual work)
3. Get work: 9plan_queue_pull, then read the plan file it names for the full context
4. Execute the plan; write progress into the file's # Notes section
5. Finish: 9plan_plan_complete with an outcome naming what was produced
   (or 9plan_plan_defer / 9plan_plan_discard)
6. Repeat until the queue is empty

PLAN FILE FORMAT:
# Context, # Goal, # Inputs, # Outputs, # Approach, # Success Criteria, # Notes

DEPENDENCY RESOLUTION:
- Use 9plan_history_search to find the outputs of completed plans
- Inputs reference other plans by description, not by id

SESSION RECOVERY:
- Every response starts with [Session: name]
- After compaction, resume with 9plan_session_resume and that name
"""

BOOTSTRAP = """\
You are helping the user set up a new 9plan session for a complex task.{task}

WORKFLOW:
1. CLARIFY: Ask questions to understand scope, components, dependencies
2. CREATE SESSION: Use 9plan_session_create with a task description
3. DECOMPOSE: Break the task into discrete, self-contained plans
4. CAPTURE DEPENDENCIES: Give each plan inputs and outputs
5. ENQUEUE: Add plans with 9plan_queue_add (respect dependency order)
6. START WORK: Pull the first plan with 9plan_queue_pull

PLAN QUALITY CHECKLIST:
- Goal is specific and measurable
- Approach has concrete steps
- Success criteria are observable
- Inputs reference other plans by description
- Outputs are specific enough to search for

NOTE: Adding A, B, C at 'front' gives [C, B, A] - add in reverse order if needed.
"""


def bootstrap_prompt(task: str | None) -> str:
    """The bootstrap workflow, with the user's task when one is given."""
    return BOOTSTRAP.format(task=f"\n\nTASK: {task.strip()}" if task and task.strip() else "")
