"""What this machine last wrote into each plan file, and this machine's id (docs/reliability.md, "Guarantees": "a copy
before every loss", §3 "several machines").

A plan file whose bytes still hash to what this machine wrote is just a render: it may be
re-rendered or removed freely. One that differs was edited (by the agent, a person, an
editor) and is never deleted or overwritten before its lines are in the database or in
recovered/. The record is kept where the files are, one small file per plan under the
session's folder (`written/{plan_id}`, the SHA-256 of the bytes, written atomically): each
write of a plan file replaces one record file, so two processes never lose each other's
entries, and the record lives and dies with the machine's folder. A SQLite session's files
are the session's own (one machine), so it keeps none.
"""

import os
import secrets
from pathlib import Path
from typing import Protocol

import attrs

from nineplan_adapters.storage.plan_files import file_system_error
from nineplan_core.model import PlanId, check_plan_id

#: The file in a sessions folder that holds the id of the machine that uses it.
MACHINE_FILE = ".machine-id"


class WriteRecord(Protocol):
    """The hash of what this machine last wrote into each plan file."""

    def get(self, plan_id: PlanId) -> str | None:
        """The hash recorded for the plan's file; None when this machine never wrote it (or
        keeps no record). Raises FileSystemError."""
        ...

    def put(self, plan_id: PlanId, digest: str | None) -> None:
        """Record `digest` for the plan's file (None forgets it). Raises FileSystemError."""
        ...


class NoRecord:
    """The record of a backend whose plan files are the session's own: none is kept."""

    def get(self, plan_id: PlanId) -> str | None:  # noqa: ARG002 - nothing is recorded
        return None

    def put(self, plan_id: PlanId, digest: str | None) -> None:
        """Nothing to record."""


NO_RECORD = NoRecord()


@attrs.frozen
class DirectoryWriteRecord:
    """`{session}/written/{plan_id}`: one small file per plan, holding the hash."""

    folder: Path

    def _file(self, plan_id: PlanId) -> Path:
        return self.folder / check_plan_id(plan_id)

    def get(self, plan_id: PlanId) -> str | None:
        try:
            return self._file(plan_id).read_text("ascii").strip() or None
        except (FileNotFoundError, UnicodeDecodeError):
            return None  # never written here, or a damaged record: the file counts as edited
        except OSError as exc:
            raise file_system_error("read the record of a plan file", exc) from exc

    def put(self, plan_id: PlanId, digest: str | None) -> None:
        target = self._file(plan_id)
        try:
            if digest is None:
                target.unlink(missing_ok=True)
                return
            self.folder.mkdir(exist_ok=True)
            temp = self.folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
            temp.write_text(digest, "ascii")
            temp.replace(target)
        except OSError as exc:
            raise file_system_error("record a plan file's write", exc) from exc


def machine_id(sessions_folder: Path) -> str:
    """This machine's id: made once, the first time a sessions folder is used, and kept in
    `MACHINE_FILE` there (two processes starting at once agree: the first link wins).

    Raises FileSystemError.
    """
    target = sessions_folder / MACHINE_FILE
    try:
        sessions_folder.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            temp = sessions_folder / f".{MACHINE_FILE}.{secrets.token_hex(4)}.tmp"
            temp.write_text(f"{secrets.token_hex(8)}\n", "ascii")
            try:
                os.link(temp, target)
            except FileExistsError:
                pass
            finally:
                temp.unlink(missing_ok=True)
        return target.read_text("ascii").strip()
    except OSError as exc:
        raise file_system_error("read or make this machine's id", exc) from exc
