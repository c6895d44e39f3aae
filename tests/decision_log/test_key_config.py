"""Where `serve` finds the decision key: `--decision-key FILE` (or `decision_key: FILE` in its
config file), else GROUNDRULES_DECISION_KEY_FILE, else GROUNDRULES_DECISION_KEY as the material
itself, the same as every other command; the settings layer never turns the material into a file
name (whose "cannot read" error would print the key)."""
from __future__ import annotations

from groundrules.cli.config import expand
from groundrules.cli.main import build_parser
from groundrules.cli.session import decision_key
from groundrules.decision_log.crypto import ENV_KEY, ENV_KEY_FILE, DecisionKey

from decision_support import KEY_MATERIAL

SERVE = ["serve", "--db", "ledger.db", "--log-decisions"]


def key_of(argv: list[str], environ: dict, monkeypatch) -> DecisionKey:
    parser = build_parser("serve")
    for name in (ENV_KEY, ENV_KEY_FILE):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return decision_key(parser.parse_args(expand(argv, parser, environ)))


def test_the_environments_key_material_is_the_key_and_never_a_file_name(monkeypatch):
    material = KEY_MATERIAL.decode("utf-8")
    parser = build_parser("serve")
    expanded = expand(SERVE, parser, {ENV_KEY: material})
    assert material not in expanded and "--decision-key" not in expanded
    assert key_of(SERVE, {ENV_KEY: material}, monkeypatch).id == DecisionKey(KEY_MATERIAL).id


def test_a_key_file_from_the_config_file_the_environment_or_the_command_line(tmp_path, monkeypatch):
    keys = {}
    for name in ("file", "env", "line"):
        keys[name] = tmp_path / f"{name}.key"
        keys[name].write_bytes(f"{name}: ".encode() + KEY_MATERIAL + b"\n")
    config = tmp_path / "groundrules.yaml"
    config.write_text(f"decision_key: {keys['file']}\n", encoding="utf-8")
    ids = {name: DecisionKey(f"{name}: ".encode() + KEY_MATERIAL).id for name in keys}
    by_config = [*SERVE, "--config", str(config)]
    assert key_of(by_config, {}, monkeypatch).id == ids["file"]
    # the config file's setting is the option itself: it wins over the environment's fallbacks
    assert key_of(by_config, {ENV_KEY_FILE: str(keys["env"])}, monkeypatch).id == ids["file"]
    assert key_of(SERVE, {ENV_KEY_FILE: str(keys["env"])}, monkeypatch).id == ids["env"]
    assert key_of([*by_config, "--decision-key", str(keys["line"])], {}, monkeypatch).id == ids["line"]
