from pathlib import Path

import pytest

from store.config import Config, ConfigError


def test_defaults_are_written_with_comments(tmp_path: Path) -> None:
    config = Config(tmp_path / "config.toml")
    assert config.get("suggest.limit") == 10
    assert "# Skill Librarian configuration." in (tmp_path / "config.toml").read_text()


def test_set_keeps_comments_and_order(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('# top comment\n[suggest]\n# how many\nlimit = 10\nother = "x"\n')
    config = Config(path)
    assert config.set("suggest.limit", "25") == 25
    text = path.read_text()
    assert "# top comment" in text
    assert "# how many" in text
    assert text.index("limit = 25") < text.index('other = "x"')
    assert Config(path).get("suggest.limit") == 25


def test_set_parses_toml_values_and_falls_back_to_strings(tmp_path: Path) -> None:
    config = Config(tmp_path / "config.toml")
    assert config.set("skills.extra_roots", '["/a", "/b"]') == ["/a", "/b"]
    assert config.set("reviewer.name", "Ada Lovelace") == "Ada Lovelace"
    assert config.set("new.section.flag", "true") is True
    assert Config(tmp_path / "config.toml").get("new.section.flag") is True


def test_missing_key_falls_back_to_builtin_default(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[suggest]\n")
    assert Config(path).get("suggest.importance_weight") == 0.25
    assert Config(path).get("no.such.key") is None


def test_broken_toml_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[suggest\nlimit = ")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Config(path)
