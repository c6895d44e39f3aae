"""`--base DIR|REV`: the tables an edit is compared with, from a folder or a git revision."""
from __future__ import annotations

import subprocess
import tarfile
import tempfile
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Iterator

from ..core import rulebook
from ..core.errors import RulesError
from ..core.rulebook import Rulebook
from .io import usage_error


@contextmanager
def base_rulebook(base: str, root: Path) -> Iterator[Rulebook]:
    """The rulebook of `base`: a folder holding rules/, locks/, schemas/, or a git revision of the
    checkout at `root` (exported to a temporary folder that is removed afterwards)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = _folder(base, root, Path(tmp))       # its own usage errors say what is wrong
        try:
            book = rulebook.load(folder)
        except RulesError as exc:
            raise usage_error("usage.base_invalid", base=base, count=len(exc.problems),
                              problem=str(exc.problems[0])) from None
        except Exception as exc:  # noqa: BLE001 - older tables this loader's compilers do not expect
            raise usage_error("usage.base_compiler", base=base, kind=type(exc).__name__) from None
        yield book


def _folder(base: str, root: Path, tmp: Path) -> Path:
    if Path(base).is_dir():
        return Path(base)
    if base.startswith("-"):                 # git would read it as an option (--output=FILE writes)
        raise usage_error("usage.base_unknown", base=base)
    try:
        tar = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", base, "--",
                              "rules", "locks", "schemas"], capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        raise usage_error("usage.base_unknown", base=base) from None
    with tarfile.open(fileobj=BytesIO(tar)) as archive:
        try:
            archive.extractall(tmp, filter="data")
        except TypeError:                    # Python before 3.11.4 has no extraction filters
            archive.extractall(tmp)          # noqa: S202 - our own checkout's git archive
    return tmp
