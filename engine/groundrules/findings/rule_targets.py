"""The `rule_targets` kind (rules/rule_targets.yaml): which project paths may receive an approved rule,
and the marker line that makes applying a rule idempotent.

A path is judged by its text alone, part by part, before anything touches the disk: the folder it
lies in, the forbidden parts (`.git`, hooks), the file type, and a pattern every part must fully
match, which shuts out trailing spaces, newlines, control characters and look-alike letters.
Symlinks are the writer's business (rule_files.py refuses them while it writes).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.messages import Messages, compile_messages

if TYPE_CHECKING:
    from ..core.tables import CompileContext


@dataclass(frozen=True)
class RuleTargets:
    kind: str
    id: str
    file: str
    folders: tuple
    subfolders: bool
    max_depth: int
    forbidden: frozenset
    part: re.Pattern
    markers: dict            # extension -> marker template with {proposal_id}
    messages: Messages          # name -> Template, in the bound language

    def refusal(self, path: str) -> str | None:
        """Why `path` may not receive a rule (one sentence), or None when it may."""
        parts = path.split("/")
        if len(parts) > self.max_depth:
            return self.message("depth", max=self.max_depth)
        for part in parts:
            if part in self.forbidden:
                return self.message("forbidden", part=part)
        for part in parts:
            if not self.part.fullmatch(part) or part.endswith("."):
                return self.message("part")
        folder = parts[:-1]
        if not any(self._under(folder, allowed) for allowed in self.folders):
            return self.message("folder", folders=list(self.folders))
        if self.extension(path) is None:
            return self.message("file_type", types=sorted(self.markers))
        return None

    def _under(self, folder: list, allowed: str) -> bool:
        prefix = allowed.split("/") if allowed else []
        if folder == prefix:
            return True
        return self.subfolders and bool(prefix) and folder[:len(prefix)] == prefix

    def extension(self, path: str) -> str | None:
        name = path.rsplit("/", 1)[-1]
        dot = name.rfind(".")
        ext = name[dot:].lower() if dot > 0 else ""
        return ext if ext in self.markers else None

    def marker(self, path: str, proposal_id: str) -> str:
        return self.markers[self.extension(path)].replace("{proposal_id}", proposal_id)

    def forges_marker(self, path: str, text: str) -> bool:
        """Whether `text` holds a line that looks like this type's marker (so it could fake one)."""
        template = self.markers[self.extension(path)]
        head, _, tail = template.partition("{proposal_id}")
        return any(line.strip().startswith(head.strip()) and line.strip().endswith(tail.strip())
                   for line in text.splitlines())

    def message(self, name: str, **params: Any) -> str:
        return self.messages[name].render(params)


def compile_rule_targets(data: dict, ctx: CompileContext) -> RuleTargets | None:
    before = len(ctx.faults)
    try:
        part = re.compile(data["part_pattern"])
    except re.error as exc:
        ctx.fault("bad-pattern", f"part_pattern does not compile: {exc}", ("part_pattern",))
        return None
    if part.fullmatch("..") or part.fullmatch("."):
        ctx.fault("pattern-allows-dots", "part_pattern must not match '.' or '..'", ("part_pattern",))
    messages = compile_messages(data["messages"], ctx.faults)
    table = RuleTargets("rule_targets", data["id"], ctx.source.file, tuple(data["folders"]), data["subfolders"],
                        data["max_depth"], frozenset(data["forbidden_parts"]), part,
                        {ext: spec["marker"] for ext, spec in data["file_types"].items()},
                        messages)
    if len(ctx.faults) > before:
        return None
    for verdict, examples in (("allowed", data["examples"]["allowed"]), ("refused", data["examples"]["refused"])):
        for i, example in enumerate(examples):
            refused = table.refusal(example) is not None
            if refused != (verdict == "refused"):
                ctx.fault("example-disagrees", f"example {example!r} is listed as {verdict} but the table "
                          f"{'refuses' if refused else 'allows'} it", ("examples", verdict, i),
                          "change the folders, file types or part_pattern, or the example")
    return None if len(ctx.faults) > before else table
