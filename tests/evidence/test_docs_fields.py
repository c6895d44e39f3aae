"""docs/evidence.md lists every record type's fields; the list is the contract's, field for field,
so the page can never again name a field the fold refuses, or miss one it reads."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(\w+)` \| (`\w+`(?:, `\w+`)*) \|$")


def tables() -> dict[str, dict[str, list[str]]]:
    """The Records section's tables by their first header cell: {header: {row name: [fields]}}."""
    text = (ROOT / "docs" / "evidence.md").read_text(encoding="utf-8")
    section = text.split("\n## Records\n", 1)[1].split("\n## ", 1)[0]
    out: dict = {}
    current = None
    for line in section.splitlines():
        header = re.match(r"^\| (\w+) \| fields \|$", line)
        if header:
            current = out.setdefault(header.group(1), {})
            continue
        m = ROW.match(line)
        if m and current is not None:
            assert m.group(1) not in current, f"{m.group(1)} is listed twice"
            current[m.group(1)] = re.findall(r"`(\w+)`", m.group(2))
    return out


def test_every_record_type_and_field_of_the_contract_is_documented_and_nothing_else(rulebook):
    defs = rulebook.schemas.get("evidence.v1.schema.json")["$defs"]
    documented = tables()
    types = defs["record"]["properties"]["type"]["enum"]
    assert list(documented["type"]) == types
    for name, fields in documented["type"].items():
        assert len(fields) == len(set(fields)), name
        assert set(fields) == set(defs[f"record_{name}"]["properties"]), name
        assert set(defs[f"record_{name}"]["required"]) <= set(fields[:len(defs[f"record_{name}"]["required"])]), \
            f"{name}: the required fields come first"
    objects = {"lock": defs["lock_given"], "locator": defs["locator"]}
    assert set(documented["object"]) == set(objects)
    for name, fields in documented["object"].items():
        assert fields == list(objects[name]["properties"]), name
