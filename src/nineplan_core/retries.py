"""Safe retries: a client-chosen request id makes a mutating call apply at most once."""

import hashlib
import json

from nineplan_core.errors import InvalidInputError
from nineplan_core.model import check_type

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
