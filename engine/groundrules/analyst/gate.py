"""The analyst's gate behind `groundrules test` and `lint`: every inline example of every table, and
every acceptance check (acceptance.py), whose tool calls go through the registry as a local agent,
so they hold for what a host receives."""
from __future__ import annotations

from typing import Any

from ..api import Caller, Service
from ..core.examples import Outcome, run_all
from ..core.rulebook import Rulebook

CALLER = Caller("groundrules-test", "agent", ("acceptance",))


def run(book: Rulebook, tables: list[str] | None = None) -> list[Outcome]:
    services: list = []          # built on the first tool call: a rulebook without acceptance needs none

    def call(tool: str, arguments: dict) -> Any:
        if not services:
            services.append(Service(book))
        return services[0].call(tool, arguments, CALLER)
    return run_all(book, tables, call)
