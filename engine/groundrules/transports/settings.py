"""What an operator sets on the shared HTTP server: how much each caller may hold, how long a
client may dawdle, how long a stop waits. Defaults keep one principal far from the global caps.
Each setting is an option of `groundrules serve --http` (`--sessions-per-principal 64`)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields


def _setting(default: float, help_text: str) -> float:
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class ServerSettings:
    sessions_per_principal: int = _setting(64, "open MCP sessions one principal may hold")
    max_sessions: int = _setting(10_000, "open MCP sessions in all")
    session_idle_s: float = _setting(300.0, "seconds after which a session with no request in flight is closed")
    calls_per_principal: int = _setting(8, "calls one principal may have running at once; more wait their turn")
    ledger_threads: int = _setting(16, "worker threads for the calls that read or write a ledger")
    compute_threads: int = _setting(4, "worker threads for the stateless tools (explain, lock, fold, verify)")
    max_connections: int = _setting(1_000, "open connections; past it a request is answered 503")
    header_timeout_s: float = _setting(10.0, "seconds for a request head to arrive (from a connection's "
                                             "first byte or its last answer)")
    body_timeout_s: float = _setting(30.0, "seconds for a request body to arrive")
    keep_alive_s: float = _setting(5.0, "seconds an idle keep-alive connection stays open")
    grace_s: float = _setting(10.0, "on SIGTERM, seconds the calls in flight may take to finish")

    def __post_init__(self) -> None:
        for item in fields(self):
            if not getattr(self, item.name) > 0:
                raise ValueError(f"{option(item.name)} must be a positive number")


def option(name: str) -> str:
    return "--" + name.removesuffix("_s").replace("_", "-")


def add_options(group: argparse._ArgumentGroup) -> None:
    """One option per setting, its default shown."""
    for item in fields(ServerSettings):
        kind = int if item.type in ("int", int) else float
        group.add_argument(option(item.name), dest=f"setting_{item.name}", type=kind, metavar="N",
                           help=f"{item.metadata['help']} (default: {item.default})")


def from_options(args: argparse.Namespace) -> ServerSettings:
    given = {item.name: getattr(args, f"setting_{item.name}") for item in fields(ServerSettings)
             if getattr(args, f"setting_{item.name}", None) is not None}
    return ServerSettings(**given)
