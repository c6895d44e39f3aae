"""The analyst's gate (issues 12 and 36): `groundrules lint` + `groundrules test` green means CI green.

In a copy of the repository, four edits an analyst makes without Python, each placed by what the
tables hold (tests/table_edits.py), never by searching them for text, and each named afresh when the
tables already hold the name (an analyst may have added the very code this test adds):
1. a diagnostic reason code between the first two diagnostics, reading a context field the analyst
   declares in the contract (`evidence[].page_date`, a date test durable-rules cannot express: the
   oracle reports the row out of its reach), with examples and a corpus case added by
   `groundrules case add`;
2. a lock table for Hong Kong mobiles (+852), a slot consuming its kind, and the chat corpus
   labelled as `groundrules diff --base HEAD` shows the new locks (`locks:` labels);
3. a finding state reachable from `supported`;
4. the merge policy ranking an injected (CRM) field below the user's own words.
Then lint and test pass and each edit is live. The two tests at the end run pytest inside the copy,
so they are extended (slow by nature: a nested run): `groundrules test --accept` (the reviewed
snapshot update, a groundrules command) leaves `groundrules test --snapshots` green (two nested runs
of the snapshot-owning modules), and the whole default suite passes in the copy (minutes): no Python
or test-file edit is needed.

The inner suites run with GROUNDRULES_GATE_INNER=1, which leaves this folder out (conftest.py).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import load_rulebook
from table_edits import TableFile


ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "schemas/knowledge-gateway.v1.schema.json"


def _fresh(name: str, taken) -> str:
    """`name`, or `name_2`, ... when the tables already hold it: an analyst may add the very code,
    state or table this test adds, and the test must still add one of its own."""
    taken = set(taken)
    n, out = 1, name
    while out in taken:
        n += 1
        out = f"{name}_{n}"
    return out


def _copy_repo(dest: Path) -> Path:
    """A checkout of the repository as it is (tracked and untracked files, not ignored ones),
    committed, so that the analyst's edits are uncommitted changes as in a clone."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    _commit(dest, "before the analyst's edits", init=True)
    return dest


def _commit(repo: Path, message: str, init: bool = False) -> None:
    git = ["git", "-c", "user.name=analyst", "-c", "user.email=analyst@groundrules.invalid", "-c", "init.defaultBranch=main"]
    for args in ([["init", "-q"]] if init else []) + [["add", "-A"], ["commit", "-q", "-m", message]]:
        subprocess.run(git + args, cwd=repo, capture_output=True, check=True)


def _diagnostics(repo: Path) -> list[str]:
    table = TableFile(repo / "rules" / "support_reason.yaml")
    return [c for c in table.at("priority") if table.at("outputs", c).get("role") == "diagnostic"]


# -- edit 1: a reason code between two diagnostics, reading a context field the analyst declares ----

def _add_stale_evidence(repo: Path) -> dict:
    """`stale_evidence` between the first two diagnostic codes, firing when some evidence page is
    dated before 2023: the contract gains `evidence[].page_date` and the code in its enum, the table
    an output, a priority place and a row with examples, the corpus a case (`groundrules case add`).
    durable-rules has no calendar: the oracle must report the row out of its reach, not fail."""
    table = TableFile(repo / "rules" / "support_reason.yaml")
    code = _fresh("stale_evidence", table.at("outputs"))
    first = _diagnostics(repo)[0]
    contract_path = repo / CONTRACT
    contract = json.loads(contract_path.read_text("utf-8"))
    field = _fresh("page_date", contract["properties"]["evidence"]["items"]["properties"])
    contract["properties"]["evidence"]["items"]["properties"][field] = {"type": "string", "format": "date"}
    enum = contract["$defs"]["reason_code"]["enum"]
    enum.insert(enum.index(first) + 1, code)
    contract_path.write_text(json.dumps(contract, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    table.insert_after(("outputs", first), f"{code}: {{label: 证据页面已过期, role: diagnostic}}")
    table.add_item(("priority",), code, after=table.at("priority").index(first))
    table.insert_after(("rows", len(table.at("rows")) - 1), f"""- id: {code}
  description: some evidence page is dated before 2023
  when: {{field: evidence, any: {{field: {field}, before: "2023-01-01"}}}}
  output: {{detail: 有证据页面早于 2023 年}}
  examples:
    - given: {{evidence: [{{id: e1, {field}: "2020-05-01"}}]}}
      fires: true
      output: {{detail: 有证据页面早于 2023 年}}
    - given: {{evidence: [{{id: e1, {field}: "2024-05-01"}}]}}
      fires: false""")
    case = json.loads((repo / "tests/cases/support_reason/sufficient-guokao-registration-time.json").read_text("utf-8"))
    case["evidence"][0][field] = "2020-05-01"
    source = repo.parent / "stale-case.json"
    source.write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    added = _cli(repo, "case", "add", "support_reason", str(source), "--name", f"sufficient-{code.replace('_', '-')}")
    assert added.returncode == 0, added.stderr.decode()
    assert code in added.stdout.decode()
    return {"code": code, "case": f"sufficient-{code.replace('_', '-')}"}


# -- edit 2: a lock table for Hong Kong mobiles, consumed by a slot, labelled in the chat corpus ----

HK_TABLE = """kind: lock_patterns
id: {id}
title: 香港手机号（Hong Kong mobile）
description: +852 (or 00852) and eight digits starting 5, 6, 7 or 9; without the prefix, no lock
timeout_ms: 250
invalid_reasons:
  wrong_length: a Hong Kong mobile number has eight digits
patterns:
  - id: international
    kind: {kind}
    description: the prefix and eight digits, grouped four and four or not
    regex: '(?:\\+|00)852[ \\t\\u3000-]?[5679][0-9]{{3}}[ \\t\\u3000-]?[0-9]{{4}}(?![0-9])'
    prefilter: ["852"]
    counts_in:
      roles: [user, tool]
      states: [sent]
    normalize:
      - step: strip_labels
        labels: ["+852", "00852"]
      - step: delete_chars
        chars: " \\t\\u3000-"
    validate:
      - {{check: length, equals: 8, reason: wrong_length}}
    examples:
      - name: grouped
        text: "我的香港号码 +852 6000 0000"
        locks:
          - {{quote: "+852 6000 0000", start: 7, end: 21, normalized_value: "60000000", valid: true}}
      - name: eight digits without the prefix
        text: "6000 0000"
        locks: []
"""


def _add_hk_lock(repo: Path) -> dict:
    """`locks/hk_mobile.yaml`, a slot that consumes its kind, a chat message labelled with it, and
    every lock `groundrules diff` shows it adding to the chat corpus labelled as the analyst reads it
    (the corpus labels +852 numbers nowhere: they were no phone)."""
    taken = {p.stem for p in (repo / "locks").glob("*.yaml")}
    table_id = _fresh("hk_mobile", taken)
    (repo / "locks" / f"{table_id}.yaml").write_text(HK_TABLE.format(id=table_id, kind=table_id), encoding="utf-8")
    merge = TableFile(repo / "rules" / "merge.yaml")
    merge.insert_after(("slots", list(merge.at("slots"))[-1]), f"{table_id}: {{label: 香港手机号, inherit: true, locks: "
                       f"{{kinds: [{table_id}], required: true, match: normalized_value}}}}")
    files = sorted((repo / "tests/cases/lock_chat").glob("*.yaml"))
    chat = TableFile(next((p for p in files if p.stem == "country_code"), files[0]))
    chat.insert_after(("messages", len(chat.at("messages")) - 1), f"""- text: "香港的手机 +852 6000 0000，白天打"
  locks: {{{table_id}: [["+852 6000 0000", "60000000"]]}}""")
    diff = json.loads(_cli(repo, "diff", "--base", "HEAD", "--json").stdout)["data"]
    for change in diff["chat"]["changes"]:
        folder, category = change["case"].split("/")
        path = repo / "tests/cases" / folder / f"{category}.yaml"
        labels: dict = {}
        for message in change["messages"]:
            for added in message.get("added", ()):
                if added["kind"] == table_id:
                    labels.setdefault(message["message"], []).append(added)
        if not labels:
            continue
        doc = TableFile(path)
        for message_id, locks in sorted(labels.items(), key=lambda kv: -int(kv[0].split(":")[1])):
            n = int(message_id.split(":")[1]) - 1
            if "locks" in doc.at("messages", n):
                continue                                        # the message written above
            said = ", ".join(f'[{json.dumps(lock["quote"], ensure_ascii=False)}, "{lock["normalized_value"]}"'
                             + ("" if lock["valid"] else ", false") + "]" for lock in locks)
            doc.insert_after(("messages", n, list(doc.at("messages", n))[-1]), f"locks: {{{table_id}: [{said}]}}")
    return {"table": table_id}


# -- edit 3: a finding state reachable from `supported` ------------------------------------------

def _add_disputed_state(repo: Path) -> dict:
    table = TableFile(repo / "rules" / "finding_states.yaml")
    states = ("machines", "epistemic", "states")
    state = _fresh("disputed_by_user", table.at(*states))
    table.insert_after(states + (list(table.at(*states))[-1],), f"{state}: {{label: 用户提出异议}}")
    transitions = ("machines", "epistemic", "transitions")
    moves = table.at(*transitions)
    out_of_supported = [m for m in moves if "supported" in m["from"]]
    table.insert_after(transitions + (len(moves) - 1,),
                       f"- id: {_fresh('user-disputes', [m['id'] for m in moves])}\n  from: [supported]\n  to: {state}")
    for i, move in enumerate(table.at(*transitions)):          # from the disputed state, where supported may go
        if move in out_of_supported and move["to"] != state:
            table.add_item(transitions + (i, "from"), state)
    return {"state": state}


# -- edit 4: the merge policy: an injected (CRM) field ranks below the user's own words ---------------

def _lower_injected_fields(repo: Path) -> dict:
    merge = TableFile(repo / "rules" / "merge.yaml")
    ranks = {code: out["rank"] for code, out in merge.at("sources", "outputs").items()}
    merge.write_scalar(("sources", "outputs", "system", "rank"), ranks["user"] - 1)
    return {"rank": ranks["user"] - 1}


def _env(repo: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo / "engine"), GROUNDRULES_GATE_INNER="1",
               PYTHONIOENCODING="utf-8")
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _cli(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The command over the copy's tables (the copy's code is this checkout's)."""
    return run_cli("--rules", repo, *args, stdin=stdin, cwd=repo)


def _pytest(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest in the copy, with the reviewed snapshot update the analyst runs."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "--snapshot-update", "-p", "no:cacheprovider", *args],
                          cwd=repo, env=_env(repo), capture_output=True, timeout=3600)


@pytest.fixture(scope="module")
def edited(tmp_path_factory) -> tuple[Path, dict]:
    if os.environ.get("GROUNDRULES_GATE_INNER"):
        pytest.fail("the gate test must not run inside its own inner suite")
    repo = _copy_repo(tmp_path_factory.mktemp("analyst") / "repo")
    shutil.copytree(repo / "snapshots", repo.parent / "snapshots-before")
    made = {"stale": _add_stale_evidence(repo), "hk": _add_hk_lock(repo), "state": _add_disputed_state(repo),
            "merge": _lower_injected_fields(repo)}
    return repo, made


def test_lint_and_test_pass_after_the_edits(edited):
    repo, made = edited
    lint = _cli(repo, "lint")
    report = lint.stdout.decode()
    assert lint.returncode == 0, report
    assert "lint: 0 error(s)" in report
    names = (made["stale"]["code"], made["hk"]["table"], made["state"]["state"])
    assert not [line for line in report.splitlines() if "[warning]" in line and any(n in line for n in names)], report
    test = _cli(repo, "test", "-v")
    text = test.stdout.decode()
    assert test.returncode == 0, text
    code = made["stale"]["code"]
    for new in (f"support_reason:{code}:1", f"support_reason:{code}:2", f"{made['hk']['table']}:international:1",
                f"support_reason.acceptance:requires.support_reason.every_row_fires.{code}"):
        assert f"ok {new}" in text, new


def test_each_edit_is_live(edited, tmp_path):
    repo, made = edited
    case = repo / f"tests/cases/support_reason/{made['stale']['case']}.json"
    data = json.loads(_cli(repo, "explain", str(case)).stdout)["data"]
    assert made["stale"]["code"] in [r["code"] for r in data["reasons"]]
    locked = _cli(repo, "lock", "-", stdin=json.dumps({"id": "m1", "role": "user", "content": "电话 +852 6000 0000"}))
    assert [(lock["kind"], lock["normalized_value"]) for lock in json.loads(locked.stdout)["data"]["locks"]] == [
        (made["hk"]["table"], "60000000")]
    db = str(tmp_path / "ledger.db")
    common = ("--db", db, "--project", "p")
    logged = json.loads(_cli(repo, "call", *common, "log_finding", "-", stdin=json.dumps(
        {"claim_kind": "diagnosis", "statement": "批量为 32 时显存溢出", "retrieval_policy": "relevant",
         "scope": {"match": {"runtime.backend": "vLLM"}}})).stdout)
    finding_id, version = logged["data"]["finding_id"], logged["data"]["version"]
    moved = json.loads(_cli(repo, "call", *common, "set_finding_state", "-", stdin=json.dumps(
        {"finding_id": finding_id, "expected_version": version, "epistemic_state": made["state"]["state"],
         "reason": "用户提出异议"})).stdout)
    assert moved["error"]["code"] == "INVALID_STATE_TRANSITION"      # only from supported
    policy = load_rulebook(repo, cache=False).table("merge")           # the fold ranks a CRM record below the user
    record = {"type": "injected_field", "origin": "crm.account"}
    user = {"type": "message", "role": "user"}
    assert policy.source_of({"record": record})[1] == made["merge"]["rank"] < policy.source_of({"record": user})[1]


@pytest.mark.extended
def test_the_snapshots_are_accepted_by_a_groundrules_command(edited):
    """The analyst's one other step, after reading `groundrules diff --base HEAD`: `groundrules test
    --accept` (never a pytest flag) rewrites the stale snapshots and says which; then `groundrules
    test --snapshots` passes, and the new corpus case is in the support_reason snapshot."""
    repo, made = edited
    accepted = _cli(repo, "test", "--accept")
    said = accepted.stdout.decode()
    assert accepted.returncode == 0, said
    assert "snapshots/support_reason/test_support_corpus/test_support_reason_corpus_snapshot.json: rewritten" in said
    checked = _cli(repo, "test", "--snapshots")
    assert checked.returncode == 0, checked.stdout.decode()
    assert "0 file(s) rewritten, 0 failure(s)" in checked.stdout.decode()
    corpus = json.loads((repo / "snapshots/support_reason/test_support_corpus/"
                                "test_support_reason_corpus_snapshot.json").read_text("utf-8"))
    assert made["stale"]["code"] in [r["code"] for r in corpus[made["stale"]["case"]]["reasons"]]


@pytest.mark.extended
def test_the_whole_suite_passes_in_the_copy(edited):
    """The four edits, with no Python or test-file edit: the whole default suite passes in the copy
    once `groundrules test --accept` has run (the test above, or here if run alone)."""
    repo, _ = edited
    _cli(repo, "test", "--accept")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                         cwd=repo, env=_env(repo), capture_output=True, timeout=3600)
    assert run.returncode == 0, run.stdout.decode(errors="replace")[-3000:]
