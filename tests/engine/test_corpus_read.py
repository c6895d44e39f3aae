"""The corpora are read with libyaml's parser where PyYAML has it: it must give the very data the
pure-Python parser gives, or lint's and the report's coverage would count other messages."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from groundrules.analyst import corpus

CASES = Path(__file__).resolve().parents[1] / "cases"


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
def test_the_chat_corpora_read_as_the_pure_parser_reads_them():
    files = sorted(p for folder in CASES.glob(corpus.CHATS) for p in folder.glob("*.yaml"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert yaml.load(text, Loader=yaml.CSafeLoader) == yaml.load(text, Loader=yaml.SafeLoader), path.name


def test_every_chat_file_becomes_one_conversation_of_its_messages():
    read = dict(corpus.chat_cases(CASES))
    for folder in sorted(p for p in CASES.glob(corpus.CHATS) if p.is_dir()):
        for path in sorted(folder.glob("*.yaml")):
            doc = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
            messages = read[f"{folder.name}/{path.stem}"]
            assert [m["content"] for m in messages] == [m.get("text") for m in doc["messages"]]
