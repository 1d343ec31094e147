"""The plan-file directory of a session: atomic writes, no symlink ever followed."""

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import attrs

from nineplan_core.errors import FileSystemError
from nineplan_core.model import PlanId, check_plan_id, file_name
from nineplan_core.plan_file import MAX_FILE_BYTES
from nineplan_core.suggestions import Action, Suggestion


class PlanFiles(Protocol):
    """The folder of plan files of one session: the agent's working copies."""

    def path(self, plan_id: PlanId) -> str: ...
    async def read(self, plan_id: PlanId) -> bytes | None:
        """The file's bytes (at most MAX_FILE_BYTES + 1); None if missing or not a regular
        file (a symlink or a directory, say). Never follows a link. Raises FileSystemError
        for a file that is there but cannot be read (an I/O error)."""
        ...

    async def write(self, plan_id: PlanId, data: bytes) -> None:
        """Replace the file atomically; a directory or a link in its place is moved to
        recovered/ first. Raises FileSystemError."""
        ...

    async def keep(self, file_name: str, data: bytes) -> str:
        """Write `data` into the session's recovered/ folder under a fresh name based on
        `file_name`; return where. Raises FileSystemError."""
        ...

    async def keep_file(self, plan_id: PlanId) -> str | None:
        """Copy the plan's file itself, whole (whatever its size), into recovered/ under a
        fresh name; return where, or None when there is no regular file to copy. Never
        follows a link. Raises FileSystemError."""
        ...

    async def set_aside(self, plan_id: PlanId) -> tuple[str, str | None]:
        """What stands where the plan's file belongs when it is no regular file: "missing",
        "link", "directory" or "other" ("file" if one appeared since). A directory is moved
        to recovered/ now, and where it went is returned too. Raises FileSystemError."""
        ...

    async def remove(self, plan_id: PlanId) -> None:
        """Delete the file if it exists (a directory in its place goes to recovered/).
        Raises FileSystemError."""
        ...

    async def names(self) -> list[str]:
        """Every entry in the folder. Raises FileSystemError."""
        ...

    async def recover(self, file_name: str) -> None:
        """Move an entry out of the folder into the session's recovered/ folder."""
        ...


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
#: What opening a plan file for reading fails with when there is no plain file to read:
#: none there, a link (O_NOFOLLOW: ELOOP, or EMLINK on the BSDs) or a socket (ENXIO).
_ABSENT = {errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EMLINK, errno.ENXIO}
#: What an operator does about the failures that say what is wrong (others get the default).
_REMEDIES = {
    errno.ENOSPC: "Free disk space on the sessions folder's volume, then retry.",
    errno.EACCES: "Make the sessions folder writable for this user, then retry.",
    errno.EROFS: "The sessions folder is on a read-only file system; point NINEPLAN_SESSIONS_PATH elsewhere.",
}


def file_system_error(action: str, exc: OSError) -> FileSystemError:
    """A categorized error for an OSError, naming what failed but not the machine's paths."""
    reason = os.strerror(exc.errno) if exc.errno else type(exc).__name__
    detail = _REMEDIES.get(exc.errno or 0)
    suggestion = None if detail is None else Suggestion(Action.FIX_STORAGE, detail=detail)
    return FileSystemError(f"Could not {action}: {reason}.", suggestion=suggestion)


PlanFilesFactory = Callable[[Path, Path], PlanFiles]


def _entry_kind(mode: int) -> str:
    """What a folder entry that is not a directory is, in set_aside's words."""
    if stat.S_ISLNK(mode):
        return "link"
    return "file" if stat.S_ISREG(mode) else "other"


def _read_limited(calls: "OsCalls", fd: int, size: int) -> bytes:
    """The file's bytes up to one past MAX_FILE_BYTES (which tells the reader it is over).

    The first read asks for what `size` says plus one byte, instead of a buffer the size of
    the limit (a plan file is small and read on every pull and finish); reading on to the
    end takes in what a file that grew since holds.
    """
    left = MAX_FILE_BYTES + 1
    chunks = []
    want = min(size + 1, left)
    while left and (chunk := calls.read(fd, min(want, left))):
        chunks.append(chunk)
        left -= len(chunk)
        want = 1 << 16
    return b"".join(chunks)


def directory_plan_files(folder: Path, recovered: Path) -> PlanFiles:
    """The default PlanFiles: a real folder (and where stray files are moved)."""
    return DirectoryPlanFiles(folder, recovered)


class OsCalls:
    """The file-system calls a plan read, write, delete or recovery makes; tests wrap it to
    inject faults."""

    def open_to_read(self, path: Path) -> int:
        return os.open(path, _READ_FLAGS)

    def read(self, fd: int, size: int) -> bytes:
        return os.read(fd, size)

    def create(self, path: Path) -> int:
        return os.open(path, _CREATE_FLAGS, 0o644)

    def write(self, fd: int, data: bytes) -> None:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)

    def replace(self, source: Path, target: Path) -> None:
        source.replace(target)

    def unlink(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def rename(self, source: Path, target: Path) -> None:
        source.rename(target)


@attrs.define
class DirectoryPlanFiles:
    """Plan files in `{session}/plans/`, named `{plan_id}.txt`.

    Paths are built only from validated plan ids. Reads never follow a symlink (an agent's
    link to a file elsewhere reads as missing); a file that is there but cannot be read
    (permissions, an I/O error) is a FileSystemError, never "missing", so nothing renders
    over what the agent wrote. Writes go to a temporary file in the same
    folder and are renamed over the old one, and nothing is fsynced: the database commit
    is the durability point and reconcile re-renders a file a power loss took.
    """

    folder: Path
    recovered: Path
    calls: OsCalls = attrs.field(factory=OsCalls)

    def path(self, plan_id: PlanId) -> str:
        return str(self._file(plan_id))

    def _file(self, plan_id: PlanId) -> Path:
        # The one place an id becomes a path on disk keeps its own guard: a PlanId forged
        # with a cast (PlanId("../x")) is refused here too.
        return self.folder / file_name(check_plan_id(plan_id))

    async def read(self, plan_id: PlanId) -> bytes | None:
        try:
            fd = self.calls.open_to_read(self._file(plan_id))
        except OSError as exc:
            if exc.errno in _ABSENT:  # missing, or a link (never followed) or a socket
                return None
            raise file_system_error("read the plan file", exc) from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # a directory, a FIFO or a device
                return None
            return _read_limited(self.calls, fd, info.st_size)
        except OSError as exc:  # a file that is there but cannot be read (EIO, ESTALE)
            raise file_system_error("read the plan file", exc) from exc
        finally:
            os.close(fd)

    async def write(self, plan_id: PlanId, data: bytes) -> None:
        target = self._file(plan_id)
        temp = self.folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:
            self._clear_irregular(target)
            self.calls.write(self.calls.create(temp), data)
            self.calls.replace(temp, target)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise file_system_error("write the plan file", exc) from exc

    async def remove(self, plan_id: PlanId) -> None:
        target = self._file(plan_id)
        try:
            self._clear_irregular(target)
            self.calls.unlink(target)
        except OSError as exc:
            raise file_system_error("delete the plan file", exc) from exc

    async def set_aside(self, plan_id: PlanId) -> tuple[str, str | None]:
        target = self._file(plan_id)
        try:
            mode = target.lstat().st_mode
            if not stat.S_ISDIR(mode):
                return _entry_kind(mode), None
            moved = self._recovered_name(target.name)
            self.calls.rename(target, moved)
        except FileNotFoundError:
            return "missing", None
        except OSError as exc:
            raise file_system_error("move a directory out of the plan folder", exc) from exc
        return "directory", str(moved)

    def _clear_irregular(self, target: Path) -> None:
        """Move a directory (or a link to one) standing where a plan file belongs aside."""
        try:
            info = target.lstat()
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            self.calls.rename(target, self._recovered_name(target.name))

    def _recovered_name(self, name: str) -> Path:
        self.recovered.mkdir(exist_ok=True)
        target = self.recovered / name
        while target.exists() or target.is_symlink():
            target = self.recovered / f"{name}.{secrets.token_hex(2)}"
        return target

    async def keep(self, file_name: str, data: bytes) -> str:
        try:
            target = self._recovered_name(Path(file_name).name)
            self.calls.write(self.calls.create(target), data)
        except OSError as exc:
            raise file_system_error("copy a plan file to recovered/", exc) from exc
        return str(target)

    async def keep_file(self, plan_id: PlanId) -> str | None:
        source = self._file(plan_id)
        try:
            fd = self.calls.open_to_read(source)
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            raise file_system_error("copy a plan file to recovered/", exc) from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            target = self._recovered_name(source.name)
            self._copy(fd, self.calls.create(target))
        except OSError as exc:
            raise file_system_error("copy a plan file to recovered/", exc) from exc
        finally:
            os.close(fd)
        return str(target)

    def _copy(self, source: int, target: int) -> None:
        """Stream the open file `source` into the new file `target` (and close `target`)."""
        with os.fdopen(target, "wb") as out:
            while chunk := self.calls.read(source, 1 << 20):
                out.write(chunk)

    async def names(self) -> list[str]:
        try:
            return os.listdir(self.folder)  # noqa: PTH208 - names only; iterdir builds a Path per entry
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise file_system_error("list the plan folder", exc) from exc

    async def recover(self, file_name: str) -> None:
        source = self.folder / Path(file_name).name
        try:
            self.calls.rename(source, self._recovered_name(source.name))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise file_system_error("move a stray file to recovered/", exc) from exc
