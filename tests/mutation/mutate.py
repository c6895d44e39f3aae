"""Mutation testing of the engine's core with mutmut: does the suite notice when the code is wrong?

    python tests/mutation/mutate.py                     # the five targets below, their test folders
    python tests/mutation/mutate.py --only engine/groundrules/core/templates.py --tests tests/engine
    python tests/mutation/mutate.py --mutants 'groundrules.core.templates.*'   # a subset of the mutants
    python tests/mutation/mutate.py --results           # the last run's survivors, one per line

mutmut (pip install mutmut; 3.x) imports the mutated package from `mutants/`, `mutants/src` or
`mutants/source`, never from a folder named `engine/`. So this script stages a copy of the tracked
files with engine/groundrules/ moved to src/groundrules/ (the engine finds its tables two folders
above the package, which holds for both layouts), writes mutmut's setup.cfg there, and runs mutmut
in it, niced, with PYTHONPATH pointing at the mutated copy (a test that spawns `python -m
groundrules` then runs the mutant too). The working tree is never touched. The rulebook cache is
turned off (a cached verdict would hide a mutant in the compilers) and the PostgreSQL
parametrizations are left out (the SQLite ones run the same domain code).

A rerun in the same --stage folder continues where the last one stopped; --fresh starts over.
docs/mutation.md lists the survivors of the last full run with a verdict each.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("engine/groundrules/core/decide.py", "engine/groundrules/core/conditions.py", "engine/groundrules/core/templates.py",
           "engine/groundrules/locks/steps.py", "engine/groundrules/evidence/*.py")
TESTS = ("tests/engine", "tests/locks", "tests/evidence", "tests/support_reason")
# left out of every mutant's run: PostgreSQL (a cluster per mutant; SQLite runs the same domain code)
# and the whole-corpus runs in fresh processes per hash seed (mutmut cannot see into a process it did
# not fork, and under its call tracing they outlast their timeout)
# A mutant's run is a subset of the tests, so some snapshots go unused: syrupy only warns then
PYTEST_ARGS = ("-n", "0", "-k", "not postgres and not across-three-hash-seeds", "--snapshot-warn-unused")
# and tests that fail in mutmut's clean run, with no mutant active: the first two read the engine's
# source text (mutmut's copy holds every mutant beside the original); the third failed there too
DESELECT = ("tests/engine/test_lint_checks.py::test_a_mistyped_guard_literal_is_reported_at_its_line_in_words",
            "tests/engine/test_analyst_docs.py::test_every_code_the_engine_can_emit_has_an_entry_with_a_wrong_and_a_right_example",
            "tests/engine/test_corpus_diff.py::test_the_diff_runs_the_findings_corpus_over_an_edited_transition_table")


def staged(where: str) -> str:
    """A path of this repository as it is in the staged copy."""
    return "src/" + where[len("engine/"):] if where.startswith("engine/") else where


def stage(folder: Path) -> None:
    """The files git knows or would add (as they are on disk) copied to `folder`, engine/ renamed src/."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode("utf-8").split("\0")):
        source, target = ROOT / name, folder / staged(name)
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    # mutmut runs the tests in mutants/, a copy it fills; the tables there are committed first, for
    # the tests that read the tables of a git revision (`diff --base HEAD`)
    mutants = folder / "mutants"
    for tables in ("rules", "locks", "schemas"):
        shutil.copytree(folder / tables, mutants / tables)
    git = ["git", "-c", "user.name=mutation", "-c", "user.email=mutation@groundrules.invalid",
           "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "rules", "locks", "schemas"], ["commit", "-q", "-m", "the tables"]):
        subprocess.run(git + args, cwd=mutants, capture_output=True, check=True)
    (mutants / "engine").symlink_to("src", target_is_directory=True)   # tests that read the engine's source


def config(only: list[str], tests: list[str], timeout_multiplier: float, deselect: list[str]) -> str:
    def listed(key: str, values) -> str:
        return f"{key}=\n" + "".join(f"    {v}\n" for v in values)
    return ("[mutmut]\nsource_paths=src/groundrules\n" + listed("only_mutate", [staged(o) for o in only])
            + listed("also_copy", ["rules", "locks", "schemas", "snapshots", "README.md", "docs"])
            + listed("pytest_add_cli_args", [*PYTEST_ARGS, *(f"--deselect={d}" for d in deselect)])
            + listed("pytest_add_cli_args_test_selection", tests)
            + f"timeout_multiplier={timeout_multiplier}\n")


def mutmut(folder: Path, *args: str, nice: int = 10) -> int:
    env = dict(os.environ, GROUNDRULES_CACHE="off", PYTHONPATH=str(folder / "mutants" / "src"),
               PYTHONHASHSEED="0")
    env.pop("PYTEST_ADDOPTS", None)
    command = [sys.executable, "-m", "mutmut", *args]
    if nice:
        command = ["nice", "-n", str(nice), *command]
    return subprocess.run(command, cwd=folder, env=env).returncode


def survivors(folder: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(folder / "mutants" / "src"))
    out = subprocess.run([sys.executable, "-m", "mutmut", "results"], cwd=folder, env=env,
                         capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip().endswith(": survived")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stage", type=Path, default=Path("/tmp/groundrules-mutation"),
                        help="where the copy and mutmut's state live (default: %(default)s)")
    parser.add_argument("--only", action="append", metavar="GLOB",
                        help="a module (glob) to mutate, as a path of this repository (repeatable; default: "
                             + ", ".join(TARGETS) + ")")
    parser.add_argument("--tests", action="append", metavar="PATH",
                        help="a test folder or file the mutants run against (repeatable; default: "
                             + ", ".join(TESTS) + ")")
    parser.add_argument("--mutants", action="append", metavar="PATTERN", default=[],
                        help="test only the mutants whose name matches (fnmatch; repeatable), e.g. "
                             "'groundrules.locks.steps.*'; default: every mutant of the modules")
    parser.add_argument("--deselect", action="append", metavar="NODEID", default=[],
                        help="leave out a test that fails without any mutant (mutmut needs a green run first); "
                             "beside the ones left out by default: " + ", ".join(DESELECT))
    parser.add_argument("--max-children", type=int, default=2, help="mutants tested at once (default: %(default)s)")
    parser.add_argument("--timeout-multiplier", type=float, default=15.0,
                        help="a mutant's tests may take this many times their clean duration (default: %(default)s)")
    parser.add_argument("--fresh", action="store_true", help="start over instead of continuing the last run")
    parser.add_argument("--results", action="store_true", help="only print the last run's survivors")
    args = parser.parse_args(argv)
    folder = args.stage.resolve()
    if args.results:
        print("\n".join(survivors(folder)))
        return 0
    if args.fresh and folder.exists():
        shutil.rmtree(folder)
    if not (folder / "src").is_dir():
        stage(folder)
    (folder / "setup.cfg").write_text(config(args.only or list(TARGETS), args.tests or list(TESTS),
                                             args.timeout_multiplier, [*DESELECT, *args.deselect]), encoding="utf-8")
    # on PYTHONPATH before mutmut fills it: a folder missing at start-up is never looked in again
    (folder / "mutants" / "src").mkdir(exist_ok=True)
    code = mutmut(folder, "run", "--max-children", str(args.max_children), *args.mutants)
    found = survivors(folder)
    print(f"{len(found)} survivor(s); `mutmut show NAME` in {folder} prints one", *found, sep="\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
