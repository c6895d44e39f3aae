"""The manual builds, and it documents every command and option the CLI has.

The site is built by mkdocs in this process, strictly (`mkdocs.yml`: a broken link or anchor, or a
page left out of the nav, is a warning, and a warning fails the build). The command reference is
held to the parser itself: every command at every depth (`findings list`, `tokens add`, …) needs a
section of docs/cli.md headed by its name, and every option string it takes must appear in that
section, in its group's section (`findings` for `findings list`), or in a section of the page they
link to (the options several commands share are written once, under "Caller options")."""
from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

from groundrules.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
CLI_PAGE = ROOT / "docs" / "cli.md"
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)
IN_PAGE_LINK = re.compile(r"\]\(#([\w-]+)\)")


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_the_site_builds_strictly(tmp_path):
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    assert config.strict, "mkdocs.yml must build strictly"
    warnings = _Warnings()
    logging.getLogger("mkdocs").addHandler(warnings)
    try:
        build(config)
    except Abort:
        pass                                    # the warnings below say why
    finally:
        logging.getLogger("mkdocs").removeHandler(warnings)
    assert warnings.messages == []
    built = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*.html")}
    pages = {p.relative_to(ROOT / "docs").with_suffix(".html").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages <= built


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser, help) for the parser and every subcommand below it, depth first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"]


def _sections(text: str) -> dict[str, str]:
    """Each heading's slug -> the text from it to the next heading; '' -> the page's head, up to its
    first `##` heading (what the top-level command takes)."""
    out, starts = {}, list(HEADING.finditer(text))
    first = next((m.start() for m in starts if len(m.group(1)) >= 2), len(text))
    out[""] = text[:first]
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        out[slugify(m.group(2).replace("`", ""), "-")] = text[m.start():end]
    return out


def _documented(section: str, sections: dict[str, str]) -> str:
    """A section's own text and that of the sections it links to on the same page."""
    linked = [sections[a] for a in IN_PAGE_LINK.findall(section) if a in sections]
    return "\n".join([section, *linked])


def test_every_command_has_help():
    parser = build_parser()
    for path, command in _commands(parser):
        subs = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
        for action in subs:
            helps = {c.dest: c.help for c in action._choices_actions}
            assert set(helps) == set(action.choices), path
            assert all(helps.values()), f"a subcommand of {' '.join(('groundrules', *path))} has no help"
        if len(path) == 1:
            assert command.description, f"groundrules {path[0]} has no description"


def _missing_from(page: Path) -> list[str]:
    """Every command without its section in `page`, and every option its section does not name."""
    text = page.read_text(encoding="utf-8")
    sections = _sections(text)
    by_command = {}
    for m in HEADING.finditer(text):
        named = re.fullmatch(r"`groundrules ([a-z][a-z -]*)`", m.group(2).strip())
        if named:
            by_command[tuple(named.group(1).split())] = sections[slugify(m.group(2).replace("`", ""), "-")]
    missing = []
    for path, parser in _commands(build_parser()):
        name = " ".join(("groundrules", *path))
        if path and path not in by_command:
            missing.append(f"{name}: no section headed `{name}`")
            continue
        # a command's own section, its group's (`findings` for `findings list`), and what they link to
        own = [by_command.get(path[:n], "") for n in range(1, len(path) + 1)] if path else [sections[""]]
        documented = "\n".join(_documented(section, sections) for section in own)
        for option in _options(parser):
            if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", documented):
                missing.append(f"{name}: {option}")
    return missing


def test_every_command_and_option_is_in_the_command_reference():
    missing = _missing_from(CLI_PAGE)
    assert missing == [], "missing from docs/cli.md:\n" + "\n".join(missing)


@pytest.mark.parametrize("edit, expected", [
    ("drop a section", ["groundrules findings show: no section headed `groundrules findings show`"]),
    ("drop an option", ["groundrules findings list: --history"]),
    ("drop a shared option", [f"groundrules {c}: --step-clock" for c in (
        "explain", "lock", "fold", "verify", "call", "studio", "serve", "findings list", "findings show",
        "findings approve-rule", "findings reject-rule", "evidence append", "evidence get", "evidence redact",
        "evidence interpret", "evidence fold", "decisions list", "decisions show", "decisions purge",
        "decisions export", "decisions rekey")]),
])
def test_the_reference_check_sees_what_is_missing(edit, expected, tmp_path):
    """The check is not vacuous: a section, an option or a shared option taken out of the page fails it."""
    text = CLI_PAGE.read_text(encoding="utf-8")
    if edit == "drop a section":
        start = text.index("### `groundrules findings show`")
        text = text[:start] + text[text.index("### `groundrules findings approve-rule`"):]
    elif edit == "drop an option":
        text = text.replace("`--history`", "`--all`")
    else:
        text = text.replace("`--step-clock START`", "`--clock START`")
    page = tmp_path / "cli.md"
    page.write_text(text, encoding="utf-8")
    assert _missing_from(page) == expected
