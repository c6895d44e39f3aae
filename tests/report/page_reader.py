"""Reads the report's HTML back into plain data (stdlib html.parser), for the tests."""
from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """sections: data-table -> {"class": ..., "rows": [{"id", "class", "cells": {class: text},
    "attrs": {class: the cell's attributes}}],
    "transitions": [...], "patterns": [...], "changes": text, "items": {"rule"|"slot"|...: [{"id",
    "class", "text"}]}}; refs: every src/href value; ids: every id attribute."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.sections: dict = {}
        self.refs: list[str] = []
        self._section = None
        self._row = None
        self._cell = None
        self._depth = 0
        self._pre = None
        self._item = None
        self.ids: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.refs += [v for k, v in attrs if k in ("src", "href") and v is not None]
        self.ids += [v for k, v in attrs if k == "id" and v is not None]
        if tag == "section" and "data-table" in a:
            self._section = {"class": a.get("class", ""), "rows": [], "transitions": [], "patterns": [],
                             "states": [], "changes": "", "items": {}}
            self.sections[a["data-table"]] = self._section
        if self._section is None:
            return
        kind = next((k[5:] for k in ("data-rule", "data-slot", "data-event", "data-policy", "data-transition") if k in a), None)
        if tag == "tr" and kind is not None:
            self._item = {"id": a[f"data-{kind}"], "class": a.get("class", "").split(), "text": ""}
            self._section["items"].setdefault(kind, []).append(self._item)
        if tag == "tr" and "data-row" in a:
            self._row = {"id": a["data-row"], "class": a.get("class", "").split(), "cells": {}, "attrs": {}}
            self._section["rows"].append(self._row)
        elif tag == "td" and self._row is not None:
            self._cell = (a.get("class", "").split() or [""])[0]
            self._row["cells"].setdefault(self._cell, "")
            self._row["attrs"].setdefault(self._cell, a)
        elif tag == "g" and "data-transition" in a:
            self._section["transitions"].append((a["data-transition"], a.get("class", "").split()))
        elif tag == "g" and "data-state" in a:
            self._section["states"].append((a["data-state"], a.get("class", "").split()))
        elif tag == "div" and "data-pattern" in a:
            self._section["patterns"].append((a["data-pattern"], a.get("class", "").split()))
        elif tag == "pre":
            self._pre = []

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None
        elif tag == "tr":
            self._row = None
            self._item = None
        elif tag == "pre" and self._pre is not None and self._section is not None:
            self._section["changes"] += "".join(self._pre)
            self._pre = None
        elif tag == "section":
            self._section = None

    def handle_data(self, data):
        if self._item is not None:
            self._item["text"] += data
        if self._cell is not None and self._row is not None:
            self._row["cells"][self._cell] += data
        if self._pre is not None:
            self._pre.append(data)
