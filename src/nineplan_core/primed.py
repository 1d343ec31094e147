"""What `nineplan prime` reads of a session (docs/agents.md, "After compaction or a new
conversation"): the values a primer returns, read without the use cases."""

import datetime as dt

import attrs


@attrs.frozen
class PrimedPlan:
    """The active plan as `nineplan prime` shows it: the last lines of its notes."""

    id: str
    goal: str
    file_path: str
    notes_tail: list[str]
    #: Its success criteria as the file has them now, numbered from 1 (what a complete's
    #: verdicts answer).
    criteria: list[str] = attrs.field(factory=list)


@attrs.frozen
class StuckPlan:
    """A live plan deferred often enough to be stuck, with its defer count."""

    id: str
    goal: str
    defers: int


@attrs.frozen
class OtherSession:
    """Another session bound to the folder that has work, as `nineplan prime` names it."""

    session_name: str
    task_description: str | None
    queued: int
    active: int


@attrs.frozen
class PrimedHold:
    """An active plan of the session with its worker and when its worker was last heard
    from, as `nineplan prime` shows it (`--worker` makes it the block's active plan)."""

    worker: str
    last_seen: dt.datetime | None
    plan: PrimedPlan


@attrs.frozen(kw_only=True)
class PrimedSession:
    """What a backend's primer found for a folder: the session to go back to and where its
    work stands, and the folder's other sessions with work (docs/clients.md)."""

    session_name: str
    task_description: str | None
    workspace: str
    active_plan: PrimedPlan | None
    next: list[str]
    stuck: list[StuckPlan]
    #: The folder's other sessions with work, the most recently active first (at most three).
    others: list[OtherSession] = attrs.field(factory=list)
    #: Every active plan of the session, whoever holds it (by id).
    active_plans: list[PrimedHold] = attrs.field(factory=list)
    #: A worker other than `main` has been named in the session (`Session.workers_named`).
    workers_named: bool = False
