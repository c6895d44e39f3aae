"""Rows in and answers out: JSONL, CSV and Parquet files, a folder of them, or `-` (JSONL on
stdin/stdout), read and written in bounded chunks, never whole.

A JSONL row travels as its line's bytes (the worker that answers it decodes it, so the decoding
is spread over the workers too); a CSV or Parquet row as a dict of its columns (CSV values are
text, Parquet's keep their types). Each row's place, its key when the plan names no key column,
is `<input>:<n>`: the line of a JSONL file, the record after a CSV's header, the row of a Parquet
file, counted from 1.
"""
from __future__ import annotations

import csv
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator, TypeVar

from ..core import codes
from ..core.errors import GroundrulesError, refusal

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}
STDIO = "-"
T = TypeVar("T")


def usage(name: str, /, **params: Any) -> GroundrulesError:
    """A batch's input or output the command line named wrongly: the catalogue's message `name`."""
    return refusal(codes.USAGE, name, **params)


def format_of(name: str, given: str | None = None) -> str:
    """The format a file name says (or `given`); `-` is JSONL."""
    if given:
        return given
    if name == STDIO:
        return "jsonl"
    found = FORMATS.get(Path(name).suffix.lower())
    if found is None:
        raise usage("usage.batch_format", input=name)
    return found


@dataclass(frozen=True)
class Source:
    """One input file (or stdin): its name as the row places show it, and its format."""

    name: str
    path: Path | None
    format: str


def sources(names: list[str], given: str | None = None) -> list[Source]:
    """Every input file, a folder's files in sorted order (those named .jsonl, .ndjson, .csv, .parquet)."""
    out: list[Source] = []
    for name in names:
        if name == STDIO:
            out.append(Source(STDIO, None, format_of(name, given)))
            continue
        path = Path(name)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS)
            if not files:
                raise usage("usage.batch_empty_folder", input=name)
            out += [Source(str(p), p, format_of(str(p), given)) for p in files]
        elif path.is_file():
            out.append(Source(name, path, format_of(name, given)))
        else:
            raise usage("usage.no_such_path", input=name)
    return out


def rows(source: Source, chunk_rows: int) -> Iterator[list[tuple[str, Any]]]:
    """A source's (place, row) pairs, `chunk_rows` at a time."""
    if source.format == "jsonl":
        yield from _chunked(_jsonl(source), chunk_rows)
    elif source.format == "csv":
        yield from _chunked(_csv(source), chunk_rows)
    else:
        yield from _parquet(source, chunk_rows)


def chunks(inputs: list[Source], chunk_rows: int) -> Iterator[list[tuple[str, Any]]]:
    """Every source's rows in order, in chunks of at most `chunk_rows` (a chunk never spans files)."""
    for source in inputs:
        yield from rows(source, chunk_rows)


def _chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    chunk: list[T] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _open(source: Source) -> BinaryIO:
    if source.path is None:
        return sys.stdin.buffer
    try:
        return open(source.path, "rb")
    except OSError as exc:
        raise usage("usage.cannot_read", input=source.name, reason=exc.strerror or type(exc).__name__) from None


def _jsonl(source: Source) -> Iterator[tuple[str, bytes]]:
    """Each non-blank line, as bytes (a line's end is not part of it)."""
    stream = _open(source)
    try:
        for n, line in enumerate(stream, 1):
            line = line.rstrip(b"\r\n")
            if line.strip():
                yield f"{source.name}:{n}", line
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _csv(source: Source) -> Iterator[tuple[str, dict]]:
    stream = _open(source)
    try:
        import io
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
        try:
            for n, record in enumerate(csv.DictReader(text), 1):
                yield f"{source.name}:{n}", dict(record)
        except UnicodeDecodeError as exc:
            raise usage("usage.batch_not_utf8", input=source.name, byte=exc.start) from None
        except csv.Error as exc:
            raise usage("usage.batch_not_csv", input=source.name, problem=str(exc)) from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def _parquet(source: Source, chunk_rows: int) -> Iterator[list[tuple[str, dict]]]:
    pq = _pyarrow_parquet(source.name)
    try:
        handle = pq.ParquetFile(source.path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a file that is not Parquet
        raise usage("usage.batch_not_parquet", input=source.name, kind=type(exc).__name__) from None
    n = 0
    for batch in handle.iter_batches(batch_size=chunk_rows):
        chunk = []
        for row in batch.to_pylist():
            n += 1
            chunk.append((f"{source.name}:{n}", row))
        yield chunk


def _pyarrow_parquet(name: str):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise usage("usage.batch_pyarrow", input=name) from None
    return pq


# ----------------------------------------------------------------------------- out

def convert(journal: Path, out: Path, fmt: str, chunk_rows: int) -> None:
    """The JSONL answers in `journal` as `fmt` (csv, parquet) at `out`, written beside it and renamed
    into place once whole, a chunk at a time."""
    from .answer import COLUMNS, column_values
    partial = out.with_name(out.name + ".writing")
    with open(journal, "rb") as lines:
        records = (_record(line) for line in lines if line.strip())
        if fmt == "csv":
            with open(partial, "w", encoding="utf-8", newline="") as stream:
                writer = csv.writer(stream, lineterminator="\n")
                writer.writerow(COLUMNS)
                for key, envelope in records:
                    values = column_values(key, envelope)
                    values["ok"] = "true" if values["ok"] else "false"
                    writer.writerow(["" if values[c] is None else values[c] for c in COLUMNS])
        else:
            pq = _pyarrow_parquet(str(out))
            import pyarrow as pa
            from .answer import arrow_schema
            schema = arrow_schema()
            with pq.ParquetWriter(partial, schema) as writer:
                for block in _chunked(((None, r) for r in records), chunk_rows):
                    columns: dict = {c: [] for c in COLUMNS}
                    for _, (key, envelope) in block:
                        for name, value in column_values(key, envelope).items():
                            columns[name].append(value)
                    writer.write_batch(pa.RecordBatch.from_pydict(columns, schema=schema))
    os.replace(partial, out)


def _record(line: bytes) -> tuple[Any, dict]:
    row = json.loads(line)
    key = row.pop("key")
    return key, row


def answers(path: str) -> Iterator[dict]:
    """The answer rows of a batch's output (JSONL, CSV or Parquet) as envelopes with their key:
    {key, ok, data, warnings, error, rulebook}; CSV and Parquet columns read back from JSON text."""
    fmt = format_of(path)
    if fmt == "jsonl":
        stream = sys.stdin.buffer if path == STDIO else open(path, "rb")
        try:
            for line in stream:
                if line.strip():
                    yield json.loads(line)
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
        return
    if fmt == "csv":
        with open(path, encoding="utf-8", newline="") as stream:
            for record in csv.DictReader(stream):
                yield _from_columns(dict(record, ok=record["ok"] == "true"))
        return
    pq = _pyarrow_parquet(path)
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1000):
        for record in batch.to_pylist():
            yield _from_columns(record)


def _from_columns(record: dict) -> dict:
    out = {"key": record["key"], "ok": record["ok"]}
    for name in ("data", "warnings", "error"):
        value = record.get(name)
        out[name] = json.loads(value) if value not in (None, "") else ([] if name == "warnings" else None)
    out["rulebook"] = record["rulebook"]
    return out
