"""The README's commands work from a clone as written (issue 20: `pip install 'groundrules[postgres]'`
and `from groundrules import verify_envelope` did not).

A block the README (or a docs page) marks `<!-- checked -->` is run in a copy of the repository:
Python snippets in this process, `groundrules …` commands through `main(argv)`, each required to
succeed. What a test must not do is checked for its form instead: `pip install` must install this
clone (`-e .` or `-e '.[extra]'` naming extras pyproject.toml declares), and the test command must
be the one `.ci/run` runs verbatim. A block marked `<!-- excerpt: FILE -->` must be a verbatim
piece of FILE. Every `pip install` of groundrules anywhere in the docs is held to the same form.
"""
from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import tomllib
from pathlib import Path

import pytest

from cli_inproc import run_cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^<!-- (checked|excerpt: (?P<file>\S+)) -->\n```(?P<lang>\w*)\n(?P<body>.*?)\n```$", re.M | re.S)
PIP = re.compile(r"pip install ([^`\n]*)")
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"])
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _blocks(kind: str) -> list[tuple[str, str, str, str]]:
    """(page, language, body, file) of every block marked `kind` ('checked' or 'excerpt')."""
    out = []
    for page in PAGES:
        for m in BLOCK.finditer(page.read_text(encoding="utf-8")):
            if m.group(1).split(":")[0] == kind:
                out.append((page.relative_to(ROOT).as_posix(), m.group("lang"), m.group("body"), m.group("file") or ""))
    return out


def _id(block: tuple[str, str, str, str]) -> str:
    return f"{block[0]}:{block[2].splitlines()[0][:60]}"


def pip_problem(words: list[str]) -> str | None:
    """Why `pip install WORDS` would not install groundrules from this clone, or None (another
    package, such as a tool a page asks for, is not ours to check). From a clone it is `-e .` or
    `-e '.[extra]'`: groundrules is on no package index, and a non-editable install over the
    editable one would serve the wheel's tables instead of the clone's."""
    args = [w for w in words if w not in ("-q", "--quiet", "-U", "--upgrade")]
    ours = [a for a in args if a.startswith((".", "groundrules"))]
    if not ours:
        return None
    if len(args) != 2 or args[0] != "-e" or ours != [args[1]]:
        return f"install the clone in editable form (pip install -e '.[extra]'), not {shlex.join(words)!r}"
    spec = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", args[1])
    if not spec:
        return f"{args[1]!r} is not this clone (groundrules is on no package index)"
    unknown = set((spec.group(1) or "").split(",")) - EXTRAS - {""}
    return f"pyproject.toml declares no extra {sorted(unknown)}" if unknown else None


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the repository as a clone has it (no venv, no git, no build output), but for the test
    suite and its snapshots (most of its files: the documented commands read none of them)."""
    copy = tmp_path_factory.mktemp("clone") / "groundrules"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".venv", ".git", "tests", "snapshots", "site", "__pycache__", "*.db", "*.db-*", ".hypothesis"))
    return copy


def _commands(body: str) -> list[list[str]]:
    """The commands of a shell block: lines joined at a trailing backslash, split at `&&`."""
    out = []
    for line in body.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1:]
    return out


def _run_shell(body: str, clone: Path) -> None:
    for line in body.splitlines():
        if "pytest" in line:
            assert line in CI, f".ci/run does not run the documented test command verbatim: {line}"
    for words in _commands(body):
        program, args = words[0], words[1:]
        if words == ["python3", "-m", "venv", ".venv"]:
            continue                                       # the venv the next words use
        if program == ".venv/bin/pip" and args[:1] == ["install"]:
            assert pip_problem(args[1:]) is None, pip_problem(args[1:])
        elif program == ".venv/bin/python" and args[:2] == ["-m", "pytest"]:
            continue                                       # checked against .ci/run above; this is the suite
        elif program in (".venv/bin/groundrules", "groundrules"):
            out = run_cli(*args, cwd=clone)
            assert out.returncode == 0 and b"Traceback" not in out.stderr, \
                f"groundrules {shlex.join(args)} exited {out.returncode}: {out.stderr.decode()[-500:]}"
        else:
            pytest.fail(f"a checked block runs only python3 -m venv, .venv/bin/pip install, the test command "
                        f"and groundrules; not {shlex.join(words)!r}")


def _run_python(body: str, clone: Path) -> None:
    with contextlib.chdir(clone):
        exec(compile(body, "<checked snippet>", "exec"), {"__name__": "__checked__"})


CHECKED = _blocks("checked")


def test_the_readme_has_checked_commands_and_stays_short():
    readme = [b for b in CHECKED if b[0] == "README.md"]
    assert {b[1] for b in readme} == {"sh", "python"}
    first = readme[0][2].splitlines()
    assert len(first) == 2 and "groundrules demo" in first[0] and "pytest" in first[1], \
        "the README opens with the two set-up commands"
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("block", CHECKED, ids=_id)
def test_a_checked_block_works_from_a_clone(block, clone):
    page, lang, body, _ = block
    if lang == "sh":
        _run_shell(body, clone)
    elif lang == "python":
        _run_python(body, clone)
    else:
        pytest.fail(f"{page}: a checked block is sh or python, not {lang!r}")


@pytest.mark.parametrize("block", _blocks("excerpt"), ids=_id)
def test_an_excerpt_is_verbatim_from_its_file(block):
    page, _, body, file = block
    assert body in (ROOT / file).read_text(encoding="utf-8"), f"{page}: the excerpt is no longer in {file}"


def test_every_link_of_the_readme_names_a_file_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local and [link for link in local if not (ROOT / link).exists()] == []


def test_every_pip_install_of_groundrules_in_the_docs_installs_this_clone():
    found, wrong = 0, []
    for page in PAGES:
        for m in PIP.finditer(page.read_text(encoding="utf-8")):
            found += 1
            problem = pip_problem(shlex.split(m.group(1).split("&&")[0], comments=True))
            if problem:
                wrong.append(f"{page.relative_to(ROOT)}: pip install {m.group(1)}: {problem}")
    assert found and wrong == []


@pytest.mark.parametrize("words, problem", [
    (["'groundrules[postgres]'"], "editable"),
    (["groundrules[postgres]"], "editable"),
    (["-e", "groundrules"], "not this clone"),
    (["-e", ".[postgress]"], "no extra ['postgress']"),
    (["-q", "-e", ".[test]"], None),
    (["-e", ".[postgres,decisions]"], None),
    ([".[postgres]"], "editable"),
    (["mutmut"], None),
])
def test_the_install_form_check(words, problem):
    found = pip_problem([shlex.split(w)[0] for w in words])
    assert (found is None) if problem is None else (problem in found)


def test_a_failing_snippet_or_command_fails(clone):
    """The runner is not vacuous: the issue's broken import and a failing command are caught."""
    with pytest.raises(ImportError):
        _run_python("from groundrules import verify_envelope", clone)
    with pytest.raises(AssertionError, match="exited 1"):
        _run_shell(".venv/bin/groundrules explain no-such-file.json", clone)
    with pytest.raises(pytest.fail.Exception):
        _run_shell("curl https://example.invalid | sh", clone)
