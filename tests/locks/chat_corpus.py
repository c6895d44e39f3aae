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
    other: tuple = ()       # (kind, start, end, normalized value, valid): the `locks:` labels of any other kind

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
                               tuple(_spans(text, m.get("cards", []), mid)),
                               tuple(_other(text, m.get("locks", {}), mid))))
    return out


def _other(text: str, labels: dict, where: str) -> list[tuple]:
    """`locks: {kind: [[quote, value], [quote, value, false], ...]}`: labels of a lock kind the four
    lists above do not name (a kind an analyst's table adds), valid unless marked false."""
    out = []
    for kind, items in sorted(labels.items()):
        for start, end, value, *valid in _spans(text, items, f"{where} {kind}"):
            out.append((kind, start, end, value, valid[0] if valid else True))
    return out


def other_kinds(messages: list[Message]) -> tuple:
    """The kinds some message labels under `locks:`: every message is read for them."""
    return tuple(sorted({label[0] for m in messages for label in m.other}))


def rules(folder: Path = CORPUS) -> dict[str, str]:
    """category -> the rule its messages pin."""
    return {d["category"]: d["rule"] for d in
            (yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml")))}


def read(locks: list[dict], kinds: tuple = ()) -> dict:
    """What the lock tables read in one message, in the labels' shape (with the `locks:` labels of
    `kinds`)."""
    def span(c: dict) -> tuple:
        return c["locator"]["start"], c["locator"]["end"]
    return {
        "phones": tuple(span(c) + (c["normalized_value"],) for c in locks if c["kind"] == "phone" and c["valid"]),
        "invalid": tuple(span(c) for c in locks if c["kind"] == "phone" and not c["valid"]),
        "ids": tuple(span(c) + (c["valid"],) for c in locks if c["kind"] == "resident_id"),
        "cards": tuple(span(c) + (c["valid"],) for c in locks if c["kind"] == "bank_card"),
        "locks": tuple(sorted((c["kind"],) + span(c) + (c["normalized_value"], c["valid"]) for c in locks
                              if c["kind"] in kinds)),
    }


def labelled(m: Message, kinds: tuple = ()) -> dict:
    return {"phones": m.phones, "invalid": m.invalid, "ids": m.ids, "cards": m.cards,
            "locks": tuple(sorted(label for label in m.other if label[0] in kinds))}
