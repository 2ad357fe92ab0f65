"""Episodes from the tool structure (issue 11): dead ends and solutions come from what the
agent ran, not from what it said.

A failing action starts an episode: a result flagged `is_error`, or output that shows a
failure (a non-zero exit, failing tests, a compiler error, a traceback, a prompt the command
stopped at). The following attempts on the same target (the same command family, e.g.
`npx tsc` or `npm run build`) are its steps; the attempt that then succeeds closes it. The
episode gives one DEAD_END (what was tried, the error's gist, how many attempts) and, when it
closed, one SOLUTION that says what changed between the first failing attempt and the one
that worked: the flags or arguments that differ, the edits made in between (file and the gist
of old → new), the dependencies installed. The two are joined by `resolved`.

What is not an episode: a success that ended no failure (never a node), the agent harness's
own tool errors (`store.ingest.harness`), and routine commands whose failures say nothing
about the project (listing, reading, searching, moving around): those failures are kept as
suppressed candidates with the reason.

The tool structure and the episodes themselves are `store.ingest.actions`; what changed
between two attempts is `store.ingest.changes`; why a dead end or a solution stays out of
the queue (work in progress, an environment slip, the agent's own test…) is
`store.ingest.failure_bar`. When a dead end stays out for want of a stated cause, its
solution quotes the error too: symptom and fix in one node.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import pairwise

from store.ingest import bar, reviewer_rules, shapes, snippets, statements
from store.ingest.actions import (
    _SPEAKER,
    _STATES,
    CONFIDENCE,
    EDIT_TOOLS,
    ROUTINE_PROGRAMS,
    SHELL_TOOLS,
    Action,
    Episode,
    _installs,
    _program_of,
    _quota,
    episodes,
)
from store.ingest.candidates import Candidate, replace
from store.ingest.changes import (
    _acted_between,
    _command_changes,
    _edit_changes,
    _install_changes,
    _join,
    _was,
    _with_symptom,
    needed,
    output_only,
    prose_only,
    tweak_doubt,
)
from store.ingest.failure_bar import (
    _SEVERAL_STEPS,
    _SEVERAL_STEPS_FIX,
    _edited,
    _hygiene,
    _installed_at_once,
    _narrowed,
    _own_test,
    _own_tests_only,
    _really_changed,
    _slip,
    _told,
    _unproven,
    _unproven_fix,
    _written,
)
from store.models import TranscriptMessage

# --------------------------------------------------------------------------- candidates


def candidates(
    found: Sequence[Action],
) -> tuple[list[Candidate], list[tuple[Candidate, Candidate]]]:
    """DEAD_END and SOLUTION candidates, and the (dead end, solution) pairs to join. Failures
    of routine actions and harness errors are candidates too, marked routine (suppressed)."""
    out: list[Candidate] = []
    pairs: list[tuple[Candidate, Candidate]] = []
    edited = _edited(found)
    written = _written(found)
    places = _places(found)
    for episode in episodes(found):
        runs = _runs(episode)
        made = [(run, dead_end(run)) for run in runs]
        dead_ends = [
            replace(
                d,
                routine=d.routine
                or _hygiene(run, edited, episode)
                or reviewer_rules.own_bad_import(run, found),
            )
            for run, d in made
            if d is not None
        ]
        if not dead_ends:
            continue
        fix = solution(episode, _between(found, episode, places))
        if fix is not None and not fix.routine and _own_tests_only(episode, edited):
            fix = replace(fix, routine="the agent rewrote its own test until it passed")
        if fix is not None and _hygiene(runs[-1], edited, episode):
            fix = replace(fix, routine=fix.routine or _hygiene(runs[-1], edited, episode))
        why = _own_test(episode, edited)
        why = why or _told(episode)
        if why:  # the failure is no lesson; what made it pass may still be one
            dead_ends = [replace(d, routine=d.routine or why) for d in dead_ends]
        set_up = _installed_at_once(episode, found, dead_ends[0].cause)
        if set_up:  # a dependency installed at once: the failure is routine, its fix (the
            # install, with the error it answered) says all there is
            dead_ends = [replace(d, routine=d.routine or set_up) for d in dead_ends]
        slip = _slip(episode) or reviewer_rules.permission_hiccup(episode)
        slip = slip or reviewer_rules.service_down(episode)
        if slip:  # neither the failure nor its fix is a lesson
            dead_ends = [replace(d, routine=d.routine or slip) for d in dead_ends]
            fix = replace(fix, routine=fix.routine or slip) if fix is not None else None
        # The precision bar: what is left must have a shape reviewers approve.
        kept = [run for run, d in made if d is not None]
        if fix is not None:
            why = _unproven_fix(episode, kept, written) or reviewer_rules.taken_back(episode, found)
            fix = replace(fix, unproven=why or fix.unproven)
        dead_ends = [
            replace(d, unproven=d.unproven or _unproven(run, d, episode, written))
            for run, d in zip(kept, dead_ends, strict=True)
        ]
        if (
            fix is not None
            and dead_ends[-1].unproven == _SEVERAL_STEPS
            and not _really_changed(episode)
        ):  # the retyped line's difference may be in a step that never failed
            fix = replace(fix, unproven=fix.unproven or _SEVERAL_STEPS_FIX)
        if fix is not None and (dead_ends[-1].unproven or dead_ends[-1].routine):
            fix = _with_symptom(fix, episode)
        out += dead_ends
        if fix is not None:
            out.append(fix)
            pairs.append((dead_ends[-1], fix))
    out += [_mechanics(a) for a in found if a.failed and (a.harness or a.routine)]
    return out, pairs


#: A sentence that states why something failed ("… fails because …", "The failure is a live
#: ClickHouse e2e test", "the root cause was …").
_CAUSE_SAID = re.compile(
    r"\b(?:because|root cause|caused by|due to|the reason|(?:failure|failing \w+|error|issue"
    r"|problem) (?:is|was|comes from)|requires?|needs? (?:a|an|the)|only (?:works|runs)"
    r"|(?:is|was) (?:a|an) (?:live|pre-existing|known|flaky|e2e|integration)\b)",
    re.IGNORECASE,
)
#: Words too common in commands and errors to tie a later sentence to a failure.
_GENERIC = frozenset(
    "test tests run runs error errors fail fails failed failing failure code exit file files"
    " line command output result npm npx bun go uv mise cargo python node".split()
)


def _late_cause(failure: Action, gist: str) -> str:
    """The cause the agent states later (after the sentence right after the failure, before
    the user speaks again): the first sentence that says why, is not a guess, narration or a
    question, and names something the error names."""
    tied = {w for w in bar.content_words(gist) if w not in _GENERIC and len(w) > 4}
    if not tied:
        return ""
    for message in failure.said_later:
        if message is failure.said_next:
            continue
        for count, (lo, hi) in enumerate(snippets.sentence_spans(message.text)):
            if count >= 6:
                break
            sentence = _FULL_STOP.split(statements.clause(message.text[lo:hi]), maxsplit=1)[0]
            if (
                20 <= len(sentence) <= 220
                and _CAUSE_SAID.search(sentence)
                and not sentence.endswith(("?", ":"))
                and not bar.is_narration(sentence)
                and not statements.HEDGE.search(sentence)
                and not bar.DANGLING.match(sentence)
                and tied & set(bar.content_words(sentence))
            ):
                return snippets.clean(sentence, 220)
    return ""


_FULL_STOP = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _diagnosis(message: TranscriptMessage | None) -> str:
    """The cause the agent states right after a failure ("The LiveView runs in a separate
    process that can't access the test sandbox."): the first of its first three sentences
    that states something specific, is not narration, a plan, a question or a guess."""
    if message is None:
        return ""
    for count, (lo, hi) in enumerate(snippets.sentence_spans(message.text)):
        if count >= 3:
            break
        clause = _FULL_STOP.split(statements.clause(message.text[lo:hi]), maxsplit=1)[0]
        if (
            20 <= len(clause) <= 220
            and not clause.endswith(("?", ":"))
            and not bar.is_narration(clause)
            and not statements.HEDGE.search(clause)
            and _STATES.search(clause)
            and bar.entities(clause)
            and not bar.DANGLING.match(clause)
        ):
            return snippets.clean(clause, 220)
    return ""


def _runs(episode: Episode) -> list[Episode]:
    """The episode's failures cut where the error changes: fixing one error often uncovers
    the next, and each is its own dead end (the solution resolves the last)."""
    runs: list[Episode] = []
    last_gist: str | None = None
    for failure in episode.failures:
        gist = _gist_text(failure.result.text)
        if runs and gist == last_gist:
            runs[-1].failures.append(failure)
        else:
            runs.append(Episode(episode.target, [failure]))
        last_gist = gist
    return runs


def _gist_text(output: str) -> str:
    span = snippets.error_gist(output)
    if span is None:
        return ""
    line = output[span[0] : span[1]]
    return re.sub(r"\d+", "#", line) + "#".join(reviewer_rules.error_numbers(line))


def dead_end(episode: Episode) -> Candidate | None:
    """What was tried and the gist of how it failed, with the number of attempts that failed
    the same way. A failure the agent then says it wanted (a reproduction, a red test before
    the fix) is kept out."""
    first, last = episode.failures[0], episode.failures[-1]
    span = snippets.error_gist(first.result.text)
    if span is None:
        return None
    line = first.result.text[span[0] : span[1]]
    tries = len(episode.failures)
    what, unclear = _call(first), ""
    if first.command:
        step = _failed_step(first.command, line)
        if step is None:
            unclear = _SEVERAL_STEPS
        elif step:
            what = f"`{snippets.clean(snippets.short_paths(step), 100)}`"
    gist = snippets.error_line(line, 150)
    again = f" ({tries} attempts)" if tries > 1 else ""
    verb = "stops at" if _is_prompt(line) else "fails with"
    cause = "" if first.wanted else _diagnosis(last.said_next) or _late_cause(last, line)
    if cause and bar.novelty(bar.content_words(cause), set(bar.content_words(gist))) < 0.5:
        cause = ""  # it only repeats the error
    if cause and _replaced(cause, last):
        cause = ""  # the agent named another cause later: not its final belief
    if cause and bar.session_voice(cause):
        cause = ""  # "we are in the wrong folder": the session's voice, not a cause to keep
    named = reviewer_rules.line_the_cause_names(first.result.text, span, cause) if cause else None
    if named is not None:  # the line the agent's cause is about carries the failure
        span, line = named, first.result.text[named[0] : named[1]]
        gist = snippets.error_line(line, 150)
        if bar.novelty(bar.content_words(cause), set(bar.content_words(gist))) < 0.5:
            cause = ""  # it only repeats that line
    if cause:  # room for it: the error's gist is shortened
        gist = snippets.error_line(line, 110)
    why = f" — {cause}" if cause else ""
    summary = snippets.fit(f"{what} {verb} {gist.rstrip('.')}{again}{why}")
    return Candidate(
        "episode", "DEAD_END", first.done, first.stream, first.done_pos, span[0], line,
        CONFIDENCE, summary, first.call.line_start, last.done.line_end,
        routine=first.wanted or _glue(line, first) or _bare(line, cause), cause=cause,
        unproven=unclear,
    )  # fmt: skip


def _replaced(cause: str, failure: Action) -> bool:
    """Whether a message of the agent's after the one that stated `cause`, before the user
    speaks again, names "the real cause" instead: the cause was not its final belief."""
    if shapes.REPLACED_CAUSE.search(cause):
        return False  # it is the replacement itself
    key = " ".join(cause.split()[:4])
    said = failure.said_later
    source = next((i for i, m in enumerate(said) if key in " ".join(m.text.split())), -1)
    return any(shapes.REPLACED_CAUSE.search(m.text[:2000]) for m in said[source + 1 :])


#: Steps of a command line that only glue others together (print, move, wait, set up).
_GLUE_PROGRAMS = frozenset(
    "echo printf cd pushd popd source . export set unset sleep true false wait clear".split()
)
_STEP_WORD = re.compile(r"[A-Za-z][\w.-]{3,}")


def _failed_step(command: str, line: str) -> str | None:
    """The step of a command line that the error line comes from: "" when the line runs
    one step (the call describes it), the step's text when another step than the first
    is the one the error names, None when several steps could have said it."""
    text = snippets.HEREDOC_BODY.sub("", command)
    steps = [s for s in reviewer_rules.command_steps(text) if s.strip()]
    working = [s for s in steps if _program_of(s) not in _GLUE_PROGRAMS]
    if len(working) <= 1:
        return ""
    low = line.lower()
    named = [s for s in working if re.search(rf"(?<![\w-]){re.escape(_program_of(s))}\b", low)]
    if len(named) != 1:
        named = [
            s
            for s in working
            if any(w.lower() in low for w in _STEP_WORD.findall(s.split(None, 1)[-1]))
        ]
    if len(named) != 1:
        return None
    return "" if named[0] is working[0] else named[0].strip()


def _glue(line: str, failure: Action) -> str:
    """Why the failure is the agent's shell glue, not the project ("" when it is not): the
    line that carries it is spoken by a looking-around program the command line itself
    runs besides its target (`sleep: invalid time interval` after `npx wrangler … & sleep 5
    && echo …`); an alias answering for the target (`tree` run, `lsd` speaks) is the machine."""
    speaker = _SPEAKER.match(line)
    called = next(iter(failure.target.split()), "")
    name = speaker.group(1) if speaker else ""
    if (
        name in ROUTINE_PROGRAMS
        and name != called
        and re.search(rf"(?:^|[\s;&|(]){re.escape(name)}\b", failure.command)
    ):
        return f"the agent's shell glue failed (`{name}`), not the project"
    return ""


#: An assertion that names no test and no value (`error: expect(received).toBe(expected)`).
_BARE_EXPECT = re.compile(
    r"^\W*(?:\S+:\s+)?(?:error:\s*)?expect\(received\)\.\w+\(expected\)\W*$", re.IGNORECASE
)


def _bare(line: str, cause: str) -> str:
    """Why the dead end says nothing a teammate could use ("" when it does): its gist is an
    assertion with no test or value named, and the agent stated no cause."""
    if not cause and _BARE_EXPECT.match(line.strip()):
        return "a bare assertion: no test, value or cause named"
    return ""


def _between(
    found: Sequence[Action], episode: Episode, places: Sequence[tuple[int, int]] | None = None
) -> list[Action]:
    """The actions of the episode's stream that worked between its first failure and its
    success (routine ones included: a `cd` or a `git add` can be what made it work).
    `places`: the (stream, position) of each action of `found` when they are in that order
    (`_places`): only the actions between are looked at."""
    first, success = episode.failures[0], episode.success
    if success is None:
        return []
    lo, hi = 0, len(found)
    if places is not None:
        lo = bisect_right(places, (first.stream, first.pos))
        hi = bisect_left(places, (first.stream, success.pos), lo)
    return [
        a
        for a in found[lo:hi]
        if a.stream == first.stream
        and first.pos < a.pos < success.pos
        and not a.failed
        and a.harness is None
    ]


def _places(found: Sequence[Action]) -> list[tuple[int, int]] | None:
    """(stream, position) of each action, when `found` is in that order (as `actions` makes
    it); else None."""
    places = [(a.stream, a.pos) for a in found]
    return places if all(a <= b for a, b in pairwise(places)) else None


def solution(episode: Episode, between: Sequence[Action] = ()) -> Candidate | None:
    """What changed between the first failing attempt and the one that worked; None when
    the episode never closed. A success with nothing changed is kept as routine (a rerun
    that passed says nothing reusable)."""
    success = episode.success
    if success is None:
        return None
    first = episode.failures[0]
    # Only what can honestly be credited: an edit in between, an install of the package the
    # error said was missing, or — when nothing else that acts ran in between — a small
    # named change to the command itself. A command run in between is never the credit.
    failed_with = episode.failures[-1].result.text
    narrowed = ""
    changes = _edit_changes(episode.changes, failed_with)
    changes += _install_changes(episode.changes, failed_with)
    doubt = ""
    if not changes:
        tweaked = _command_changes(first.command, success.command)
        doubt = _acted_between(episode.changes, between) or (
            tweak_doubt(first.command, success.command, needed(failed_with)) if tweaked else ""
        )
        if tweaked and not doubt:
            changes = tweaked
            if _narrowed(first.command, success.command):
                narrowed = "the retry only ran a narrower or another target: it fixed nothing"
            elif output_only(first.command, success.command):
                narrowed = "the retry only changed how the command reports: it fixed nothing"
    # The dead end beside it quotes the error; a solution names it only by its code or class.
    was = _was(failed_with)
    edits = sum(
        a.tool.name in EDIT_TOOLS and not prose_only(a, failed_with) for a in episode.changes
    )
    installs = sum(_installs(a) for a in episode.changes)
    told = _told(episode)
    if told and not changes:  # the error's own output named the command: that is the credit
        changes = [_ran_last(episode.changes)]
        doubt = ""
    routine = "" if changes or doubt else "passed again with nothing changed in between"
    if edits + installs > 1:
        # Which change fixed it is a guess; the agent's own account of the fix (a text
        # node) or the dead end's stated cause says it better than a list of edits.
        routine = f"{edits + installs} changes in between: which one fixed it is not clear"
    if told:
        routine = "ran what the error said to run"
    if narrowed:
        routine = routine or narrowed
    how = " after " + _join(changes) if changes else ("" if doubt else " on a rerun")
    summary = snippets.fit(f"{_call(success)} succeeds{how}{was}")
    begin = min([success.call.line_start, *(c.call.line_start for c in episode.changes)])
    span = snippets.output_line(success.result.text, last=True)
    evidence = success.result.text[span[0] : span[1]] if span else success.command
    return Candidate(
        "episode", "SOLUTION", success.done, success.stream, success.done_pos,
        span[0] if span else 0, evidence or _call(success), CONFIDENCE, summary, begin,
        success.done.line_end, routine=routine, unproven=doubt,
    )  # fmt: skip


def _ran_last(changes: Sequence[Action]) -> str:
    ran = [a for a in changes if a.command]
    return f"running `{snippets.clean(snippets.main_stage(ran[-1].command), 70)}`"


def _mechanics(action: Action) -> Candidate:
    """A harness error or a routine command's failure: kept, suppressed, with the reason."""
    span = snippets.error_gist(action.result.text) or (0, min(len(action.result.text), 200))
    line = action.result.text[span[0] : span[1]] or action.tool.name
    if action.harness:
        reason = f"agent mechanics ({action.harness.why})"
    elif action.tool.name not in SHELL_TOOLS:
        reason = (
            f"agent mechanics (the agent's own tool `{action.tool.name}`, not a project command)"
        )
    elif _quota(action.result.text):
        reason = "a service's quota or rate limit (the moment's account state, not the project)"
    else:
        reason = "a routine command (looking around or a throwaway script, not the project)"
    gist = snippets.error_line(line, 120)
    summary = snippets.fit(f"{_call(action)} failed with {gist}")
    return Candidate(
        "episode", "DEAD_END", action.done, action.stream, action.done_pos, span[0], line,
        0.35, summary, action.call.line_start, action.done.line_end, routine=reason,
    )  # fmt: skip


def _call(action: Action) -> str:
    return snippets.describe(action.tool)


def _is_prompt(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("?") or bool(re.search(r"\((?:y/n|yes/no)\)|\[y/n\]", line, re.I))
