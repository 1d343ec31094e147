"""Safe retries: a client-chosen request id makes a mutating call apply at most once."""

import hashlib
import json
import logging
from typing import Generic, TypeVar

import attrs

from nineplan_core.errors import DatabaseError, InvalidInputError
from nineplan_core.model import check_type
from nineplan_core.ports import RequestLog
from nineplan_core.workers import MAIN

log = logging.getLogger("nineplan.service")
T = TypeVar("T")

MAX_REQUEST_ID = 128


def check_request_id(request_id: str) -> str:
    """Return `request_id` if it is 1-128 characters without NUL.

    Raises:
        InvalidInputError: any other value.
    """
    check_type("request_id", request_id, str)
    if not 1 <= len(request_id) <= MAX_REQUEST_ID or "\x00" in request_id:
        raise InvalidInputError(
            "request_id", f"must be 1 to {MAX_REQUEST_ID} characters without NUL"
        )
    return request_id


def fingerprint(operation: str, **arguments: object) -> str:
    """A digest of a call: the same request id with other arguments is a different call."""
    canonical = json.dumps([operation, arguments], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_replay(request_id: str, recorded: str, current: str) -> None:
    """Refuse a request id that was applied to a different call.

    Raises:
        InvalidInputError: naming request_id.
    """
    if recorded != current:
        raise InvalidInputError(
            "request_id", f"{request_id!r} was already used for a different call; use a new id"
        )


@attrs.frozen
class Request(Generic[T]):
    """A mutating call made with a request id: the id, the call's fingerprint, and the type
    of the result a repeat gets back."""

    id: str
    fingerprint: str
    kind: type[T]
    #: The worker whose request it is: a request id is remembered per worker.
    worker: str = MAIN


def request(
    request_id: str | None,
    kind: type[T],
    operation: str,
    *,
    worker: str,
    **arguments: object,
) -> Request[T] | None:
    """The retry record of a call, or None when the caller chose no request id.

    A request id is remembered per worker (a column of the retry log), so two workers choosing
    one id never get each other's result.

    Raises:
        InvalidInputError: a request id of the wrong shape.
    """
    if request_id is None:
        return None
    checked = check_request_id(request_id)
    return Request(checked, fingerprint(operation, **arguments), kind, worker=worker)


async def replayed(requests: RequestLog, request: Request[T] | None) -> T | None:
    """The first result of a request applied before, or None to go ahead.

    Raises:
        InvalidInputError: the request id was used for a different call.
        DatabaseError: the recorded result cannot be read back.
    """
    if (
        request is None
        or (recorded := await requests.recall(request.worker, request.id, request.kind)) is None
    ):
        return None
    check_replay(request.id, recorded[0], request.fingerprint)
    if recorded[1] is None:
        raise DatabaseError(f"The recorded result of request {request.id!r} cannot be read.")
    log.info("request replayed", extra={"request_id": request.id})
    return recorded[1]
