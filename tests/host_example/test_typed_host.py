"""Issue 20, item 7: the library ships py.typed, and a type checker accepts a host reading its results
(mypy over host.py); a host that misreads them (a key the result has not) is refused."""
from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parents[1] / "engine" / "groundrules"


def mypy(path: Path) -> tuple[str, int]:
    api = pytest.importorskip("mypy.api")
    out, err, code = api.run(["--strict", "--no-incremental", "--follow-imports=silent", "--ignore-missing-imports",
                              str(path)])
    return out + err, code


def test_the_package_says_it_is_typed():
    assert (PACKAGE / "py.typed").is_file()


@pytest.mark.extended
def test_mypy_accepts_the_host(tmp_path):
    report, code = mypy(HERE / "host.py")
    assert code == 0, report


@pytest.mark.extended
def test_mypy_refuses_a_host_that_misreads_a_result(tmp_path):
    wrong = tmp_path / "wrong_host.py"
    wrong.write_text("from groundrules import explain\n"
                     "from typing import Any\n"
                     "def f(ctx: dict[str, Any]) -> str:\n"
                     "    return explain(ctx)['primary_code']\n", encoding="utf-8")
    report, code = mypy(wrong)
    assert code != 0 and "primary_code" in report, report
