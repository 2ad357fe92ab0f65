"""SuggestionList in a tiny harness app: ranked lines, and the highlighted suggestion."""

from __future__ import annotations

from textual.app import App, ComposeResult

from store.models import Suggestion
from widgets.suggestion_list import SuggestionList


def suggestion(
    skill_id: int,
    name: str,
    score: float,
    status: str = "stable",
    terms: tuple[str, ...] = (),
    relevance: float = 0.0,
) -> Suggestion:
    return Suggestion(
        skill_id=skill_id,
        name=name,
        status=status,
        description="",
        score=score,
        lexical=score,
        dense=score,
        importance=1.0,
        matched_terms=terms,
        relevance=relevance or score / 2,
    )


RANKED = [
    suggestion(13, "kubernetes-rollback", 0.98, terms=("roll", "back", "deploy")),
    suggestion(12, "k8s-rollback-v1", 0.53, status="deprecated", terms=("back",)),
    suggestion(14, "kubernetes-rollout", 0.5),
]
#: A task no skill fits: the ranks still spread 1.0 .. 0.5, the absolute fit is low.
UNFIT = [
    suggestion(13, "kubernetes-rollback", 1.0, relevance=0.11),
    suggestion(14, "kubernetes-rollout", 0.5, relevance=0.09),
]


class SuggestApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[Suggestion] = []

    def compose(self) -> ComposeResult:
        yield SuggestionList()

    def on_suggestion_list_suggestion_highlighted(
        self, message: SuggestionList.SuggestionHighlighted
    ) -> None:
        self.highlighted.append(message.suggestion)


def lines(widget: SuggestionList) -> list[str]:
    """The drawn content lines (inside the border)."""
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


async def test_keys_post_the_highlighted_suggestion() -> None:
    app = SuggestApp()
    async with app.run_test() as pilot:
        widget = app.query_one(SuggestionList)
        widget.set_suggestions(RANKED)
        widget.focus()
        await pilot.press("down")
        await pilot.press("down")
        await pilot.press("up")
        assert [s.skill_id for s in app.highlighted][-3:] == [13, 12, 13]
        assert app.highlighted[-1] is RANKED[0]


async def test_lines_show_rank_name_score_status_and_terms() -> None:
    app = SuggestApp()
    async with app.run_test(size=(80, 10)) as pilot:
        widget = app.query_one(SuggestionList)
        widget.set_suggestions(RANKED)
        await pilot.pause()
        shown = [line.strip() for line in lines(widget) if line.strip()]
        assert shown == [
            "1. kubernetes-rollback  fit 0.49  roll, back, deploy",
            "2. k8s-rollback-v1  fit 0.27  deprecated  back",
            "3. kubernetes-rollout  fit 0.25",
        ]
        widget.set_suggestions([])
        await pilot.pause()
        assert widget.option_count == 0
        assert widget.suggestions == []


async def test_long_lines_stay_on_one_line() -> None:
    app = SuggestApp()
    async with app.run_test(size=(40, 10)) as pilot:
        widget = app.query_one(SuggestionList)
        terms = tuple(f"term{i}" for i in range(20))
        widget.set_suggestions([suggestion(1, "a-rather-long-skill-name", 0.9, terms=terms)])
        await pilot.pause()
        shown = [line for line in lines(widget) if line.strip()]
        assert len(shown) == 1
        assert shown[0].endswith("…")


async def test_untrusted_names_render_literally() -> None:
    app = SuggestApp()
    async with app.run_test(size=(100, 10)) as pilot:
        widget = app.query_one(SuggestionList)
        widget.set_suggestions(
            [
                suggestion(1, "[bold red]x[/]", 0.9, terms=("[link=http://e]x[/link]",)),
                suggestion(2, "\x1b[31mred\x1b]0;title\x07", 0.8),
                suggestion(3, "\u202eevil", 0.7),
            ]
        )
        await pilot.pause()
        text = "\n".join(lines(widget))
        assert "[bold red]x[/]" in text
        assert "[link=http://e]x[/link]" in text
        assert "\\x1b[31mred\\x1b]0;title\\x07" in text
        assert "<U+202E>evil" in text
        assert not {"\x1b", "\x07", "\u202e"} & set(text)


async def test_when_no_skill_fits_well_a_line_says_so_above_the_closest() -> None:
    app = SuggestApp()
    async with app.run_test(size=(100, 10)) as pilot:
        widget = app.query_one(SuggestionList)
        widget.set_suggestions(UNFIT)
        await pilot.pause()
        shown = [line.strip() for line in lines(widget) if line.strip()]
        assert shown == [
            "no skill fits well (best fit 0.11, below 0.25): the closest",
            "1. kubernetes-rollback  fit 0.11",
            "2. kubernetes-rollout  fit 0.09",
        ]
        widget.focus()
        await pilot.press("down")
        await pilot.press("down")
        assert app.highlighted  # the note is not a suggestion: only skills are posted
        assert {s.skill_id for s in app.highlighted} <= {13, 14}
        widget.set_suggestions(RANKED)  # one fits well: no note
        await pilot.pause()
        assert widget.option_count == len(RANKED)


async def test_a_drifting_suggestion_is_marked() -> None:
    app = SuggestApp()
    async with app.run_test() as pilot:
        widget = app.query_one(SuggestionList)
        drifting = suggestion(15, "kubernetes-rollout", 0.4)
        widget.set_suggestions([*RANKED, Suggestion(**{**drifting.__dict__, "health": "DRIFTING"})])
        await pilot.pause()
        assert lines(widget)[3].startswith(" 4. kubernetes-rollout  fit 0.20  drifting")
