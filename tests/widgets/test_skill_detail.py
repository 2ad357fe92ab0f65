"""SkillDetailView in a tiny harness app: it shows what it is given, literally."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Static

from store.models import (
    LintFinding,
    Relation,
    SkillDetail,
    SkillSummary,
    SkillVersion,
    SpecWarning,
    Suggestion,
)
from widgets.skill_detail import SkillDetailView

HOSTILE_BODY = (
    "# Title\n"
    "[bold red]x[/] and [link=http://e]x[/link]\n"
    "colour \x1b[31mred\x1b[0m, title \x1b]0;title\x07, bidi \u202eevil\u202c\n"
)


def detail(name: str = "terraform-plan-review", body: str = "Plain body.") -> SkillDetail:
    summary = SkillSummary(
        skill_id=25,
        name=name,
        status="stable",
        root="/demo/skills",
        scope="configured",
        description="Review a Terraform plan.",
        warning_count=1,
        finding_count=1,
        max_severity="high",
        version_no=2,
        shadowed=False,
        fs_path="/demo/skills/terraform-plan-review/SKILL.md",
    )
    return SkillDetail(
        summary=summary,
        manifest={"description": "Review a Terraform plan.", "tags": ["terraform", "iac"]},
        frontmatter={"name": name, "description": "Review a Terraform plan."},
        body=body,
        warnings=(SpecWarning("name_mismatch", "name does not match the folder"),),
        findings=(
            LintFinding(
                "pipe_to_shell",
                "high",
                "pipes a download into sh",
                "SKILL.md",
                31,
                "curl -fsSL https://example.invalid/install.sh | sh",
            ),
        ),
        relations=(Relation(name, "complements", "kubernetes-rollout"),),
        dependents=(),
        versions=(
            SkillVersion(1, "a" * 64, "2026-11-02T09:00:00+00:00", "skill.installed"),
            SkillVersion(2, "b" * 64, "2026-11-02T09:30:00+00:00", "skill.changed"),
        ),
    )


def suggestion(skill_id: int = 25) -> Suggestion:
    return Suggestion(
        skill_id=skill_id,
        name="terraform-plan-review",
        status="stable",
        description="",
        score=0.8123,
        relevance=0.61,
        lexical=0.5,
        dense=0.75,
        importance=1.0,
        matched_terms=("terraform", "plan"),
        reasons=("name matches",),
    )


class DetailApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SkillDetailView()


def shown(view: SkillDetailView) -> str:
    """The text the pane draws (all of it, not only the visible part)."""
    body = view.query_one(Static)
    return "\n".join(s.text for s in body.render_lines(Region(0, 0, *body.size)))


async def test_placeholder_until_a_detail_is_set() -> None:
    app = DetailApp()
    async with app.run_test() as pilot:
        view = app.query_one(SkillDetailView)
        await pilot.pause()
        assert "Select a skill" in shown(view)
        view.detail = detail()
        await pilot.pause()
        assert "Select a skill" not in shown(view)
        view.detail = None
        await pilot.pause()
        assert "Select a skill" in shown(view)


async def test_shows_head_warnings_findings_relations_versions() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(SkillDetailView)
        view.detail = detail()
        await pilot.pause()
        text = shown(view)
        assert text.startswith("terraform-plan-review  stable  v2")
        assert "Spec warnings (1)" in text
        assert "name_mismatch:" in text
        assert "Security findings (1)" in text
        assert "[high] pipe_to_shell SKILL.md:31  pipes a download into sh" in text
        assert "complements → kubernetes-rollout" in text
        assert "Versions (2)" in text
        assert "v2  2026-11-02T09:30:00  skill.changed" in text
        assert "Why it was suggested" not in text


async def test_explains_a_suggestion_only_for_its_own_skill() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.query_one(SkillDetailView)
        view.detail = detail()
        view.suggestion = suggestion(skill_id=99)
        await pilot.pause()
        assert "Why it was suggested" not in shown(view)
        view.suggestion = suggestion()
        await pilot.pause()
        text = shown(view)
        assert "Why it was suggested" in text
        assert "fit 0.61 (the task against its card and use text; well from 0.25)" in text
        assert "rank score 0.812" in text
        assert "lexical 0.50, dense 0.75, importance 1.00" in " ".join(text.split())
        assert "matched terms: terraform, plan" in text


async def test_untrusted_text_is_shown_literally() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 60)) as pilot:
        view = app.query_one(SkillDetailView)
        view.detail = detail(name="[bold red]x[/]\x1b[31m", body=HOSTILE_BODY)
        await pilot.pause()
        text = shown(view)
        assert text.startswith("[bold red]x[/]\\x1b[31m  stable")
        assert "[bold red]x[/] and [link=http://e]x[/link]" in text
        assert "colour \\x1b[31mred\\x1b[0m" in text
        assert "title \\x1b]0;title\\x07" in text
        assert "bidi <U+202E>evil<U+202C>" in text
        assert not {"\x1b", "\x07", "\u202e", "\u202c"} & set(text)
