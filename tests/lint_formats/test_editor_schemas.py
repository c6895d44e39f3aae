"""The table kinds' schemas as a YAML editor uses them.

An editor (VS Code's YAML extension, any yaml-language-server client) finds a file's schema from
`.vscode/settings.json` (`yaml.schemas`: schema path -> globs) or from a modeline at the top of the
file, loads it from disk and resolves each `$ref` against the file it is written in. These tests
do the same with plain jsonschema: file URIs only (no network, no registry of bare names), the
YAML parsed by PyYAML, every bundled table valid against the schema its association names."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

from groundrules.analyst.lint import lint

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / ".vscode" / "settings.json"
DOC = ROOT / "docs" / "lint-formats.md"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.M)


def _retrieve(uri: str) -> Resource:
    """What a file-based editor can open: a file on disk; anything else is missing."""
    parts = urlparse(uri)
    if parts.scheme != "file":
        raise NoSuchResource(ref=uri)
    path = Path(unquote(parts.path))
    if not path.is_file():
        raise NoSuchResource(ref=uri)
    return Resource.from_contents(json.loads(path.read_text(encoding="utf-8")), default_specification=DRAFT202012)


def editor_validator(schema_uri: str) -> jsonschema.protocols.Validator:
    """A validator for the schema at `schema_uri`, its $refs resolved against file locations."""
    schema = _retrieve(schema_uri).contents
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls({"$ref": schema_uri}, registry=Registry(retrieve=_retrieve))


def glob_match(path: str, pattern: str) -> bool:
    """An editor's glob: `*` stays within one folder."""
    regex = "".join("[^/]*" if c == "*" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, path) is not None


def associated(file: str) -> list[str]:
    mapping = json.loads(SETTINGS.read_text(encoding="utf-8"))["yaml.schemas"]
    return [schema for schema, globs in mapping.items() if any(glob_match(file, g) for g in globs)]


def bundled_tables(rulebook) -> list[tuple[str, str]]:
    """(file, kind) of every table file the rulebook loaded."""
    return sorted({(rulebook.sources[t].file, rulebook.tables[t].kind) for t in rulebook.sources})


def test_every_bundled_table_is_associated_with_its_kinds_schema(rulebook):
    tables = bundled_tables(rulebook)
    assert len(tables) == len({f for f, _ in tables}) > 20
    for file, kind in tables:
        assert associated(file) == [f"./schemas/kinds/{kind}.schema.json"], file


def test_every_bundled_table_is_valid_against_its_schema_read_from_disk(rulebook):
    for file, _ in bundled_tables(rulebook):
        (schema,) = associated(file)
        validator = editor_validator((ROOT / schema).resolve().as_uri())
        data = yaml.safe_load((ROOT / file).read_text(encoding="utf-8"))
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
        assert errors == [], file


def test_refs_that_leave_the_kinds_folder_resolve_from_the_file():
    """lock_patterns reads the message vocabulary of schemas/evidence.v1.schema.json."""
    validator = editor_validator((ROOT / "schemas/kinds/lock_patterns.schema.json").resolve().as_uri())
    data = yaml.safe_load((ROOT / "locks/cn_mobile.yaml").read_text(encoding="utf-8"))
    data["patterns"][0]["counts_in"]["roles"] = ["userr"]
    (error,) = validator.iter_errors(data)
    assert list(error.absolute_path) == ["patterns", 0, "counts_in", "roles", 0] and error.validator == "enum"


def test_the_documented_modeline_associates_a_table_as_lint_reads_it(tmp_path):
    """The line docs/lint-formats.md tells an analyst to put first: the editor finds the schema
    relative to the table, flags the same mistake lint flags, and the engine ignores the line."""
    doc = "\n".join(line.strip() for line in DOC.read_text(encoding="utf-8").splitlines())
    (documented,) = set(MODELINE.findall(doc))
    assert "<kind>" in documented
    for d in ("rules", "schemas"):
        shutil.copytree(ROOT / d, tmp_path / d)
    table = tmp_path / "rules" / "support_reason.yaml"
    original = table.read_text(encoding="utf-8")
    kind = yaml.safe_load(original)["kind"]
    table.write_text(f"# yaml-language-server: $schema={documented.replace('<kind>', kind)}\n" + original,
                     encoding="utf-8")
    (found,) = MODELINE.findall(table.read_text(encoding="utf-8"))
    schema_uri = urljoin(table.as_uri(), found)
    assert list(editor_validator(schema_uri).iter_errors(yaml.safe_load(table.read_text(encoding="utf-8")))) == []
    assert [p for p in lint(tmp_path, [table]).problems if p.severity == "error"] == []

    table.write_text(table.read_text(encoding="utf-8").replace("hit_policy: output_order", "hit_policy: output_orderr"),
                     encoding="utf-8")
    (error,) = editor_validator(schema_uri).iter_errors(yaml.safe_load(table.read_text(encoding="utf-8")))
    (problem,) = lint(tmp_path, [table]).problems
    assert list(error.absolute_path) == ["hit_policy"] and problem.key == "hit_policy"


def test_a_schema_reached_by_a_wrong_relative_ref_is_missing_not_guessed(tmp_path):
    """The check above can fail: a kind schema that names a sibling that is not there."""
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    path = tmp_path / "schemas" / "kinds" / "lock_patterns.schema.json"
    path.write_text(path.read_text(encoding="utf-8").replace("../evidence.v1.schema.json", "evidence.v1.schema.json"),
                    encoding="utf-8")
    validator = editor_validator(path.as_uri())
    with pytest.raises(Unresolvable):
        list(validator.iter_errors(yaml.safe_load((ROOT / "locks/cn_mobile.yaml").read_text(encoding="utf-8"))))


SUBSCHEMA = {"items", "additionalProperties", "not", "propertyNames", "contains", "if", "then", "else"}
SUBSCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions"}
SUBSCHEMA_LISTS = {"allOf", "anyOf", "oneOf"}
DRAFT7_SKIPS = {"dependentRequired"}         # 2019-09; a draft-07 validator ignores it (docs say so)


def keywords(schema) -> set:
    if not isinstance(schema, dict):
        return set()
    out = set(schema)
    for key, value in schema.items():
        if key in SUBSCHEMA:
            out |= keywords(value)
        elif key in SUBSCHEMA_MAPS and isinstance(value, dict):
            out |= {k for v in value.values() for k in keywords(v)}
        elif key in SUBSCHEMA_LISTS and isinstance(value, list):
            out |= {k for v in value for k in keywords(v)}
    return out


def test_the_kind_schemas_use_only_what_a_draft_07_editor_reads():
    """yaml-language-server validates by draft-07: the schemas keep to its keywords, so an
    editor checks a subset of what lint checks and never reads a rule differently."""
    draft7 = set(jsonschema.Draft7Validator.VALIDATORS) | {"$schema", "$id", "title", "description", "default",
                                                           "examples", "$comment", "definitions", "$defs"}
    used = {k for path in sorted((ROOT / "schemas" / "kinds").glob("*.schema.json"))
            for k in keywords(json.loads(path.read_text(encoding="utf-8")))}
    extensions = {k for k in used if k.startswith("x-")}     # our annotations: every validator ignores them
    assert used - draft7 - extensions == DRAFT7_SKIPS
