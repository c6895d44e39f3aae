"""`groundrules batch`: chunks of rows answered by worker processes, written in input order.

The reader keeps at most `chunks_in_flight` chunks per worker under way (rules/limits.yaml
`batch`); answers are written in the order the chunks were read, whichever worker finishes first,
so the output's bytes are the same for any worker count. JSONL answers are appended as they come,
so an interrupted run leaves a prefix of the whole output: a rerun checks that prefix (complete
lines, each under this rulebook, the last one's key at its row) and answers only the rows after
it. CSV and Parquet outputs are made from such a JSONL journal (`OUT.partial.jsonl`) once it is
whole, written beside the output and renamed into place.
"""
from __future__ import annotations

import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from . import formats, pool
from .answer import Answerer
from .progress import Progress

JOURNAL = ".partial.jsonl"


@dataclass
class Outcome:
    rows: int            # answered by this run
    resumed: int         # answered by an earlier run and kept
    refused: Counter     # refusals of this run, by error code


def run(answerer: Answerer, inputs: list[formats.Source], out: str, *, out_format: str | None = None,
        workers: int = 1, chunk_rows: int = 500, in_flight: int = 3, restart: bool = False,
        progress: Progress | None = None) -> Outcome:
    """Answer every row of `inputs` into `out` (a file, or `-` for stdout)."""
    fmt = formats.format_of(out, out_format)
    progress = progress or Progress(bar=False, every_s=float("inf"))
    if out == formats.STDIO:
        return _answer_into(answerer, inputs, sys.stdout, 0, workers, chunk_rows, in_flight, progress, flush=True)
    target = Path(out)
    if target.exists() and target.is_dir():
        raise formats.usage("usage.batch_out_folder", out=out)
    if not target.parent.is_dir():
        raise formats.usage("usage.out_folder_missing", out=out)
    journal = target if fmt == "jsonl" else target.with_name(target.name + JOURNAL)
    if fmt != "jsonl" and target.exists() and not journal.exists() and not restart:
        raise formats.usage("usage.batch_out_complete", out=out)
    done = 0 if restart else _resumable(journal, answerer, inputs, chunk_rows)
    mode = "a" if done else "w"
    with open(journal, mode, encoding="utf-8", newline="\n") as stream:
        outcome = _answer_into(answerer, inputs, stream, done, workers, chunk_rows, in_flight, progress)
    if fmt != "jsonl":
        formats.convert(journal, target, fmt, chunk_rows)
        journal.unlink()
    return outcome


def _answer_into(answerer: Answerer, inputs: list[formats.Source], stream, skip: int, workers: int,
                 chunk_rows: int, in_flight: int, progress: Progress, flush: bool = False) -> Outcome:
    refused: Counter = Counter()
    rows = 0
    if skip:
        progress.skip(skip)
    for lines, counted in _answered(answerer, _after(formats.chunks(inputs, chunk_rows), skip), workers,
                                    in_flight):
        stream.write("".join(line + "\n" for line in lines))
        if flush:
            stream.flush()
        rows += len(lines)
        refused.update(counted)
        progress.add(len(lines), counted)
    return Outcome(rows, skip, refused)


def _after(chunks: Iterator[list], skip: int) -> Iterator[list]:
    """The chunks without their first `skip` rows."""
    for chunk in chunks:
        if skip >= len(chunk):
            skip -= len(chunk)
            continue
        yield chunk[skip:]
        skip = 0


# ----------------------------------------------------------------------------- the workers

def _lines(answerer: Answerer, chunk: list) -> tuple[list[str], Counter]:
    """A chunk's answer lines, and its refusals by code."""
    lines: list[str] = []
    refused: Counter = Counter()
    for place, row in chunk:
        key, envelope, text = answerer.answered(place, row)
        if not envelope["ok"]:
            refused[(envelope["error"] or {}).get("code", "not ok")] += 1
        lines.append('{"key": ' + json.dumps(key, ensure_ascii=False) + ", " + text[1:])
    return lines, refused


def _answered(answerer: Answerer, chunks: Iterator[list], workers: int, in_flight: int
              ) -> Iterator[tuple[list[str], Counter]]:
    """Each chunk's answers, in the order the chunks come: in this process for one worker, else in
    forked ones that inherit the compiled rulebook (pool.ordered)."""
    return pool.ordered(_lines, answerer, chunks, workers=workers, in_flight=in_flight)


# ----------------------------------------------------------------------------- resuming

def _resumable(journal: Path, answerer: Answerer, inputs: list[formats.Source], chunk_rows: int) -> int:
    """How many rows the journal already answers (0 when there is none): its complete lines, each
    under this rulebook, the last one keyed as the row at its place. A partial last line (a run
    stopped while writing) is cut off."""
    if not journal.exists():
        return 0
    if any(source.path is None for source in inputs):
        raise formats.usage("usage.batch_resume_stdin", journal=str(journal))
    tail = f', "rulebook": {json.dumps(answerer.version, ensure_ascii=False)}}}'
    count, last, good_bytes = 0, "", 0        # last: the last whole line's text, once count > 0
    with open(journal, "rb") as stream:
        for raw in stream:
            if not raw.endswith(b"\n"):
                break
            text = raw[:-1].decode("utf-8")
            if not text.endswith(tail):
                found = _version_of(text)
                raise formats.usage("usage.batch_resume_rulebook", journal=str(journal), found=str(found),
                                    version=answerer.version)
            count += 1
            good_bytes += len(raw)
            last = text
    if count == 0:
        journal.unlink()
        return 0
    if good_bytes != journal.stat().st_size:
        os.truncate(journal, good_bytes)
    key = json.loads(last)["key"]
    place, row = _row_at(inputs, count, chunk_rows)
    expected = None if row is None else answerer.answered(place, row)[0]
    if expected != key:
        raise formats.usage("usage.batch_resume_mismatch", journal=str(journal), count=count,
                            expected=json.dumps(expected, ensure_ascii=False), found=json.dumps(key, ensure_ascii=False))
    return count


def _row_at(inputs: list[formats.Source], n: int, chunk_rows: int) -> tuple[Any, Any]:
    seen = 0
    for chunk in formats.chunks(inputs, chunk_rows):
        if seen + len(chunk) >= n:
            return chunk[n - seen - 1]
        seen += len(chunk)
    return None, None


def _version_of(text: str) -> str:
    try:
        return str(json.loads(text).get("rulebook"))
    except ValueError:
        return "(not an answer line)"
