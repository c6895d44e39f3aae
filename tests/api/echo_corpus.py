"""The inputs of the bounded-echo test (issue 19, item 6): a megabyte string in every string position
of every tool's input schema, each in an otherwise valid call.

Positions come from the schema the registry lists for a tool (`Service.listing`): properties, items
(and prefixItems), the branches of anyOf / oneOf / allOf, additionalProperties (under a sample key),
`$ref`s resolved within the listing. An argument the listing leaves open because a part checks it
against a contract of its own names that contract in its description ("(evidence.v1.schema.json
#/$defs/interpretation)"); the walk goes on inside that contract (for each item, when the argument
is a list). A position takes a string unless its schema's `type` excludes one. Every string already
in the tool's base call is a position too, and every object position gets a megabyte key.

Each case is a valid base call of the tool (`bases`) with the string put at one position: where the
base has no value on the way, the smallest one the schema allows is made (its required properties,
one item). The corpus is reproducible: positions are walked in a fixed order, and the string at each
is drawn from ALPHABETS by a random.Random seeded with SEED and the case's id, so a failing id
replays byte for byte.
"""
from __future__ import annotations

import copy
import functools
import random
import re
from typing import Any, Callable, Iterator

SEED = 19
MEGABYTE = 1_000_000
ALPHABETS = ("x", "证据", "0123456789", "a/b/../", "{name}", "%s\u0000", "ab" * 60 + "\n")
MAX_DEPTH = 14                     # steps below the arguments (recursive schemas end here)
CONTRACT = re.compile(r"\(([\w.-]+\.schema\.json)(?: #(/\$defs/[\w<>-]+))?\)")

MESSAGE = {"id": "M-1", "type": "message", "role": "user", "state": "sent", "subject": "demand_1",
           "content": "不方便接电话，微信 wx_wang01"}
DECLINE = {"id": "I-base", "events": [{"id": "e-base", "type": "decline", "slot": "phone", "evidence": ["M-1"]}],
           "dispositions": []}
EXPERIMENT = {"source_kind": "experiment_run", "source_ref": "run:4472", "excerpt": "shift -1/0/+1 的均值指标近似",
              "relation": "supports", "method": "experiment"}
FINDING = {"claim_kind": "diagnosis", "statement": "温度漂移导致误差", "tags": ["gpu"], "evidence": [EXPERIMENT],
           "scope": {"match": {"runtime.backend": "vLLM"}, "context": {"commit": "0862527"}}}


def bases(example: Callable[[str, str], Any]) -> dict[str, dict]:
    """A valid call of every tool; F-000001, RP-000001 and the evidence record M-1 exist.
    `example(part, name)` reads schemas/examples/<part>/<name>.json."""
    return {
        "explain_support": {"context": example("support_reason", "cq-shenlun-partial")},
        "lock_message": {"message": {"id": "m1", "role": "user", "content": "不方便接电话，微信 wx_wang01"}},
        "fold_evidence": example("fold", "seed_region-read_as_correct"),
        "verify_extraction": example("verify", "end_time_only"),
        "query_findings": {"keyword": "漂移", "tags": ["gpu"], "scope_context": {"runtime": {"backend": "vLLM"}}},
        "get_finding": {"finding_id": "F-000001"},
        "log_finding": FINDING,
        "add_evidence": {"finding_id": "F-000001", "evidence": EXPERIMENT},
        "set_finding_state": {"finding_id": "F-000001", "epistemic_state": "provisional", "reason": "初步",
                              "expected_version": 1},
        "refute_finding": {"finding_id": "F-000001", "reason": "日志反证", "expected_version": 1,
                           "evidence": [dict(EXPERIMENT, relation="contradicts", source_ref="log:gpu",
                                             source_kind="log", method="log_inspection")]},
        "supersede_finding": {"finding_id": "F-000001", "reason": "更准确", "expected_version": 1,
                              "new": dict(FINDING, statement="GPU 温度漂移导致误差")},
        "revalidate_finding": {"finding_id": "F-000001", "result": "insufficient", "reason": "复查",
                               "expected_version": 1},
        "link_finding": {"finding_id": "F-000001", "relation": "documented_in", "target": {"document": "docs/gpu.md"}},
        "propose_rule": {"finding_id": "F-000001", "rule_text": "- 先记录温度", "target_path": "AGENTS.md",
                         "rationale": "两次误判"},
        "approve_rule": {"proposal_id": "RP-000001", "note": "同意"},
        "reject_rule": {"proposal_id": "RP-000001", "note": "太具体"},
        "append_evidence": {"record": {"type": "message", "role": "user", "state": "sent", "subject": "demand_1",
                                       "content": "手机 13812345678"}},
        "get_evidence": {"record_id": "M-1"},
        "redact_evidence": {"record_id": "M-1", "reason": "用户要求删除"},
        "fold_ledger": {"now": "2030-01-02T00:00:00Z", "interpretations": [DECLINE], "subject": "demand_1"},
        "append_interpretation": {"interpretation": DECLINE},
        "draft_interpretation": {"message_id": "M-1"},
        "draft_candidate": {"request": example("verify", "end_time_only")["request"], "instance": "meeting_time"},
        "list_toolsets": {},
        "enable_toolset": {"toolset": "findings"},
    }


class Walker:
    """The string and object positions of one tool's arguments. A path is a tuple of steps:
    ('key', name), ('item', n), ('branch', word, n) or ('contract', ref): from here on the
    contract's schema applies (no move in the value)."""

    def __init__(self, schema: dict, base: Any, contract: Callable[[str], dict]):
        self.schema, self.base, self.contract = schema, base, contract

    # -- schema nodes -------------------------------------------------------------------------
    @staticmethod
    def resolve(node: Any, root: dict) -> dict:
        for _ in range(32):
            if not (isinstance(node, dict) and "$ref" in node):
                break
            target: Any = root
            for part in node["$ref"].removeprefix("#/").split("/") if node["$ref"].startswith("#/") else ["\0"]:
                target = target.get(part, {}) if isinstance(target, dict) else {}
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}} if isinstance(target, dict) else {}
        return node if isinstance(node, dict) else {}

    @staticmethod
    def types(node: dict) -> set[str] | None:
        t = node.get("type")
        return None if t is None else ({t} if isinstance(t, str) else set(t))

    def contracts_of(self, node: dict, value: Any) -> list[str]:
        """The contracts a free-form node's description names ('<type>' expanded over the values
        its `type` property may take, or the one the base value has)."""
        if node.get("properties", {}).keys() - {"type"} or node.get("items") or node.get("anyOf"):
            return []
        found = CONTRACT.search(node.get("description", ""))
        if found is None:
            return []
        ref = found.group(1) + "#" + (found.group(2) or "")
        if "<type>" not in ref:
            return [ref]
        kinds = self.resolve(node.get("properties", {}).get("type", {}), self.schema).get("enum", [])
        return [ref.replace("<type>", k) for k in kinds]

    # -- the positions --------------------------------------------------------------------------
    def strings(self) -> Iterator[tuple]:
        yield from self._walk(self.schema, self.schema, self.base, (), 0, "string")

    def objects(self) -> Iterator[tuple]:
        yield from self._walk(self.schema, self.schema, self.base, (), 0, "object")

    def arrays(self) -> Iterator[tuple]:
        """The positions that may hold an array (the cost sweep grows one at each)."""
        yield from self._walk(self.schema, self.schema, self.base, (), 0, "array")

    def _walk(self, node: Any, root: dict, value: Any, path: tuple, depth: int, want: str) -> Iterator[tuple]:
        node = self.resolve(node, root)
        if depth > MAX_DEPTH:
            return
        types = self.types(node)
        if want == "string" and path and (types is None or "string" in types) and path[-1][0] != "contract":
            yield path
        if want == "object" and (types is None or "object" in types) and not isinstance(value, (str, list)):
            yield path
        if want == "array" and path and (types is None or "array" in types) and path[-1][0] != "contract":
            yield path
        for ref in self.contracts_of(node, value):
            sub = self.contract(ref)
            if isinstance(value, list) or "array" in (types or ()):
                first = value[0] if isinstance(value, list) and value else None
                yield from self._walk(sub, sub, first, path + (("item", 0), ("contract", ref)), depth + 1, want)
            else:
                yield from self._walk(sub, sub, value, path + (("contract", ref),), depth + 1, want)
        for word in ("anyOf", "oneOf", "allOf"):
            for n, branch in enumerate(node.get(word, [])):
                for sub in self._walk(branch, root, value, path + (("branch", word, n),), depth + 1, want):
                    if sub[-1][0] != "branch":      # the branch itself is the position above it
                        yield sub
        if types is None or "object" in types:
            got = value if isinstance(value, dict) else {}
            for name, sub in node.get("properties", {}).items():
                yield from self._walk(sub, root, got.get(name), path + (("key", name),), depth + 1, want)
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                yield from self._walk(extra, root, None, path + (("key", "sample_key"),), depth + 1, want)
        if types is None or "array" in types:
            got = value if isinstance(value, list) else []
            prefix = node.get("prefixItems", [])
            for n, sub in enumerate(prefix):
                yield from self._walk(sub, root, got[n] if n < len(got) else None, path + (("item", n),),
                                      depth + 1, want)
            if isinstance(node.get("items"), dict):
                n = len(prefix)
                yield from self._walk(node["items"], root, got[n] if n < len(got) else None, path + (("item", n),),
                                      depth + 1, want)

    def in_base(self, kind: type = str) -> Iterator[tuple]:
        """Every string (or, `kind=list`, every array) of the base call."""
        def walk(value: Any, path: tuple) -> Iterator[tuple]:
            if isinstance(value, kind):
                yield path
            if isinstance(value, dict):
                for k, v in value.items():
                    yield from walk(v, path + (("key", k),))
            elif isinstance(value, list):
                for n, v in enumerate(value):
                    yield from walk(v, path + (("item", n),))
        yield from walk(self.base, ())

    # -- values -------------------------------------------------------------------------------
    def schema_at(self, path: tuple) -> tuple[dict, dict]:
        """(node, root) of the schema at `path`."""
        root = self.schema
        node = self.resolve(root, root)
        for step in path:
            if step[0] == "contract":
                root = self.contract(step[1])
                node = self.resolve(root, root)
            elif step[0] == "key":
                props = node.get("properties", {})
                node = self.resolve(props[step[1]] if step[1] in props else node.get("additionalProperties", {}), root)
            elif step[0] == "item":
                prefix = node.get("prefixItems", [])
                node = self.resolve(prefix[step[1]] if step[1] < len(prefix) else node.get("items", {}), root)
            else:
                node = self.resolve(node.get(step[1], [{}] * (step[2] + 1))[step[2]], root)
        return node, root

    def smallest(self, node: Any, root: dict, depth: int = 0) -> Any:
        """The smallest value the schema plainly allows (enough to hold a position below it)."""
        node = self.resolve(node, root)
        if "const" in node:
            return copy.deepcopy(node["const"])
        if node.get("enum"):
            return copy.deepcopy(node["enum"][0])
        if depth > MAX_DEPTH:
            return None
        for word in ("anyOf", "oneOf"):
            if node.get(word):
                return self.smallest(node[word][0], root, depth + 1)
        types = self.types(node) or ({"object"} if "properties" in node else {"string"})
        kind = "object" if "object" in types else sorted(types)[0]
        if kind == "object":
            return {name: self.smallest(node.get("properties", {}).get(name, {}), root, depth + 1)
                    for name in node.get("required", [])}
        if kind == "array":
            return [self.smallest(node.get("items", {}), root, depth + 1) for _ in range(node.get("minItems", 0))]
        return {"string": "x" * max(1, node.get("minLength", 1)), "integer": node.get("minimum", 1),
                "number": node.get("minimum", 1), "boolean": True, "null": None}.get(kind, "x")

    def place(self, path: tuple, value: Any, *, as_key: bool = False) -> Any:
        """A copy of the base with `value` at `path` (or, `as_key`, as a new key of the object
        there), the containers on the way made where missing."""
        out = {"": copy.deepcopy(self.base)}
        holder, key = out, ""
        for n, step in enumerate(path):
            if step[0] in ("branch", "contract"):
                continue
            node, root = self.schema_at(path[:n + 1])
            kind, index = (dict, step[1]) if step[0] == "key" else (list, step[1])
            if not isinstance(holder[key], kind):
                holder[key] = kind()
            if kind is dict and index not in holder[key]:
                holder[key][index] = self.smallest(node, root)
            while kind is list and len(holder[key]) <= index:
                holder[key].append(self.smallest(node, root))
            holder, key = holder[key], index
        if as_key:
            if not isinstance(holder[key], dict):
                holder[key] = {}
            holder[key][value] = "x"
        else:
            holder[key] = value
        return out[""]


def shown(path: tuple) -> str:
    out = ""
    for step in path:
        if step[0] == "key":
            out += ("." if out else "") + str(step[1])
        elif step[0] == "item":
            out += f"[{step[1]}]"
        elif step[0] == "branch":
            out += f"<{step[1]}{step[2]}>"
    return out or "(arguments)"


def chunk(case: str) -> str:
    """The alphabet a case's megabyte string repeats, drawn by the case's id."""
    return random.Random(f"{SEED}:{case}").choice(ALPHABETS)


def huge(case: str) -> str:
    repeated = chunk(case)
    return (repeated * (MEGABYTE // len(repeated) + 1))[:MEGABYTE]


def corpus(service, example: Callable[[str, str], Any]) -> Iterator[tuple[str, str, Any]]:
    """(case id, tool, arguments) of every generated case, in a fixed order."""
    for case, tool, arguments in cases(service, example):
        yield case, tool, arguments()


def cases(service, example: Callable[[str, str], Any]) -> Iterator[tuple[str, str, Callable[[], Any]]]:
    """(case id, tool, what makes its arguments) of every generated case, in corpus order: the ids
    and positions without a megabyte string each (a test builds the arguments of the cases it runs;
    `make(value=...)` builds the same call with another string in the megabyte's place)."""
    from groundrules.core.schema_check import bundle
    bundled: dict[str, dict] = {}

    def contract(ref: str) -> dict:
        if ref not in bundled:
            bundled[ref] = bundle(service.book.schemas, ref)
        return bundled[ref]
    for tool, base in bases(example).items():
        walker = Walker(service.listing(tool).input_schema, base, contract)
        seen: set[str] = set()
        for kind, paths in (("value", walker.strings()), ("value", walker.in_base()),
                            ("key", walker.objects())):
            for path in paths:
                case = f"{tool}:{shown(path)}" + ("{key}" if kind == "key" else "")
                if case in seen:
                    continue
                seen.add(case)
                yield case, tool, functools.partial(_placed, walker, path, case, kind == "key")


def _placed(walker: Walker, path: tuple, case: str, as_key: bool, value: str | None = None) -> Any:
    """The case's arguments: its megabyte string, or `value` in its place (the same call's shape)."""
    return walker.place(path, huge(case) if value is None else value, as_key=as_key)
