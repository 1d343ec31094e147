"""Who makes a call, as one value a way in builds and hands down (docs/agents.md, "Many
agents on one session")."""

from typing import Final

import attrs

from nineplan_core.errors import InvalidInputError
from nineplan_core.journal import Actor
from nineplan_core.retries import check_request_id
from nineplan_core.workers import UNNAMED, Unnamed, Worker, check_worker, worker_name


@attrs.frozen(kw_only=True)
class Caller:
    """Who makes a call, as a way in read it: the worker (`UNNAMED` when the call named
    none: the decisions read it as `main`, and the fact that no name was given is kept), the
    actor, and the client's `request_id` (None when it gave none). Build one with `of`, which
    checks each part once; code below the ways in never checks them again."""

    worker: Worker | Unnamed = UNNAMED
    actor: Actor = Actor.AGENT
    request_id: str | None = None

    @classmethod
    def of(
        cls,
        worker: str | None = None,
        *,
        actor: Actor | str = Actor.AGENT,
        request_id: str | None = None,
    ) -> "Caller":
        """The caller of a call as a way in received it, checked.

        Raises:
            InvalidInputError: a worker, actor or request id of the wrong shape (naming it).
        """
        return cls(
            worker=check_worker(worker),
            actor=check_actor(actor),
            request_id=None if request_id is None else check_request_id(request_id),
        )

    @property
    def holder(self) -> Worker:
        """The worker the call acts for (`main` when it named none)."""
        return worker_name(self.worker)

    @property
    def named(self) -> bool:
        """Whether the call named its worker (worker="main" included)."""
        return not isinstance(self.worker, Unnamed)


#: Why a call that names no worker is refused once a session has several (docs/agents.md).
SEVERAL_WORKERS: Final = (
    'this session has several workers: pass your worker name; the lead agent may pass worker="main"'
)


def unnamed_among_several(caller: Caller, *, workers_named: bool) -> InvalidInputError | None:
    """The refusal of a pull, defer, complete or discard by `caller` when the session has had
    a worker other than `main` named (`workers_named`) and the call names none: two agents on
    one connection that both leave `worker` out are one worker, and would finish each other's
    plans. None when the call may go on (it named a worker, `main` included, or the session
    has only ever had one)."""
    if workers_named and not caller.named:
        return InvalidInputError("worker", SEVERAL_WORKERS)
    return None


#: An agent's call that named no worker and chose no request id: a lone agent's, or an
#: embedding program's that needs neither.
AGENT: Final = Caller()


def check_caller(caller: object) -> Caller:
    """The caller an embedding program passed, if it is one.

    Raises:
        InvalidInputError: anything but a Caller (a worker name where its Caller belongs).
    """
    if not isinstance(caller, Caller):
        raise InvalidInputError(
            "caller", f"must be a Caller (Caller.of(worker)), not {type(caller).__name__}"
        )
    return caller


#: A person's call (the CLI's and the web view's steering): no worker, no request id.
PERSON: Final = Caller(actor=Actor.PERSON)


def check_actor(actor: Actor | str) -> Actor:
    """Who makes a change: `agent`, `person` or `system`.

    Raises:
        InvalidInputError: anything else.
    """
    try:
        return Actor(actor)
    except ValueError:
        raise InvalidInputError("actor", "must be 'agent', 'person' or 'system'") from None
