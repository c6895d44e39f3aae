"""The page around the sections, and the cells every section shares; text from the tables is
always escaped. One self-contained page: styles and script inlined, no network, no build."""
from __future__ import annotations

from html import escape
from importlib import resources

from .coverage import Coverage, Examples


def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def document(title: str, header: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{escape(title)}</title>\n<style>\n{asset('report.css')}</style>\n</head>\n"
            f"<body>\n<header>\n{header}</header>\n<main>\n{body}</main>\n"
            f"<script>\n{asset('report.js')}</script>\n</body>\n</html>\n")


GROUP_END = "</section>\n"


def group_start(anchor: str, title: str) -> str:
    """One group of sections (all decision tables, say): opening `#anchor` shows the group alone."""
    return f'<section class="group" id="{escape(anchor)}">\n<h2>{escape(title)}</h2>\n'


def heading(table_id: str, title: str) -> str:
    return f'<h3>{escape(table_id)}' + (f' <span class="title">{escape(title)}</span>' if title else "") + "</h3>"


def examples_cell(ex: Examples | None, tag: str = "td") -> str:
    """✓ passed/total, or ✗ with the first failure (all of them in the tooltip); — without examples."""
    if ex is None or not ex.total:
        return f'<{tag} class="ex none">—</{tag}>'
    if ex.failed:
        return (f'<{tag} class="ex fail" title="{escape(chr(10).join(ex.failed))}">✗ {ex.passed}/{ex.total}'
                f'<div class="why">{escape(ex.failed[0])}</div></{tag}>')
    return f'<{tag} class="ex ok">✓ {ex.passed}/{ex.total}</{tag}>'


def coverage_cell(fired: tuple | None, coverage: Coverage | None, taken: tuple = ()) -> str:
    """Cases the row fired on, and those it held on but a row before it won (lint counts both as held)."""
    if coverage is None or fired is None:
        return '<td class="cov none" data-fired="" data-cases="">no corpus</td>'
    share = len(fired) / coverage.cases if coverage.cases else 0.0
    cls = "cov" + ("" if fired else " zero")
    tip = "\n".join(fired) if fired else "no case fires this row"
    if taken:
        tip += f"\nheld, but a row before it won, on {len(taken)} case(s):\n" + "\n".join(taken)
    held = f'<span class="taken">+{len(taken)} held, taken before</span>' if taken else ""
    return (f'<td class="{cls}" data-fired="{len(fired)}" data-cases="{coverage.cases}" '
            f'data-taken="{len(taken)}" title="{escape(tip)}">'
            f'<span class="num">{len(fired)} / {coverage.cases}</span>{held}'
            f'<span class="bar"><i style="width:{share * 100:.0f}%"></i></span></td>')


def changes_block(title: str, lines: list[str]) -> str:
    """The diff's lines for one table or corpus, `-`/`+` coloured; empty when nothing changed."""
    if not lines:
        return ""
    out = []
    for line in lines:
        stripped = line.lstrip()
        cls = "minus" if stripped.startswith("- ") else "plus" if stripped.startswith("+ ") else \
            "case" if line.startswith("  ") and not line.startswith("   ") else ""
        out.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    cases = sum(1 for line in lines if line.startswith("  ") and not line.startswith("   "))
    return (f'<details class="changes" open><summary>{escape(title)}: {cases} case(s) change</summary>'
            '<pre class="diff">' + "\n".join(out) + "</pre></details>\n")
