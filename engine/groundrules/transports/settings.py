"""What an operator sets on the shared HTTP server: how much each caller may hold, how long a
client may dawdle, how long a stop waits, how it logs, how much of each tool it lists. Defaults keep one principal far from the
global caps. Each setting is an option of `groundrules serve --http` (`--sessions-per-principal 64`)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field, fields
from typing import Any

from ..core import codes
from ..core.errors import refusal

LOG_FORMATS = ("text", "json")
LISTINGS = ("full", "compact")


def _setting(default: Any, help_text: str) -> Any:
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class ServerSettings:
    sessions_per_principal: int = _setting(64, "open MCP sessions one principal may hold")
    max_sessions: int = _setting(10_000, "open MCP sessions in all")
    session_idle_s: float = _setting(300.0, "seconds after which a session with no request in flight is closed")
    calls_per_principal: int = _setting(8, "calls one principal may have running at once; more wait their turn")
    turns: int = _setting(1, "requests served at once (the others wait, the principal with fewest in service first)")
    turn_limit_s: float = _setting(0.02, "seconds one part of a request is served alone before the next request "
                                         "may start beside it")
    ledger_threads: int = _setting(16, "worker threads for the calls that read or write a ledger")
    compute_threads: int = _setting(4, "worker threads for the stateless tools (explain, lock, fold, verify)")
    max_connections: int = _setting(1_000, "open connections; past it a request is answered 503")
    header_timeout_s: float = _setting(10.0, "seconds for a request head to arrive (from a connection's "
                                             "first byte or its last answer)")
    body_timeout_s: float = _setting(30.0, "seconds for a request body to arrive")
    keep_alive_s: float = _setting(5.0, "seconds an idle keep-alive connection stays open")
    grace_s: float = _setting(10.0, "on SIGTERM, seconds the calls in flight may take to finish")
    stateless: bool = _setting(False, "keep no session: every request stands alone, so any number of servers "
                                      "behind a plain balancer can share one PostgreSQL")
    log_format: str = _setting("text", "one line per call and event, as text or json")
    listing: str = _setting("full", "what tools/list shows a model: full, or compact (each tool's first "
                                    "sentence, no descriptions inside its input schema; the same schema "
                                    "otherwise, enforced as listed)")
    credentials_fail_closed: bool = _setting(False, "when the tokens file (or, with --auth oauth, the claim map) "
                                                    "fails to load on SIGHUP, refuse every token until a reload "
                                                    "succeeds, instead of keeping the previous ones")
    metrics_token_file: str | None = _setting(None, "a file holding the bearer token /metrics asks for "
                                                    "(without it /metrics is open)")

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if _kind(item) in (int, float) and not value > 0:
                raise refusal(codes.USAGE, "usage.setting_positive", option=option(item.name))
        if self.log_format not in LOG_FORMATS:
            raise refusal(codes.USAGE, "usage.setting_choice", option=option("log_format"), choices=list(LOG_FORMATS))
        if self.listing not in LISTINGS:
            raise refusal(codes.USAGE, "usage.setting_choice", option=option("listing"), choices=list(LISTINGS))


def _kind(item: Any) -> type:
    return {"int": int, "float": float, "bool": bool}.get(str(item.type), str)


def option(name: str) -> str:
    return "--" + name.removesuffix("_s").replace("_", "-")


def add_options(group: argparse._ArgumentGroup) -> None:
    """One option per setting, its default shown."""
    for item in fields(ServerSettings):
        kind, dest = _kind(item), f"setting_{item.name}"
        if kind is bool:
            group.add_argument(option(item.name), dest=dest, action="store_const", const=True,
                               help=item.metadata["help"])
        else:
            group.add_argument(option(item.name), dest=dest, type=kind,
                               metavar="FILE" if item.name.endswith("_file") else ("FORMAT" if kind is str else "N"),
                               choices=LOG_FORMATS if item.name == "log_format" else None,
                               help=f"{item.metadata['help']} (default: {item.default})")


def from_options(args: argparse.Namespace) -> ServerSettings:
    given = {item.name: getattr(args, f"setting_{item.name}") for item in fields(ServerSettings)
             if getattr(args, f"setting_{item.name}", None) is not None}
    return ServerSettings(**given)
