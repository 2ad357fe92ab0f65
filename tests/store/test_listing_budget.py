"""Claude Code's skill listing against its budget (issue 15, item 1): which skills a folder
lists, what each costs, which descriptions go first, Claude Code's settings, the advice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library
from store.models.listing import ListingSettings
from store.skills.listing.budget import NAME_OVERHEAD, allot, listing_text
from store.skills.listing.settings import (
    ClaudeSettings,
    listing_settings,
    read_settings,
    settings_files,
)
from store.skills.listing.sources import Source
from tests.store.conftest import HashEmbedder, write_skill

SETTINGS = ListingSettings(200_000, 0.01, 4.0, 1536, 1000)


def source(name: str, description: str, **kw: str) -> Source:
    fields = {
        "command": name,
        "name": name,
        "scope": "personal",
        "path": f"/skills/{name}/SKILL.md",
        "description": description,
        "when_to_use": "",
        "hidden": "",
        "in_library": True,
    }
    fields.update(kw)
    return Source(**fields)  # type: ignore[arg-type]


def by_name(report_entries: tuple, name: str):  # type: ignore[no-untyped-def]
    return next(e for e in report_entries if e.name == name)


def test_listing_text_joins_and_caps() -> None:
    text, tail, capped = listing_text("Does X.\n  Use when Y.", "Also  Z.", 12)
    assert text == "Does X. Use "
    assert tail == "when Y. Also Z."
    assert capped


def test_descriptions_go_to_the_most_used_until_the_budget_runs_out() -> None:
    found = [source(n, "d" * 300) for n in ("alpha", "beta", "gamma", "delta")]
    counts = {"gamma": (9, "2026-05-01"), "alpha": (3, "2026-05-02"), "delta": (3, "2026-05-03")}
    report = allot("/w", SETTINGS, ClaudeSettings(), found, counts, sessions=12)
    states = {e.name: e.state for e in report.entries}
    # names cost 4 x (len + 3); then gamma (9 uses), delta (3, newer), alpha (3) fit 302 each
    assert states == {"gamma": "full", "delta": "full", "alpha": "full", "beta": "dropped"}
    ranks = {e.name: e.drop_rank for e in report.entries}
    assert ranks == {"beta": 1, "alpha": 2, "delta": 3, "gamma": 4}
    assert report.used_chars <= SETTINGS.char_budget
    beta = by_name(report.entries, "beta")
    assert beta.listed_chars == len("beta") + NAME_OVERHEAD
    assert report.full_chars > SETTINGS.char_budget
    assert report.advice[0].kind == "over_budget"
    assert report.advice[0].skills == ("beta",)


def test_once_one_description_does_not_fit_the_rest_are_names_only() -> None:
    found = [source("big", "b" * 990), source("small", "s" * 10)]
    counts = {"big": (5, "2026-01-01"), "small": (1, "2026-01-01")}
    report = allot("/w", SETTINGS, ClaudeSettings(), found, counts, sessions=5)
    assert {e.name: e.state for e in report.entries} == {"big": "dropped", "small": "dropped"}


def test_overrides_hidden_and_precedence() -> None:
    found = [
        source("quiet", "q" * 50),
        source("gone", "g" * 50),
        source("manual", "m" * 50, hidden="disable-model-invocation"),
        source("dup", "personal one", path="/home/.claude/skills/dup/SKILL.md"),
        source("dup", "project one", scope="project", path="/p/.claude/skills/dup/SKILL.md"),
        source("tool:quiet", "plugin skill", scope="plugin", command="tool:quiet"),
    ]
    claude = ClaudeSettings(overrides={"quiet": "name-only", "gone": "off", "tool:quiet": "off"})
    report = allot("/w", SETTINGS, claude, found, {}, sessions=0)
    states = {(e.name, e.scope): e.state for e in report.entries}
    assert states[("quiet", "personal")] == "name_only"
    assert states[("gone", "personal")] == "hidden"
    assert states[("manual", "personal")] == "hidden"
    assert states[("dup", "personal")] == "full"
    assert states[("dup", "project")] == "shadowed"
    assert states[("tool:quiet", "plugin")] == "full"  # overrides do not apply to plugins
    assert any(a.kind == "no_usage" for a in report.advice)


def test_the_per_skill_cap_and_the_terms_past_it() -> None:
    long = "Reviews Kubernetes manifests. " + "x " * 800 + "Use for helmfile and kustomize drift."
    found = [source("k8s-review", long), source("other", "Writes release notes.")]
    report = allot(
        "/w", ListingSettings(200_000, 0.01, 4, 1536, 100_000), ClaudeSettings(), found, {}, 1
    )
    entry = by_name(report.entries, "k8s-review")
    assert entry.capped
    assert entry.description_chars > 1536
    assert entry.full_chars == len("k8s-review") + NAME_OVERHEAD + 2 + 1536
    assert {"helmfile", "kustomize", "drift"} <= set(entry.lost_terms)
    assert any(a.kind == "terms_past_cut" and "k8s-review" in a.skills for a in report.advice)


def test_names_alone_over_the_budget_say_so() -> None:
    found = [source(f"a-rather-long-skill-name-{i:03d}", "Does a thing.") for i in range(40)]
    report = allot("/w", SETTINGS, ClaudeSettings(), found, {}, 1)
    kinds = [a.kind for a in report.advice]
    assert kinds[0] == "names_over_budget"
    assert "names alone take" in report.advice[0].message
    assert all(e.state == "dropped" for e in report.entries)


def test_never_used_skills_that_cost_room() -> None:
    found = [source("used", "u" * 40), source("idle", "i" * 60)]
    report = allot("/w", SETTINGS, ClaudeSettings(), found, {"used": (4, "2026-02-01")}, 10)
    (idle,) = [a for a in report.advice if a.kind == "never_used"]
    assert idle.skills == ("idle",)
    assert idle.chars == 60 + 2


# --------------------------------------------------------------------------- settings


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_settings_precedence_and_env(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "home" / ".claude"
    write_json(home / "settings.json", {"skillListingBudgetFraction": 0.05, "env": {"A": "user"}})
    write_json(project / ".claude" / "settings.json", {"skillListingBudgetFraction": 0.02})
    write_json(
        project / ".claude" / "settings.local.json",
        {"env": {"SLASH_COMMAND_TOOL_CHAR_BUDGET": "12000"}, "skillOverrides": {"x": "off"}},
    )
    (project / "sub").mkdir()
    files = settings_files(project / "sub", home, managed=[tmp_path / "managed.json"])
    claude = read_settings(files)
    assert claude.get("skillListingBudgetFraction") == (
        0.02,
        str(project / ".claude" / "settings.json"),
    )
    assert claude.overrides == {"x": "off"}
    settings = listing_settings(claude, {})
    assert settings.char_budget == 12_000  # the fixed budget wins over the fraction
    assert settings.fraction == 0.02
    assert settings_for_env(claude, {"SLASH_COMMAND_TOOL_CHAR_BUDGET": "9000"}) == 9000
    plain = listing_settings(read_settings([home / "settings.json"]), {})
    assert plain.char_budget == int(200_000 * 0.05 * 4)
    assert listing_settings(ClaudeSettings(), {}).char_budget == 8000  # Claude Code's defaults


def settings_for_env(claude: ClaudeSettings, env: dict[str, str]) -> int:
    return listing_settings(claude, env).char_budget


def test_arguments_win_and_bad_values_are_ignored(tmp_path: Path) -> None:
    bad = write_json(
        tmp_path / "s.json", {"skillListingBudgetFraction": 7, "skillListingMaxDescChars": "x"}
    )
    claude = read_settings([bad, tmp_path / "missing.json"])
    settings = listing_settings(claude, {"CLAUDE_CODE_MAX_CONTEXT_TOKENS": "1000000"})
    assert (settings.fraction, settings.max_desc_chars) == (0.01, 1536)
    assert settings.context_tokens == 1_000_000
    assert listing_settings(claude, {}, fraction=0.03, context_tokens=100_000).char_budget == 12_000
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert "not valid JSON" in read_settings([broken]).problems[0]


# --------------------------------------------------------------------------- a real folder


@pytest.fixture
def hashed(tmp_path: Path) -> Callable[[str], Library]:
    def factory(name: str = "lib") -> Library:
        library = Library(tmp_path / name, embedder=HashEmbedder())
        library.config.set("embedding.model", HashEmbedder.model_name)
        return library

    return factory


def test_a_folder_lists_personal_project_and_plugin_skills(
    tmp_path: Path, hashed: Callable[[str], Library]
) -> None:
    home = tmp_path / "home"
    personal = home / ".claude" / "skills"
    write_skill(personal, "deploy", "Deploys the app to production.")
    write_skill(
        personal, "notes", "Writes release notes.", extra="disable-model-invocation: true\n"
    )
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_skill(repo / ".claude" / "skills", "deploy", "The project's own deploy.")
    write_skill(repo / ".claude" / "skills", "migrate", "Runs database migrations safely.")
    cache = home / ".claude" / "plugins" / "cache" / "market" / "tool"
    write_skill(cache / "1.0.0" / "skills", "lint", "Old version.")
    write_skill(cache / "1.2.0" / "skills", "lint", "Lints the code base.")
    off = home / ".claude" / "plugins" / "cache" / "market" / "off"
    write_skill(off / "2.0.0" / "skills", "noisy", "A plugin the user turned off.")
    write_json(home / ".claude" / "settings.json", {"enabledPlugins": {"off@market": False}})
    library = hashed()
    try:
        library.scan([personal])  # the personal root is catalogued; the others come from disk
        report = library.listing(repo)
    finally:
        library.close()
    states = {(e.name, e.scope): (e.state, e.in_library) for e in report.entries}
    assert states[("deploy", "personal")] == ("full", True)
    assert states[("deploy", "project")] == ("shadowed", False)
    assert states[("notes", "personal")][0] == "hidden"
    assert states[("migrate", "project")] == ("full", False)
    assert states[("tool:lint", "plugin")] == ("full", False)
    assert states[("off:noisy", "plugin")][0] == "hidden"
    lint = next(e for e in report.entries if e.name == "tool:lint")
    assert lint.path.endswith("1.2.0/skills/lint/SKILL.md")  # the newest version only
    assert report.settings.char_budget == 8000
    assert report.advice[0].kind == "fits"


def test_many_skills_whose_names_alone_overflow(
    tmp_path: Path, hashed: Callable[[str], Library]
) -> None:
    home = tmp_path / "home"
    personal = home / ".claude" / "skills"
    for i in range(300):
        write_skill(personal, f"skill-{i:04d}", f"Does task number {i} with care. " * 3)
    library = hashed()
    try:
        library.scan([personal])
        report = library.listing(tmp_path)
    finally:
        library.close()
    assert len([e for e in report.entries if e.state == "dropped"]) > 200
    assert report.used_chars <= 8000
    assert report.advice[0].kind == "over_budget"
