"""The verdict cache: keyed by content, plain data under an HMAC, and never a different answer."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from groundrules import RulesError, explain, load_rulebook, lock_messages
from groundrules.core import canonical
from groundrules.core import rulebook as rulebook_module
from groundrules.core import rulecache

ROOT = Path(__file__).resolve().parents[2]
CONTEXTS = sorted((ROOT / "tests" / "cases" / "support_reason").glob("*.json"))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(rulecache.ENV, str(folder))
    return folder


@pytest.fixture
def root(tables_copy) -> Path:
    return tables_copy


@pytest.fixture
def new_process(monkeypatch):
    """Forget what this process compiled, as a new process would not know it: a warm load in the
    same process reuses the tables a cold load compiled, and would never read the cache's entries."""
    def forget() -> None:
        monkeypatch.setattr(rulebook_module, "_COMPILED", rulebook_module._Compiled())
    return forget


def _entries(cache: Path) -> list[Path]:
    """The verdict entries (the others, src-*, hold tables' parsed forms)."""
    return sorted(p for p in cache.glob(f"*{rulecache.SUFFIX}") if not p.name.startswith("src-"))


def _opened(entry: Path) -> dict:
    """An entry as {mac, verdict}: its first line and the JSON after it."""
    mac, _, text = entry.read_bytes().partition(b"\n")
    return {"mac": mac.decode(), "verdict": json.loads(text)}


def _written(entry: Path, opened: dict) -> None:
    entry.write_bytes(opened.get("mac", "").encode() + b"\n" + _text(opened["verdict"]))


def _signed(secret: bytes, entry: Path, verdict) -> str:
    return rulecache._mac(secret, entry.name.removesuffix(rulecache.SUFFIX), _text(verdict))


def _text(verdict) -> bytes:
    return json.dumps(verdict, ensure_ascii=False).encode("utf-8")


def _answers(book) -> str:
    contexts = [json.loads(p.read_text(encoding="utf-8")) for p in CONTEXTS]
    messages = [{"id": "m1", "role": "user", "content": "微信 wx_wang01，电话 138 1234 5678"}]
    return canonical.dumps({"explain": [explain(c, book) for c in contexts],
                            "locks": lock_messages(messages, book), "version": book.version})


def test_a_warm_load_answers_exactly_as_a_cold_one(cache, root, new_process):
    cold = load_rulebook(root)
    assert len(_entries(cache)) == 1
    new_process()
    warm = load_rulebook(root)
    assert type(warm.tables) is not type(cold.tables)          # the warm one compiles on first use
    assert (warm.version, warm.warnings, list(warm.tables), dict(warm.kinds)) == \
        (cold.version, cold.warnings, list(cold.tables), dict(cold.kinds))
    assert _answers(warm) == _answers(cold)
    assert [t.id for t in warm.of_kind("lock_patterns")] == [t.id for t in cold.of_kind("lock_patterns")]
    for table_id in cold.tables:         # the same data, in the same key order, at the same places
        assert json.dumps(warm.sources[table_id].data) == json.dumps(cold.sources[table_id].data)
        assert warm.sources[table_id].positions == cold.sources[table_id].positions


def test_tables_stay_read_only_on_a_warm_load(cache, root):
    load_rulebook(root)
    warm = load_rulebook(root)
    with pytest.raises(TypeError):
        warm.tables["x"] = 1
    with pytest.raises(KeyError):
        warm.tables["no_such_table"]


def test_an_edit_is_a_new_key_and_a_broken_edit_still_fails(cache, root):
    first = load_rulebook(root)
    table = root / "rules" / "support_reason.yaml"
    table.write_text(table.read_text(encoding="utf-8").replace("label: 检索引擎降级", "label: 引擎降级"),
                     encoding="utf-8")
    assert load_rulebook(root).version != first.version
    table.write_text(table.read_text(encoding="utf-8").replace("hit_policy: output_order",
                                                               "hit_policy: output_ordr"), encoding="utf-8")
    with pytest.raises(RulesError):
        load_rulebook(root)


def test_a_lock_table_edit_fails_a_load_that_only_needs_support_reason(cache, root):
    """Laziness never hides a broken table: its bytes make a new key, and a new key loads it all."""
    load_rulebook(root)
    table = root / "locks" / "qq.yaml"
    table.write_text(table.read_text(encoding="utf-8") + "\nbogus_key: 1\n", encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        load_rulebook(root)
    assert [p.file for p in exc.value.problems] == ["locks/qq.yaml"]


@pytest.mark.parametrize("tamper", [
    lambda e: dict(e, verdict=dict(e["verdict"], version="0000000000000000")),
    lambda e: dict(e, mac="0" * 64),
    lambda e: {k: v for k, v in e.items() if k != "mac"},
    lambda e: dict(e, verdict=dict(e["verdict"], tables=e["verdict"]["tables"][:1])),
])
def test_an_edited_entry_counts_as_absent(cache, root, tamper):
    real = load_rulebook(root).version
    [entry] = _entries(cache)
    _written(entry, tamper(_opened(entry)))
    book = load_rulebook(root)
    assert book.version == real
    assert sorted(book.tables) == sorted(load_rulebook(root, cache=False).tables)


def test_an_entry_under_another_secret_counts_as_absent(cache, root):
    real = load_rulebook(root).version
    [entry] = _entries(cache)
    forged = _opened(entry)
    forged["verdict"]["version"] = "f" * 16
    (cache / "secret").write_bytes(os.urandom(32))
    forged["mac"] = _signed((cache / "secret").read_bytes(), entry, forged["verdict"])
    (cache / "secret").write_bytes(os.urandom(32))      # the forger's secret is not the cache's
    _written(entry, forged)
    assert load_rulebook(root).version == real


def test_garbage_in_the_cache_never_fails_a_load(cache, root):
    real = load_rulebook(root).version
    [entry] = _entries(cache)
    for junk in (b"", b"{", b"[]", b'{"verdict": 1, "mac": 2}', b"\xff\xfe", b"\n{}", entry.read_bytes()[:-1]):
        entry.write_bytes(junk)
        assert load_rulebook(root).version == real


def test_a_verdict_that_disagrees_with_the_files_is_not_believed(cache, root):
    """Even a correctly signed verdict naming the wrong file for a table: the table is compiled
    from the whole set again, so the answer is still the files' own."""
    cold = load_rulebook(root)
    [entry] = _entries(cache)
    stored = _opened(entry)
    tables = stored["verdict"]["tables"]
    sr = next(t for t in tables if t[0] == "support_reason")
    sr[2] = next(t[2] for t in tables if t[0] == "findings_warnings")
    stored["mac"] = _signed((cache / "secret").read_bytes(), entry, stored["verdict"])
    _written(entry, stored)
    assert _answers(load_rulebook(root)) == _answers(cold)


def test_off_writes_nothing_and_an_unusable_folder_is_ignored(tmp_path, monkeypatch, root):
    monkeypatch.setenv(rulecache.ENV, "off")
    version = load_rulebook(root).version
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(rulecache.ENV, str(blocker / "cache"))
    assert load_rulebook(root).version == version
    assert load_rulebook(root).version == version


def test_the_secret_is_private(cache, root):
    load_rulebook(root)
    assert (cache / "secret").stat().st_mode & 0o077 == 0


@pytest.mark.extended
def test_whole_commands_print_the_same_bytes_cold_warm_and_without_a_cache(tmp_path):
    context = ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json"
    message = ROOT / "schemas" / "examples" / "locks" / "decline_phone_give_wechat.json"
    outputs = set()
    for setting in ("off", str(tmp_path / "c"), str(tmp_path / "c")):      # no cache, cold, warm
        env = dict(os.environ, **{rulecache.ENV: setting})
        run = [subprocess.run([sys.executable, "-m", "groundrules.cli.main", cmd, str(arg)], env=env,
                              capture_output=True, check=True, timeout=120).stdout
               for cmd, arg in (("explain", context), ("lock", message), ("explain", context))]
        outputs.add(tuple(run))
    assert len(outputs) == 1
    assert len(_entries(tmp_path / "c")) == 1


def test_a_warm_command_reads_json_only(tmp_path):
    """On a warm cache neither PyYAML nor jsonschema is imported: the tables' parsed form and the
    verdict are JSON, and the contract's fast check answers."""
    env = dict(os.environ, **{rulecache.ENV: str(tmp_path / "c")})
    context = ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json"
    code = ("import sys, io, contextlib\nfrom groundrules.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main(['explain', {str(context)!r}])\n"
            "print(sorted(m for m in ('yaml', 'jsonschema') if m in sys.modules))")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                           timeout=120).stdout.strip() for _ in range(2)]
    assert runs == ["['jsonschema', 'yaml']", "[]"]


def test_an_edited_source_entry_is_read_again_from_the_file(cache, root, new_process):
    cold = _answers(load_rulebook(root))
    for entry in cache.glob(f"src-*{rulecache.SUFFIX}"):
        stored = _opened(entry)
        stored["verdict"]["data"] = {"kind": "decision_table", "id": "forged"}
        _written(entry, stored)
    new_process()
    assert _answers(load_rulebook(root)) == cold


def test_a_process_compiles_a_cached_verdicts_table_once_however_often_it_loads(cache, root, new_process):
    load_rulebook(root)
    new_process()
    first, second = load_rulebook(root), load_rulebook(root)
    assert all(first.tables[t] is second.tables[t] for t in first.tables)


def test_an_edit_rewrites_only_the_entries_of_what_changed(cache, root):
    load_rulebook(root)
    before = {p.name: p.stat().st_ino for p in cache.glob(f"*{rulecache.SUFFIX}")}
    table = root / "rules" / "support_reason.yaml"
    table.write_text(table.read_text(encoding="utf-8").replace("label: 检索引擎降级", "label: 引擎降级"),
                     encoding="utf-8")
    load_rulebook(root)
    after = {p.name: p.stat().st_ino for p in cache.glob(f"*{rulecache.SUFFIX}")}
    assert all(after[name] == inode for name, inode in before.items())      # not written again
    added = sorted(set(after) - set(before))
    assert len(added) == 2 and sum(name.startswith("src-") for name in added) == 1   # the verdict and the table
