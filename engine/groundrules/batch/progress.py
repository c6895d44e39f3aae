"""Progress of a long batch on stderr: a tqdm bar on a terminal, plain lines otherwise (a log, CI),
at most one every `every_s` seconds and one at the end. Never on stdout, which may be the answers."""
from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Callable, TextIO


class Progress:
    def __init__(self, total: int | None = None, *, stream: TextIO | None = None, bar: bool | None = None,
                 every_s: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.stream = stream or sys.stderr
        self.rows, self.skipped = 0, 0
        self.codes: Counter[str] = Counter()
        self.every_s, self.clock = every_s, clock
        self._last = clock()
        self._bar = None
        if bar if bar is not None else _is_terminal(self.stream):
            from tqdm import tqdm
            self._bar = tqdm(total=total, unit="row", file=self.stream, dynamic_ncols=True, mininterval=0.5)

    def skip(self, n: int) -> None:
        """Rows an earlier run already answered (resumed)."""
        self.skipped += n
        if self._bar is not None:
            self._bar.update(n)

    def add(self, n: int, codes: Counter) -> None:
        self.rows += n
        self.codes.update(codes)
        if self._bar is not None:
            self._bar.update(n)
            refused = sum(self.codes.values())
            if refused:
                self._bar.set_postfix(refused=refused, refresh=False)
        elif self.clock() - self._last >= self.every_s:
            self._last = self.clock()
            self.stream.write(f"batch: {self.line()}\n")
            self.stream.flush()

    def line(self) -> str:
        refused = sum(self.codes.values())
        text = f"{self.skipped + self.rows} row(s)"
        if self.skipped:
            text += f" ({self.skipped} answered by an earlier run)"
        text += f", {self.rows - refused} ok, {refused} refused"
        if refused:
            text += " (" + ", ".join(f"{c} {n}" for c, n in sorted(self.codes.items(), key=lambda kv: (-kv[1], kv[0]))) + ")"
        return text

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
