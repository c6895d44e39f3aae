"""The labelled chat corpus (tests/cases/lock_chat/*.yaml) as plain records, for the corpus test and
for tests/perf/bench_locks.py. A label names its quote; its span is found in the text, each list's
labels in text order."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

CORPUS = Path(__file__).resolve().parents[1] / "cases" / "lock_chat"


@dataclass(frozen=True)
class Message:
    id: str                 # <category>:<n>, n from 1
    category: str
    role: str
    text: str
    phones: tuple           # (start, end, value)
    invalid: tuple          # (start, end)
    ids: tuple              # (start, end, valid)
    cards: tuple            # (start, end, valid)

    def as_message(self) -> dict:
        return {"id": self.id, "role": self.role, "content": self.text}


class LabelError(ValueError):
    pass


def _spans(text: str, labels: list, where: str) -> list[tuple]:
    """A label is `quote`, `[quote, ...fields]`, or either with `{nth: N}` last when the quote occurs
    earlier in the text as part of something else (1 = its first occurrence after the previous label)."""
    out, at = [], 0
    for label in labels:
        parts = label if isinstance(label, list) else [label]
        nth = 1
        if isinstance(parts[-1], dict):
            nth, parts = parts[-1]["nth"], parts[:-1]
        quote, rest = parts[0], tuple(parts[1:])
        start = at - 1
        for _ in range(nth):
            start = text.find(quote, start + 1)
            if start < 0:
                raise LabelError(f"{where}: quote {quote!r} does not occur {nth} time(s) after offset {at}")
        out.append((start, start + len(quote)) + rest)
        at = start + 1
    return out


def load(folder: Path = CORPUS) -> list[Message]:
    out = []
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for n, m in enumerate(doc["messages"], 1):
            mid = f"{doc['category']}:{n}"
            text = m["text"]
            out.append(Message(mid, doc["category"], m.get("role", "user"), text,
                               tuple(_spans(text, m.get("phones", []), mid)),
                               tuple(_spans(text, m.get("invalid", []), mid)),
                               tuple(_spans(text, m.get("ids", []), mid)),
                               tuple(_spans(text, m.get("cards", []), mid))))
    return out


def rules(folder: Path = CORPUS) -> dict[str, str]:
    """category -> the rule its messages pin."""
    return {d["category"]: d["rule"] for d in
            (yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml")))}


def read(locks: list[dict]) -> dict:
    """What the lock tables read in one message, in the labels' shape."""
    def span(c: dict) -> tuple:
        return c["locator"]["start"], c["locator"]["end"]
    return {
        "phones": tuple(span(c) + (c["normalized_value"],) for c in locks if c["kind"] == "phone" and c["valid"]),
        "invalid": tuple(span(c) for c in locks if c["kind"] == "phone" and not c["valid"]),
        "ids": tuple(span(c) + (c["valid"],) for c in locks if c["kind"] == "resident_id"),
        "cards": tuple(span(c) + (c["valid"],) for c in locks if c["kind"] == "bank_card"),
    }


def labelled(m: Message) -> dict:
    return {"phones": m.phones, "invalid": m.invalid, "ids": m.ids, "cards": m.cards}
