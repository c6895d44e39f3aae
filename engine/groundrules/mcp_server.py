"""The MCP server: every groundrules tool an agent may call, over stdio (package `mcp`, v2).

A tool is a ToolSpec: a name, a description, JSON Schemas for its input and its output (the
envelope), and `run(arguments) -> envelope`. The server hands each call's raw arguments to `run`
unvalidated, because the part validates them itself: every refusal then carries the part's own
error code inside the envelope (structured content of an isError result), instead of the SDK's
plain-text complaint. Adding a part's tool is one small function returning a ToolSpec, listed in
`tool_specs`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

from mcp.server import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent
from pydantic import ConfigDict

from . import canonical
from .errors import GroundrulesError
from .evidence import fold
from .evidence.contract import NAME as EVIDENCE_CONTRACT
from .findings import Ledger
from .findings.validate import CONTRACT as LEDGER_CONTRACT
from .locks import lock, lock_messages
from .rulebook import Rulebook
from .support_reason import explain
from .verification import verify_envelope
from .verification.contract import CONTRACT as VERIFY_CONTRACT

SERVER_NAME = "groundrules"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict
    output_schema: dict
    run: Callable[[dict], dict]       # arguments -> envelope {ok, data, warnings, error, rulebook}


class _RawArguments(ArgModelBase):
    """Accepts any arguments and passes them on as one dict: the tool validates them itself."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def _tool(spec: ToolSpec) -> Tool:
    def call(arguments: dict) -> CallToolResult:
        try:
            envelope = spec.run(arguments)
            text = canonical.dumps(envelope, indent=None)
        except Exception as exc:  # noqa: BLE001 - the last net: a tool answers with an envelope, always
            envelope = canonical.envelope(ok=False, error={
                "code": "INTERNAL_ERROR", "message": f"{spec.name} failed ({type(exc).__name__})"})
            text = canonical.dumps(envelope, indent=None)
        return CallToolResult(is_error=not envelope["ok"], structured_content=envelope,
                              content=[TextContent(type="text", text=text)])
    return Tool(fn=call, name=spec.name, description=spec.description, parameters=spec.input_schema,
                fn_metadata=FuncMetadata(arg_model=_RawArguments, output_schema=spec.output_schema),
                is_async=False)


def build_server(specs: list[ToolSpec], name: str = SERVER_NAME) -> MCPServer:
    return MCPServer(name, tools=[_tool(spec) for spec in specs], log_level="WARNING")


# ----------------------------------------------------------------------------- schemas

def _bundle(root: dict, defs: dict) -> dict:
    """`root` with the local $defs it reaches, so a client can resolve every $ref within it."""
    wanted: dict = {}
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/"):]
                if name not in wanted:
                    wanted[name] = defs[name]
                    todo.append(defs[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    out = copy.deepcopy(root)
    if wanted:
        out["$defs"] = {k: copy.deepcopy(wanted[k]) for k in sorted(wanted)}
    return out


def envelope_schema(defs: dict, data: dict | None) -> dict:
    """The envelope with `data` described by `data` (a schema using #/$defs/... refs into `defs`)."""
    root = copy.deepcopy(defs["envelope"])
    root["properties"]["data"] = {"anyOf": [{"type": "null"}, data or {"type": "object"}]}
    return _bundle(root, defs)


# ----------------------------------------------------------------------------- the parts' tools

def ledger_tools(ledger: Ledger) -> list[ToolSpec]:
    """The ten finding-ledger tools of seed 001, named as the seed names them."""
    defs = ledger.book.schemas.get(LEDGER_CONTRACT)["$defs"]
    specs = []
    for name in ledger.tools:
        schema = defs[f"{name}.input"]
        specs.append(ToolSpec(
            name=name, description=schema.get("description", ""),
            input_schema=_bundle({k: v for k, v in schema.items() if k != "description"}, defs),
            output_schema=envelope_schema(defs, {"$ref": f"#/$defs/{name}.data"}),
            run=lambda arguments, tool=name: ledger.call(tool, arguments)))
    return specs


def explain_support_tool(book: Rulebook) -> ToolSpec:
    """Part 1: why a knowledge-gateway context got its support_status (seed 000)."""
    defs = book.schemas.get(LEDGER_CONTRACT)["$defs"]

    def run(arguments: dict) -> dict:
        context = arguments.get("context") if isinstance(arguments, dict) else None
        if not isinstance(context, dict) or set(arguments) != {"context"}:
            message = book.table("support_reason").render_message("bad_arguments", {})
            error = {"code": "INVALID_ARGUMENT", "message": message}
            return canonical.envelope(ok=False, error=error, rulebook=book.version)
        return canonical.envelope(ok=True, data=explain(context, book), rulebook=book.version)
    return ToolSpec(
        name="explain_support",
        description="Why a knowledge-gateway v1 context has its support_status: the support_reason object.",
        input_schema={"type": "object", "required": ["context"], "additionalProperties": False,
                      "properties": {"context": {"type": "object",
                                                 "description": "a knowledge-gateway v1 context"}}},
        output_schema=envelope_schema(defs, {"type": "object"}),
        run=run)


def verify_extraction_tool(book: Rulebook) -> ToolSpec:
    """Part 3: may a model's extraction candidate be used? (seed 002); refusals in the error branch."""
    ledger_defs = book.schemas.get(LEDGER_CONTRACT)["$defs"]
    verify_defs = book.schemas.get(VERIFY_CONTRACT)["$defs"]
    input_schema = _bundle({
        "type": "object", "required": ["request", "candidate"], "additionalProperties": False,
        "properties": {
            "request": {"$ref": "#/$defs/request"},
            "schema": {"type": "object", "description": "the extension JSON Schema, inline"},
            "instance": {"type": "string", "description": "or the name of a bundled instance (rules/instances/)"},
            "candidate": {"$ref": "#/$defs/candidate"}}}, verify_defs)
    return ToolSpec(
        name="verify_extraction",
        description="Verify a model's intent + extraction candidate against the request and the extension "
                    "schema: field selection, verbatim grounding of every quote, description checks.",
        input_schema=input_schema,
        output_schema=envelope_schema(ledger_defs, {"type": "object"}),
        run=lambda arguments: verify_envelope(arguments, book))


def lock_message_tool(book: Rulebook) -> ToolSpec:
    """Part 2: the evidence locks of a message, or of `messages`, before any model reads them."""
    defs = book.schemas.get(LEDGER_CONTRACT)["$defs"]
    vocabulary = book.schemas.get(EVIDENCE_CONTRACT)["$defs"]
    message = {"type": "object", "required": ["id", "role", "content"],
               "properties": {"id": {"type": "string"}, "role": vocabulary["message_role"],
                              "content": {"type": "string"}, "state": vocabulary["message_state"]}}

    def run(arguments: dict) -> dict:
        try:
            if set(arguments) == {"message"}:
                locks = lock(arguments["message"], book)
            elif set(arguments) == {"messages"}:
                locks = lock_messages(arguments["messages"], book)
            else:
                raise GroundrulesError("INVALID_MESSAGE", "lock_message takes either 'message' or 'messages'")
        except GroundrulesError as exc:
            return canonical.envelope(ok=False, error=exc.as_dict(), rulebook=book.version)
        return canonical.envelope(ok=True, data={"locks": locks}, rulebook=book.version)
    return ToolSpec(
        name="lock_message",
        description="Evidence locks (phones, WeChat/QQ accounts, emails, ID numbers, flow markers) of one "
                    "message or a list, with raw quote, code-point locator, normalized value and validity.",
        input_schema={"type": "object", "additionalProperties": False,
                      "properties": {"message": message, "messages": {"type": "array", "items": message}}},
        output_schema=envelope_schema(defs, {"type": "object"}),
        run=run)


def fold_evidence_tool(book: Rulebook) -> ToolSpec:
    """Part 2: records + interpretations folded into current slot state per scope (seed 003)."""
    defs = book.schemas.get(LEDGER_CONTRACT)["$defs"]

    def run(arguments: dict) -> dict:
        try:
            data = fold(arguments, book)
        except GroundrulesError as exc:
            return canonical.envelope(ok=False, error=exc.as_dict(), rulebook=book.version)
        return canonical.envelope(ok=True, data=data, rulebook=book.version)
    return ToolSpec(
        name="fold_evidence",
        description="Check an interpretation (events + a disposition for every lock) against the evidence "
                    "records and fold them into slot state per scope; refusals say whether to recompute.",
        input_schema={"type": "object", "required": ["now", "records", "interpretations"],
                      "properties": {"now": {"type": "string", "description": "the only clock the fold reads"},
                                     "records": {"type": "array", "items": {"type": "object"}},
                                     "interpretations": {"type": "array", "items": {"type": "object"}}}},
        output_schema=envelope_schema(defs, {"type": "object"}),
        run=run)


def tool_specs(ledger: Ledger, book: Rulebook) -> list[ToolSpec]:
    """Every tool the server exposes; a new part adds its ToolSpec factory here."""
    return ledger_tools(ledger) + [explain_support_tool(book), lock_message_tool(book),
                                   fold_evidence_tool(book), verify_extraction_tool(book)]


def serve(ledger: Ledger, book: Rulebook) -> None:
    """Serve every tool over stdio until the client hangs up."""
    build_server(tool_specs(ledger, book)).run()
