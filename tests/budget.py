"""How many examples a property test draws: its full count under `--hypothesis-profile=full`
(CI's extended run), a tenth of it (at least 10) in the default run, so the default suite stays fast
and CI still draws every example the test declares."""
from __future__ import annotations

from hypothesis import settings

FAST_SHARE, FAST_MIN = 10, 10


def examples(full: int) -> int:
    if settings.get_current_profile_name() == "full":
        return full
    return max(FAST_MIN, full // FAST_SHARE)
