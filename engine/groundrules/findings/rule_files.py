"""Writing an approved rule into its document, confined to the project root and applied once.

Every step goes through directory file descriptors: the root is opened once, each folder below it
is opened relative to its parent with O_NOFOLLOW | O_DIRECTORY, and the document, the temporary
file and the rename all name their folder by that descriptor. A folder swapped for a symlink
while we write cannot redirect us: the descriptor still names the folder we checked, and a
symlink met on the way is refused (ELOOP / ENOTDIR), so check and write are one step. The
temporary file lives beside the document, inside the root, and is removed if anything fails.

The document carries a marker line with the proposal id before the rule. Applying finds the marker
and writes nothing, so a re-run after a crash at any point neither loses nor repeats the rule.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_REFUSED = (errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO, errno.EACCES, errno.EPERM, errno.ENOENT)
MAX_DOCUMENT_BYTES = 8 * 1024 * 1024


class Unwritable(Exception):
    """The target cannot receive the rule: `reason` is 'root', 'folder_missing' (a folder of its
    path does not exist), 'target' (not a regular file in a real folder under the root, a symlink
    on the way) or 'too_large'."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _walk(root: Path, folders: list[str]) -> int:
    """A descriptor of root/folders..., refusing any symlink below the root."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        raise Unwritable("root") from None
    for name in folders:
        try:
            child = os.open(name, _DIR, dir_fd=fd)
        except OSError as exc:
            os.close(fd)
            if exc.errno == errno.ENOENT:              # not there: a folder to make, not a symlink to fear
                raise Unwritable("folder_missing") from None
            if exc.errno in _REFUSED:
                raise Unwritable("target") from None
            raise
        os.close(fd)
        fd = child
    return fd


def _read(folder: int, name: str) -> tuple[bytes | None, int]:
    """(content, mode) of the regular file `name` in `folder`, or (None, 0o644) when it is missing."""
    try:
        fd = os.open(name, _FILE, dir_fd=folder)
    except FileNotFoundError:
        return None, 0o644
    except OSError as exc:
        if exc.errno in _REFUSED:
            raise Unwritable("target") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unwritable("target")
        if info.st_size > MAX_DOCUMENT_BYTES:
            raise Unwritable("too_large")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise Unwritable("too_large")
            chunks.append(chunk)
        return b"".join(chunks), stat.S_IMODE(info.st_mode)
    finally:
        os.close(fd)


def safe_relative(path: str) -> bool:
    """A project-relative POSIX path: not absolute, no '..', no drive, no backslash, no NUL."""
    if not path or "\\" in path or "\x00" in path or re.match(r"^[A-Za-z]:", path):
        return False
    pure = PurePosixPath(path)
    return not pure.is_absolute() and ".." not in pure.parts and pure.parts != ()


def read_document(root: Path, path: str) -> bytes | None:
    """The regular file root/path (a safe_relative path), read through the same descriptors that
    confine a rule's write (no symlink below the root); None when it is missing or refused."""
    *folders, name = path.split("/")
    try:
        folder = _walk(root, folders)
    except (Unwritable, OSError):
        return None
    try:
        return _read(folder, name)[0]
    except (Unwritable, OSError):
        return None
    finally:
        os.close(folder)


def with_rule(old: bytes, marker: str, text: str) -> bytes:
    """`old` with the marker line and `text` appended as their own lines, ending in a newline."""
    separator = b"\n" if old and not old.endswith(b"\n") else b""
    body = text if text.endswith("\n") else text + "\n"
    return old + separator + (marker + "\n" + body).encode("utf-8")


def has_marker(content: bytes, marker: str) -> bool:
    return marker.encode("utf-8") in content.splitlines()


def probe(root: Path, target_path: str) -> None:
    """Raise Unwritable unless root/target_path could receive a rule now (checked before the decision
    is recorded; apply_rule checks again as it writes)."""
    *folders, name = target_path.split("/")
    folder = _walk(root, folders)
    try:
        _read(folder, name)
    finally:
        os.close(folder)


def apply_rule(root: Path, target_path: str, marker: str, text: str) -> bool:
    """Append `marker` + `text` to root/target_path unless the marker is already there; True when
    this call wrote it. Raises Unwritable for a target that may not be written."""
    *folders, name = target_path.split("/")
    folder = _walk(root, folders)
    try:
        _remove_debris(folder, name)
        old, mode = _read(folder, name)
        if old is not None and has_marker(old, marker):
            return False
        _replace(folder, name, with_rule(old or b"", marker, text), mode)
        return True
    finally:
        os.close(folder)


def _temp_name(name: str) -> str:
    return f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def _remove_debris(folder: int, name: str) -> None:
    """Remove the temporary files of `name` that approvals killed before their rename left in
    `folder`: exactly _temp_name's shape, a regular file, written by a process that no longer runs
    (a live one, this process's other threads included, may be about to rename it)."""
    shape = re.compile(rf"\.{re.escape(name)}\.([1-9][0-9]{{0,9}})\.[0-9a-f]{{8}}\.tmp")
    for entry in os.listdir(folder):
        found = shape.fullmatch(entry)
        if found is None or _running(int(found.group(1))):
            continue
        try:
            if stat.S_ISREG(os.stat(entry, dir_fd=folder, follow_symlinks=False).st_mode):
                os.unlink(entry, dir_fd=folder)
        except FileNotFoundError:
            pass                                  # another approval removed it first


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True                               # another user's process, or no such pid to ask about
    return True


def _replace(folder: int, name: str, content: bytes, mode: int) -> None:
    """Write `content` to a fresh temporary file in `folder` and rename it over `name`, both by the
    folder's descriptor; fsync the file and the folder."""
    temp = _temp_name(name)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                 0o600, dir_fd=folder)
    try:
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=folder)
        except OSError:
            pass
        raise
    os.fsync(folder)
