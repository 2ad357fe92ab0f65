"""Warm tier: episodes from the tool structure, keyword scores, conclusions, corrections,
the knowledge bar and its reasons, corroboration, edges, verbatim evidence, clean summaries,
failure isolation and speed. No parser, no Textual."""

from __future__ import annotations

import json
import re
import time
from typing import NoReturn

import pytest

from store.ingest import warm
from store.ingest.warm import KEYWORDS, WarmResult, extract_warm
from store.models import (
    EDGE_TYPES,
    NODE_TYPES,
    ExtractedNode,
    ParsedSession,
    ToolResult,
    ToolUse,
    TranscriptMessage,
)

ANTHROPIC = "sk" + "-ant-api03-" + "Rk7Lz2Qm9Wx4Tn8Vb3Hc6Yp1Jd5Gf0Sa2Ue7Io" * 2
JWT = "ey" + "JhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhYmMxMjMiLCJyb2xlIjoiYWRtaW4ifQ." + "Rk7Lz2Qm9Wx4Tn8V"


class Transcript:
    """Builds a session message by message; every message spans two lines of its file."""

    def __init__(self) -> None:
        self.messages: list[TranscriptMessage] = []
        self.lines: dict[str, int] = {}
        self.calls = 0

    def add(self, text: str = "", *, file: str = "main.jsonl", **fields: object) -> None:
        start = self.lines.get(file, 0) + 1
        self.lines[file] = start + 1
        fields = {"role": "assistant", "kind": "text", **fields}
        message = TranscriptMessage(
            index=len(self.messages), file=file, line_start=start, line_end=start + 1,
            uuid=f"u{len(self.messages)}", text=text, timestamp="2026-01-01T00:00:00Z",
            **fields,  # type: ignore[arg-type]
        )  # fmt: skip
        self.messages.append(message)

    def say(self, text: str, file: str = "main.jsonl") -> None:
        self.add(text, file=file)

    def filler(self, count: int) -> None:
        for _ in range(count):
            self.say("Okay.")

    def run(
        self,
        name: str,
        output: str,
        *,
        error: bool = False,
        file: str = "main.jsonl",
        **inputs: str,
    ) -> None:
        """A tool call and its result: two messages."""
        self.calls += 1
        tool_id = f"toolu_{self.calls}"
        call = ToolUse(tool_id, name, json.dumps(inputs, separators=(",", ":")))
        self.add("", kind="tool_use", tool_uses=(call,), file=file)
        result = ToolResult(tool_id, output, error)
        self.add(output, role="user", kind="tool_result", tool_results=(result,), file=file)

    def session(self) -> ParsedSession:
        return ParsedSession(
            session_id="s1", project="/work/app", branch="main", client_version="2.1.39",
            started_at="", ended_at="", messages=tuple(self.messages), turns=1,
            tool_calls=self.calls, errors=0, skills_used=(), skipped={}, files=("main.jsonl",),
        )  # fmt: skip

    def extract(self) -> WarmResult:
        return extract_warm(self.session())


def of_type(result: WarmResult, name: str) -> list[ExtractedNode]:
    return [n for n in result.nodes if n.type == name]


def only(result: WarmResult, name: str) -> ExtractedNode:
    (node,) = of_type(result, name)
    return node


def edges(result: WarmResult) -> set[tuple[str, str, str]]:
    """(source type, edge, target type) of every edge."""
    types = {n.key: n.type for n in result.nodes}
    return {(types[e.source], e.type, types[e.target]) for e in result.edges}


def message_of(session: ParsedSession, node: ExtractedNode) -> TranscriptMessage:
    (message,) = [
        m for m in session.messages if (m.file, m.line_start) == (node.file, node.line_start)
    ]
    return message


def pending(result: WarmResult) -> list[ExtractedNode]:
    return [n for n in result.nodes if not n.suppressed]


def prompt(t: Transcript, text: str) -> None:
    t.add(text, role="user", kind="prompt")


# --------------------------------------------------------------------------- keywords


@pytest.mark.parametrize(
    ("text", "name", "confidence"),
    [
        ("Maybe the cache is stale.", "HYPOTHESIS", 0.45),
        ("Maybe. Maybe! Maybe?", "HYPOTHESIS", 0.45),  # distinct phrases, not occurrences
        ("I think it might be the cache.", "HYPOTHESIS", 0.55),
        ("Let me check the config and look into the grep output.", "INVESTIGATION", 0.65),
        ("I think it might be the cache, or maybe the locale; I suspect it.", "HYPOTHESIS", 0.70),
        ("I think it might be it, or maybe: my guess, I suspect, probably.", "HYPOTHESIS", 0.70),
        ("That DIDN’T\n   work either.", "DEAD_END", 0.45),  # case, spacing, curly apostrophe
        ("Let's try a different approach instead.", "PIVOT", 0.65),
        ("Fixed: the tests pass now.", "SOLUTION", 0.55),
    ],
)  # fmt: skip
def test_keyword_confidence_is_035_plus_01_per_distinct_phrase(
    text: str, name: str, confidence: float
) -> None:
    t = Transcript()
    t.say(text)
    node = only(t.extract(), name)
    assert (node.confidence, node.strategy) == (confidence, "keywords")
    assert node.key == f"warm:keywords:main.jsonl:1-2:{name}"


def test_negated_and_partial_words_do_not_count() -> None:
    t = Transcript()
    t.say("This is not fixed yet and there is no solution; the prefix is unresolvedness.")
    assert of_type(t.extract(), "SOLUTION") == []


def test_keyword_phrases_belong_to_one_type_each() -> None:
    phrases = [phrase for group in KEYWORDS.values() for phrase in group]
    assert len(phrases) == len(set(phrases))
    assert set(KEYWORDS) == set(NODE_TYPES)


def test_evidence_is_the_triggering_sentence_and_the_summary_its_finding() -> None:
    t = Transcript()
    t.say("I ran the suite twice. Maybe `conftest.py` leaks the `db` fixture. Next step.")
    node = only(t.extract(), "HYPOTHESIS")
    assert node.evidence == "Maybe `conftest.py` leaks the `db` fixture."
    assert node.summary == "Maybe `conftest.py` leaks the `db` fixture."


def test_the_finding_is_cut_from_its_opener_and_may_come_a_sentence_later() -> None:
    t = Transcript()
    t.run("Bash", "settings.py:4: POOL = int(os.environ['DB_POOL_SIZE'])",
          command="grep -n POOL settings.py")  # fmt: skip
    t.say(
        "Ah, I see! Let me look closer. I can see that `settings.py` reads `DB_POOL_SIZE`"
        " before `.env` is loaded, so the override never applies."
    )
    node = only(t.extract(), "DISCOVERY")
    assert node.summary == (
        "`settings.py` reads `DB_POOL_SIZE` before `.env` is loaded, so the override never applies."
    )
    assert not node.suppressed


def test_one_sentence_read_as_two_types_is_one_node_of_the_most_telling_type() -> None:
    t = Transcript()
    t.run("Bash", "export.py:12: def export_all(merchants):\nexport.py:14:  asyncio.gather(",
          command="grep -n export_all export.py")  # fmt: skip
    t.say("Looking at `export.py`, I notice that `export_all` starts every merchant at once"
          " through `asyncio.gather`, so the pool runs dry.")  # fmt: skip
    result = t.extract()
    (kept,) = pending(result)
    assert kept.type == "DISCOVERY"
    assert kept.summary == (
        "`export_all` starts every merchant at once through `asyncio.gather`, so the pool runs dry."
    )
    twin = only(result, "INVESTIGATION")
    assert twin.suppressed  # a look around (or the same finding again): kept out


def test_a_sentence_ending_in_a_colon_takes_what_follows() -> None:
    t = Transcript()
    t.say("Checked the logs.\nThe root cause is:\n- the cache key ignores the `LANG` locale\n- x")
    node = only(t.extract(), "DISCOVERY")
    assert node.evidence == "The root cause is:\n- the cache key ignores the `LANG` locale"
    assert node.summary == "The root cause is: the cache key ignores the `LANG` locale; x."


# --------------------------------------------------------------------------- the bar


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Let me check the file structure to see what we have.", "narration"),
        ("I'll create a basic CLAUDE.md file that provides a foundation.", "narration"),
        ("Ah, I see!", "narration"),
        ("Perfect! Now let me look at the tests.", "narration"),
        ("It seems the directory got lost.", "content words"),
        ("I found that it works differently than expected in this case.", "names no file"),
        ("CLAUDE.md has been created with documentation of the project structure.", "report"),
        ("That wasn't it: the `ssl` module is fine.", "self-contained"),
    ],
)
def test_narration_and_vague_statements_are_suppressed_with_a_reason(
    text: str, reason: str
) -> None:
    t = Transcript()
    t.say(text)
    result = t.extract()
    assert result.nodes, "a candidate is kept (suppressed), never dropped"
    assert pending(result) == []
    assert all(reason in n.suppressed for n in result.nodes), [n.suppressed for n in result.nodes]


def test_a_specific_fact_passes_with_its_informativeness() -> None:
    t = Transcript()
    query = 'psql "$PAYMENTS_URL" -c "SELECT extname, extversion FROM pg_extension"'
    t.run("Bash", " extname | extversion\n pg_stat_statements | 1.10\n(1 row)", command=query)
    t.say("It turns out `pg_stat_statements` 1.10 is only installed in the `payments` database,"
          " because `CREATE EXTENSION` ran there.")  # fmt: skip
    (node,) = pending(t.extract())
    assert node.type == "DISCOVERY"
    assert node.informativeness >= 0.7
    assert node.summary.startswith("`pg_stat_statements` 1.10 is only installed")


# --------------------------------------------------------------------------- episodes

IMPORT_ERROR = (
    "Exit code 1\n\x1b[31mTraceback (most recent call last):\n"
    '  File "/app/tests/api/test_client.py", line 1, in <module>\n'
    "    from api import Client\nImportError: cannot import name 'Client' from 'api'\x1b[0m\n"
)


def test_a_failure_and_what_fixed_it_are_a_dead_end_and_a_solution() -> None:
    t = Transcript()
    t.run("Bash", IMPORT_ERROR, error=True, command="pytest tests/api")
    t.run(
        "Edit",
        "The file /app/src/api/__init__.py has been updated.",
        file_path="/app/src/api/__init__.py",
        old_string="from .client import HttpClient",
        new_string="from .client import HttpClient as Client",
    )
    t.run(
        "Bash", "collected 3 items\n\n===== 3 passed in 0.12s =====\n", command="pytest tests/api"
    )
    result = t.extract()
    dead, fix = only(result, "DEAD_END"), only(result, "SOLUTION")
    assert (dead.confidence, fix.confidence) == (0.60, 0.60)
    assert (dead.line_start, dead.line_end) == (1, 4)
    assert (fix.line_start, fix.line_end) == (5, 12)
    assert dead.summary == (
        "`pytest tests/api` fails with ImportError: cannot import name 'Client' from 'api'."
    )
    # An error with no stated cause is no lesson on its own (the precision bar); what fixed
    # it is.
    assert dead.suppressed == "a failure with no stated cause: its error alone is not a lesson"
    assert not fix.suppressed
    assert [(e.source, e.target, e.type) for e in result.edges] == [(dead.key, fix.key, "resolved")]
    assert dead.key == "warm:episode:main.jsonl:1-4:DEAD_END"


def test_a_failure_with_its_stated_cause_is_a_dead_end() -> None:
    t = Transcript()
    t.run("Bash", IMPORT_ERROR, error=True, command="pytest tests/api")
    t.say("`api/__init__.py` exports `HttpClient` only, because the 2.0 rename dropped `Client`.")
    t.run(
        "Edit",
        "The file /app/src/api/__init__.py has been updated.",
        file_path="/app/src/api/__init__.py",
        old_string="from .client import HttpClient",
        new_string="from .client import HttpClient as Client",
    )
    t.run(
        "Bash", "collected 3 items\n\n===== 3 passed in 0.12s =====\n", command="pytest tests/api"
    )
    result = t.extract()
    dead, fix = only(result, "DEAD_END"), only(result, "SOLUTION")
    assert dead.summary == (
        "`pytest tests/api` fails with ImportError: cannot import name 'Client' from 'api' —"
        " `api/__init__.py` exports `HttpClient` only, because the 2.0 rename dropped `Client`."
    )
    assert dead.evidence == "ImportError: cannot import name 'Client' from 'api'"
    assert fix.summary.startswith(
        "`pytest tests/api` succeeds after editing `__init__.py` (`from .client import"
        " HttpClient` → `from .client import HttpClient as Client`)"
    )
    assert not dead.suppressed
    assert not fix.suppressed


def test_a_solution_names_the_flags_that_changed_and_what_feeds_the_command() -> None:
    t = Transcript()
    prompt_output = "? Would you like to use Turbopack? › No / Yes\nnpm warn config ignored"
    t.run("Bash", prompt_output, command="npx create-next-app@latest web --app")
    t.run("Bash", prompt_output, command='echo "" | npx create-next-app@latest web --app --src-dir')
    done = "Initialized a git repository.\n\nSuccess! Created web at /w/web"
    command = 'yes "" | npx create-next-app@latest web --app --src-dir --no-turbopack'
    t.run("Bash", done, command=command)
    result = t.extract()
    dead, fix = only(result, "DEAD_END"), only(result, "SOLUTION")
    assert dead.summary == (
        "`npx create-next-app@latest web --app` stops at ? Would you like to use Turbopack?"
        " › No / Yes (2 attempts)."
    )
    assert "adding `--src-dir`, `--no-turbopack`" in fix.summary
    assert 'piping `yes ""` into it' in fix.summary


def test_installing_a_dependency_is_named_as_the_change() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "error TS2307: Cannot find module 'zod' or its corresponding type declarations.",
        error=True,
        command="npx tsc --noEmit",
    )
    t.run("Bash", "added 1 package in 2s", command="npm install zod@3.23.8")
    t.run("Bash", "", command="npx tsc --noEmit")
    fix = only(t.extract(), "SOLUTION")
    assert "running `npm install zod@3.23.8`" in fix.summary


def test_a_retry_loop_on_one_target_is_one_dead_end() -> None:
    t = Transcript()
    for _ in range(4):
        t.run(
            "Bash",
            "> Build error occurred\n[TypeError: generate is not a function]",
            error=True,
            command="npm run build",
        )
    result = t.extract()
    (dead,) = pending(result)
    assert dead.summary == (
        "`npm run build` fails with [TypeError: generate is not a function] (4 attempts)."
    )
    assert (dead.line_start, dead.line_end) == (1, 16)


def test_a_success_that_ends_no_failure_is_never_a_node() -> None:
    t = Transcript()
    t.run("Bash", "===== 12 passed in 1.1s =====", command="pytest")
    t.run("Bash", "Task succeeded", command="make build")
    t.run("Task", "Task succeeded", description="set up", prompt="do it")
    assert t.extract().nodes == ()


def test_a_different_command_succeeding_closes_nothing() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 2\nmake: *** No rule to make target 'dist'.", error=True,
          command="make dist")  # fmt: skip
    t.run("Bash", "README.md\nsrc\n", command="ls")
    t.run("Bash", "ok", command="make test")
    result = t.extract()
    assert of_type(result, "SOLUTION") == []
    assert [n.type for n in result.nodes] == ["DEAD_END"]


def test_a_rerun_with_nothing_changed_is_no_solution() -> None:
    t = Transcript()
    t.run("Bash", "FAILED tests/test_a.py::test_x - AssertionError", error=True, command="pytest")
    t.run("Bash", "1 passed", command="pytest")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed == "passed again with nothing changed in between"


def test_agent_harness_errors_are_kept_out_with_the_reason() -> None:
    t = Transcript()
    error = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"  # noqa: E501
    t.run("Edit", error, error=True, file_path="/app/page.tsx", old_string="a", new_string="b")
    t.run("Read", "1\texport default function Page() {}", file_path="/app/page.tsx")
    t.run("Edit", "The file /app/page.tsx has been updated.", file_path="/app/page.tsx")
    result = t.extract()
    dead = only(result, "DEAD_END")
    assert dead.suppressed.startswith("agent mechanics")
    assert of_type(result, "SOLUTION") == []


def test_routine_commands_failing_are_kept_out_unless_the_machine_speaks() -> None:
    t = Transcript()
    t.run("Bash", "ls: cannot access 'types/': No such file or directory", error=True,
          command="ls -la types/")  # fmt: skip
    t.run("Bash", "lsd: 3: No such file or directory (os error 2).", error=True,
          command="tree /w -I 'node_modules|.git' -L 3")  # fmt: skip
    result = t.extract()
    ls, tree = of_type(result, "DEAD_END")
    assert ls.suppressed.startswith("a routine command")
    assert not tree.suppressed  # `tree` answered by `lsd`: an alias on this machine
    assert "lsd: 3" in tree.summary


def test_output_that_shows_a_failure_counts_without_is_error() -> None:
    t = Transcript()
    t.run("Bash", "===== 2 failed, 10 passed in 3.2s =====", command="pytest tests")
    t.run("Bash", "FAILED x", command="gh run view 42 --log-failed | grep FAILED")
    result = t.extract()
    (dead,) = result.nodes
    assert dead.summary.startswith("`pytest tests` fails with")


@pytest.mark.parametrize(
    ("command", "family"),
    [
        ("cd app && npm run build 2>&1 | tail -20", "npm run build"),
        ("npx tsc --noEmit --skipLibCheck", "npx tsc"),
        ("python -m pytest -x tests", "python -m pytest"),
        ("kubectl -n api rollout status deploy/api", "kubectl rollout"),
        ("alembic upgrade head", "alembic upgrade"),
        ("alembic heads && alembic history -r 0187: | head -5", "alembic history"),
        ("pytest tests/api -q", "pytest"),
        ("tree /w -I 'node_modules|.git' -L 3", "tree"),
        ("cat > types/README.md << 'EOF'\n# a | b\nEOF", "cat"),
        ("sudo FOO=1 /usr/bin/make -C build install", "make install"),
    ],
)
def test_the_command_family_is_the_target_of_an_episode(command: str, family: str) -> None:
    from store.ingest.snippets import program

    assert program(command) == family


def test_episodes_never_cross_into_a_subagent() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nerror: build failed", error=True, command="npm run build")
    t.run("Bash", "built", command="npm run build", file="main/subagents/agent-a1.jsonl")
    result = t.extract()
    assert of_type(result, "SOLUTION") == []
    assert result.edges == ()


# --------------------------------------------------------------------------- people and beliefs


def test_a_declined_call_and_the_users_reason_are_a_pivot() -> None:
    t = Transcript()
    declined = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if"
        " it was a file edit, the new_string was NOT written to the file)."
    )
    t.run("Bash", declined, error=True, command="npm install lodash")
    prompt(t, "no, we use pnpm in this repo, never npm: the lockfile is pnpm-lock.yaml")
    result = t.extract()
    pivot = only(result, "PIVOT")
    assert pivot.strategy == "correction"
    assert not pivot.suppressed
    assert "pnpm" in pivot.summary
    assert pivot.summary.startswith("The user declined")
    assert of_type(result, "DEAD_END")[0].suppressed.startswith("agent mechanics")


def test_a_user_correction_after_an_action_is_a_pivot() -> None:
    t = Transcript()
    prompt(t, "Add a retry to the payments client.")
    t.run("Edit", "updated", file_path="/app/client.py", old_string="a", new_string="b")
    prompt(t, "Don't retry POST /charges: it is not idempotent, use the `Idempotency-Key` header.")
    pivot = only(t.extract(), "PIVOT")
    assert pivot.summary.startswith("After Edit of `/app/client.py`, the user corrected the agent:")
    assert "Idempotency-Key" in pivot.summary
    assert not pivot.suppressed


def test_an_announced_pivot_needs_a_failure_before_it() -> None:
    t = Transcript()
    t.say("The app uses `title` instead of `text` in `src/types/index.ts`.")
    (node,) = t.extract().nodes
    assert node.type == "DISCOVERY"  # a fact with "instead", not a change of approach


def test_a_hypothesis_a_later_finding_settles_is_not_kept() -> None:
    t = Transcript()
    t.say("Maybe `refund_number_seq` is reset by the `db` fixture, so `issue_refund` skips one.")
    prompt(t, "Go on.")
    t.run("Bash", "refund_number_seq | 2315 | gw0 gw1 gw2 gw3",
          command="psql -c 'SELECT * FROM refund_number_seq'")  # fmt: skip
    t.say("It turns out `refund_number_seq` is shared by all four `pytest-xdist` workers,"
          " because they run against one database.")  # fmt: skip
    result = t.extract()
    settled = only(result, "HYPOTHESIS").suppressed
    assert settled == "settled later in the session (confirmed or ruled out)"
    assert not only(result, "DISCOVERY").suppressed


def test_a_claimed_fix_the_user_says_still_fails_is_not_a_solution() -> None:
    t = Transcript()
    t.run("Bash", "settings/dev.py:9: SESSION_COOKIE_SECURE = True",
          command="grep -rn SECURE settings")  # fmt: skip
    t.say("The fix is to set `SESSION_COOKIE_SECURE = False` in `settings/dev.py`, because"
          " the dev server has no TLS.")  # fmt: skip
    prompt(t, "It still fails with the same CSRF error in the browser.")
    assert only(t.extract(), "SOLUTION").suppressed.startswith("the user's next message")


def test_a_discovery_the_tool_output_bears_out_gets_more_confidence() -> None:
    said = (
        "The problem is that the readiness probe on `/healthz` returns 503 for the new pods,"
        " because `READINESS_DEPS` lists `ledger-grpc`."
    )
    alone, confirmed = Transcript(), Transcript()
    alone.run("Bash", "NAME READY\napi-6d9 1/1", command="kubectl get pods")
    confirmed.run("Bash", "api-6d9 0/1 readiness: GET /healthz 503 (READINESS_DEPS:"
                  " ledger-grpc unreachable)", command="kubectl get pods")  # fmt: skip
    for t in (alone, confirmed):
        t.say(said)
    plain, borne_out = only(alone.extract(), "DISCOVERY"), only(confirmed.extract(), "DISCOVERY")
    # Nothing the first one names was in the output: the precision bar keeps it out.
    assert plain.suppressed == "nothing it names appears in the session's tool output before it"
    assert (plain.confidence, borne_out.confidence) == (0.65, 0.70)
    assert not borne_out.suppressed
    assert borne_out.informativeness > plain.informativeness


# --------------------------------------------------------------------------- corroboration


def test_corroboration_adds_005_to_the_higher_confidence() -> None:
    t = Transcript()
    t.run("Bash", "Name: httpx\nVersion: 0.28.1", command="pip show httpx")
    # conclusion 0.65, keyword "the fix" 0.45: one node, 0.70
    t.say("The fix was to pin `httpx` below 0.28, because `httpx` 0.28 dropped `proxies`.")
    (node,) = t.extract().nodes
    assert (node.type, node.confidence, node.strategy) == ("SOLUTION", 0.70, "conclusion")
    assert node.key == "warm:conclusion:main.jsonl:5-6:SOLUTION"


def test_corroboration_is_capped_at_075() -> None:
    t = Transcript()
    t.run("Bash", "cache.py:7: def cache_key(path): return f'{path}:{user}'  # no LANG",
          command="grep -n key cache.py")  # fmt: skip
    # Five DISCOVERY phrases (0.70) and an explicit conclusion (0.65): one node, 0.75.
    t.say("It turns out I found the root cause: interesting, the culprit is `cache.py`, whose"
          " `cache_key()` ignores `LANG`.")  # fmt: skip
    (node,) = of_type(t.extract(), "DISCOVERY")
    assert node.confidence == 0.75


def test_explicit_conclusion_is_a_discovery_at_065() -> None:
    t = Transcript()
    t.say("The problem was that the cache key in `cache.py` ignores the locale.")
    (node,) = t.extract().nodes
    assert (node.type, node.confidence, node.strategy) == ("DISCOVERY", 0.65, "conclusion")


def test_conclusion_that_states_a_fix_is_a_solution() -> None:
    t = Transcript()
    t.say("The issue was a stale `.git/index.lock`; deleting it resolves the hang.")
    (node,) = t.extract().nodes
    assert (node.type, node.confidence, node.strategy) == ("SOLUTION", 0.65, "conclusion")


# --------------------------------------------------------------------------- edges


def test_hypothesis_informs_the_next_investigation() -> None:
    t = Transcript()
    t.say("Maybe the cache is stale.")
    t.say("Okay.")
    t.say("Let me check the cache settings.")
    t.say("Let me look at the logs too.")
    result = t.extract()
    (edge,) = result.edges
    assert edge.type == "informed"
    assert edge.source == only(result, "HYPOTHESIS").key
    assert edge.target == of_type(result, "INVESTIGATION")[0].key


def test_dead_end_triggers_the_next_pivot() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nerror: linker `cc` not found", error=True, command="cargo build")
    t.say("Let's try a different approach: switch to the `musl` target.")
    assert ("DEAD_END", "triggered_pivot", "PIVOT") in edges(t.extract())


def test_edges_stay_within_a_stream_and_a_window() -> None:
    t = Transcript()
    t.say("Maybe the cache is stale.")
    t.say("Let me check the cache.", file="main/subagents/agent-a1.jsonl")
    t.filler(8)
    t.say("Let me check the cache settings.")  # nine messages on in the main stream
    assert t.extract().edges == ()


def test_edge_types_are_known() -> None:
    result = rich_transcript().extract()
    assert {e.type for e in result.edges} <= set(EDGE_TYPES)
    keys = {n.key for n in result.nodes}
    assert all(e.source in keys and e.target in keys for e in result.edges)


# --------------------------------------------------------------------------- what is read


def test_prompts_compactions_and_skill_bodies_are_not_reasoning() -> None:
    t = Transcript()
    t.add("Maybe fix the tests so they pass?", role="user", kind="prompt")
    summary = "This session is being continued. The fix was to pin httpx; tests pass now."
    t.add(summary, role="user", kind="compact")
    body = (
        "Base directory for this skill: /home/dev/.claude/skills/pdf-tools\n\n# PDF tools\n\n"
        "Maybe check the docs first. If it doesn't work, try a different approach."
    )
    t.add(body, role="user", kind="meta", is_meta=True)
    t.say("I think the fix is done.", file="main/subagents/agent-acompact-1f2e.jsonl")
    result = t.extract()
    node = only(result, "CONTEXT_LOAD")
    assert [n.type for n in result.nodes] == ["CONTEXT_LOAD"]
    assert node.evidence == "Base directory for this skill: /home/dev/.claude/skills/pdf-tools"
    assert node.summary == "Loaded skill `pdf-tools`."
    assert node.line_start == 5
    assert node.suppressed.startswith("a skill load")


def test_launching_a_skill_is_a_context_load_kept_out_of_the_queue() -> None:
    t = Transcript()
    t.run("Skill", "Launching skill: elixir:hex-docs-search", skill="elixir:hex-docs-search")
    node = only(t.extract(), "CONTEXT_LOAD")
    assert node.summary == "Launched skill `elixir:hex-docs-search`."
    assert node.suppressed


def test_tool_output_is_not_mined_for_keywords() -> None:
    t = Transcript()
    t.run("Read", "# Notes\nMaybe the fix works now; let me check.", file_path="/app/NOTES.md")
    assert t.extract().nodes == ()


# --------------------------------------------------------------------------- output quality


def rich_transcript() -> Transcript:
    t = Transcript()
    t.say("Let me read CLAUDE.md first, then check the failing test.")
    t.run("Bash", "x" * 5_000 + "\nAssertionError: expected 3\n" + "y" * 5_000, error=True,
          command="pytest -x tests/test_api.py")  # fmt: skip
    t.say("I think the fixture might be stale. Let me look at conftest.py.")
    t.run(
        "Bash",
        "<system-reminder>Remember the todo list.</system-reminder>\n<tool_use_error>"
        "\x1b[1;31mError: spawn ENOENT\x1b[0m</tool_use_error>",
        error=True,
        command="npm test",
    )
    t.say("That didn't work; <command-name>/clear</command-name> let's try yarn instead.")
    t.run("Bash", "Done in 2.1s ✓", command="npm test -- --watch=false")
    t.run("Bash", "1 passed in 0.03s", command="pytest -x tests/test_api.py")
    t.say(f"I found that the key {ANTHROPIC} was revoked, so the client fails.")
    curl = f'curl -fsS -H "Authorization: Bearer {JWT}" https://api.example.org'
    t.run("Bash", "curl: (22) 401 Unauthorized", error=True, command=curl)
    t.say("The fix was to rotate the token; the request works now. " * 20)
    t.say("It turns out the root cause is the proxy. Alternatively we could bypass it.")
    return t


def test_evidence_is_verbatim_and_summaries_are_clean() -> None:
    t = rich_transcript()
    session = t.session()
    result = extract_warm(session)
    assert len(result.nodes) >= 8
    assert result.problems == ()
    texts = {m.line_start: m for m in session.messages}
    for node in result.nodes:
        covered = [m for start, m in texts.items() if node.line_start <= start <= node.line_end]
        sources = [t for m in covered for t in (m.text, *(r.text for r in m.tool_results))]
        assert node.evidence
        assert any(node.evidence in text for text in sources), node
        assert len(node.evidence) <= 400
        assert 0 < len(node.summary) <= 220
        for junk in ("<tool_use_error>", "<system-reminder>", "<command-name>", "\x1b", "[31m"):
            assert junk not in node.summary, node.summary
        assert "Remember the todo list" not in node.summary
        assert ANTHROPIC[4:20] not in node.summary
        assert JWT[:20] not in node.summary
        assert node.summary.endswith((".", "!", "?", "…", "`"))
        assert node.tier == "warm"
        assert node.type in NODE_TYPES


def test_secrets_stay_verbatim_in_evidence_but_not_in_summaries() -> None:
    result = rich_transcript().extract()
    revoked = [n for n in result.nodes if ANTHROPIC in n.evidence]
    assert revoked
    assert all("[REDACTED" in n.summary for n in revoked)
    curl = [n for n in result.nodes if "401 Unauthorized" in n.evidence]
    assert curl
    assert "Bearer [REDACTED" in curl[0].summary


def test_giant_error_output_gives_its_meaningful_line() -> None:
    result = rich_transcript().extract()
    dead = next(n for n in of_type(result, "DEAD_END") if "AssertionError" in n.evidence)
    assert dead.evidence == "AssertionError: expected 3"
    assert "xxxxx" not in dead.summary


def test_same_input_same_nodes_keys_and_order() -> None:
    first, second = rich_transcript().extract(), rich_transcript().extract()
    assert first == second
    pattern = re.compile(r"warm:(keywords|episode|conclusion|correction):[^:]+:\d+-\d+:[A-Z_]+")
    assert all(pattern.fullmatch(n.key) for n in first.nodes)
    assert len({n.key for n in first.nodes}) == len(first.nodes)
    for n in first.nodes:
        assert n.key == f"warm:{n.strategy}:{n.file}:{n.line_start}-{n.line_end}:{n.type}"


# --------------------------------------------------------------------------- failures


def test_a_failing_strategy_is_reported_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def boom(context: object) -> NoReturn:
        raise RuntimeError("boom")

    strategies = dict(warm._STRATEGIES)
    strategies["keywords"] = boom
    monkeypatch.setattr(warm, "_STRATEGIES", tuple(strategies.items()))
    result = rich_transcript().extract()
    assert result.problems == ("strategy keywords failed: RuntimeError: boom",)
    assert {n.strategy for n in result.nodes} == {"episode", "conclusion"}
    assert ("DEAD_END", "resolved", "SOLUTION") in edges(result)


def test_an_empty_session_has_no_nodes() -> None:
    result = Transcript().extract()
    assert result == WarmResult((), (), ())


# --------------------------------------------------------------------------- speed

#: Assistant turns as real sessions have them: short, a third or so with a signal phrase.
TURNS = [
    "Let me check how the config loader resolves paths.",
    "Now I'll update the handler to accept an empty body.",
    "I think the fixture might be leaking state between tests.",
    "Adding a regression test for the empty case.",
    "Running the full suite.",
    "That didn't work, same error. Let's try a different approach.",
    "Reformatting the changed files.",
    "It turns out the root cause is a stale cache; the fix is to clear it on startup.",
    "The tests pass now.",
    "Done. Moving on to the docs.",
]


def synthetic_session(size: int, *, dense: bool = False) -> ParsedSession:
    """About `size` characters: reasoning, tool calls, file-sized outputs, some errors.
    `dense`: three sentences a turn and short outputs (about 50 times a real session's nodes)."""
    t = Transcript()
    log = "".join(f"  step {n:03d}: value={n * 7} status=ok\n" for n in range(70))
    total = i = 0
    while total < size:
        turn = " ".join(TURNS[(i + k) % 10] for k in (0, 2, 7)) if dense else TURNS[i % 10]
        error = i % 6 == 0
        output = log[:400] if dense else log
        output = "Exit code 1\nTypeError: x is undefined\n" + output[:300] if error else output
        t.say(turn)
        t.run("Bash", output, error=error, command=f"npm test -- case{i % 7}")
        total += len(turn) + len(output)
        i += 1
    return t.session()


def timed(session: ParsedSession) -> tuple[WarmResult, float]:
    """The warm pass's CPU time (not wall time: a loaded machine must not fail the test;
    `librarian bench` holds the wall-clock budget)."""
    extract_warm(session)  # first run pays for lazy imports and caches
    start = time.process_time()
    result = extract_warm(session)
    return result, time.process_time() - start


def test_one_megabyte_session_is_fast() -> None:
    session = synthetic_session(1_000_000)
    result, elapsed = timed(session)
    print(f"warm, 1 MB: {len(result.nodes)} nodes in {elapsed * 1000:.1f} ms")
    assert result.problems == ()
    assert 100 < len(result.nodes) < 2_000
    assert elapsed < 1.5  # loose bound for a busy machine; `librarian bench` holds the budget


def test_signal_dense_megabyte_stays_linear() -> None:
    session = synthetic_session(1_000_000, dense=True)
    result, elapsed = timed(session)
    print(f"warm, 1 MB dense: {len(result.nodes)} nodes in {elapsed * 1000:.1f} ms")
    assert len(result.nodes) > 2_000
    assert elapsed < 3.0  # a quadratic scan takes far longer; bench holds the budget


@pytest.mark.parametrize(
    ("output", "gist"),
    [
        (
            "Exit code 2\nCompiling 40 files (.ex)\nRunning ExUnit with seed: 1\n\n  1) test x"
            " (AppWeb.PageTest)\n     ** (RuntimeError) Phoenix LiveView requires lazy_html as a"
            " test dependency.\n     Please add to your mix.exs:",
            "** (RuntimeError) Phoenix LiveView requires lazy_html as a test dependency.",
        ),
        (
            '✘ [ERROR] Could not resolve "js/app.js"\n\n1 error\nError: Build failed with 1 error'
            ':\nerror: Could not resolve "js/app.js"',
            'error: Could not resolve "js/app.js"',
        ),
        (
            "npm warn config ignored\n\nsrc/a.ts(6,33): error TS2307: Cannot find module 'x'.",
            "src/a.ts(6,33): error TS2307: Cannot find module 'x'.",
        ),
        (
            'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: first\n'
            "\nDuring handling...\nKeyError: 'the last one'",
            "KeyError: 'the last one'",
        ),
        ("banner\n/\\ |‾‾| /‾‾/\nERRO[0182] thresholds crossed", "ERRO[0182] thresholds crossed"),
    ],
)
def test_the_gist_is_the_line_that_carries_the_failure(output: str, gist: str) -> None:
    from store.ingest.snippets import error_gist

    span = error_gist(output)
    assert span is not None
    assert output[span[0] : span[1]] == gist


# ------------------------------------------------------------------------ judged on real sessions


def test_a_failure_the_agent_wanted_is_not_a_dead_end() -> None:
    t = Transcript()
    t.run("Bash", "FAILED tests/test_refunds.py::test_numbers - assert 2291 == 2290",
          error=True, command="pytest -n 4 tests/test_refunds.py --count 5")  # fmt: skip
    t.say("Good, that reproduces the flake: one run in five fails under `-n 4`.")
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed == "a failure the agent wanted (it says so)"


def test_version_control_bookkeeping_is_routine_but_commit_hooks_are_not() -> None:
    t = Transcript()
    t.run("Bash", "fatal: The current branch fix-x has no upstream branch.", error=True,
          command="git push")  # fmt: skip
    t.run("Bash", "Pre-commit validation failed:\n[FORMAT] Code is not formatted.\nRun 'mix"
          " format' to fix.", error=True, command='git commit -m "feat: x"')  # fmt: skip
    push, commit = of_type(t.extract(), "DEAD_END")
    assert push.suppressed.startswith("a routine command")
    assert not commit.suppressed.startswith("a routine command")  # the project's own hook
    assert "Pre-commit validation failed" in commit.summary


def test_a_command_run_in_between_is_never_credited_nor_the_retrys_own_tweaks() -> None:
    t = Transcript()
    t.run("Bash", "error: timed out waiting for the condition", error=True,
          command="kubectl -n api rollout status deploy/api --timeout=10s")  # fmt: skip
    t.run(
        "Bash",
        "Created workflow_dispatch event",
        command="gh workflow run deploy.yml -f tag=v3.8.4",
    )
    t.run("Bash", 'deployment "api" successfully rolled out',
          command="kubectl -n api rollout status deploy/api --timeout=120s")  # fmt: skip
    fix = only(t.extract(), "SOLUTION")
    # The deploy or the longer timeout: which one made it work is a guess either way.
    assert fix.suppressed == (
        "another command ran in between (`gh workflow run deploy.yml -f tag=v3.8.4`): what"
        " fixed it is not clear"
    )
    assert " after " not in fix.summary


def test_each_error_of_a_retry_loop_is_its_own_dead_end() -> None:
    t = Transcript()
    t.run("Bash", "E   ImportError: cannot import name 'Client'", error=True, command="pytest")
    t.run("Bash", "E   ImportError: cannot import name 'Client'", error=True, command="pytest")
    t.run("Bash", "E   TypeError: Client() takes no arguments", error=True, command="pytest")
    t.run("Bash", "3 passed", command="pytest")
    result = t.extract()
    first, second = of_type(result, "DEAD_END")
    assert "ImportError" in first.summary
    assert first.summary.endswith("(2 attempts).")
    assert "TypeError" in second.summary
    fix = only(result, "SOLUTION")
    assert [(e.source, e.target) for e in result.edges if e.type == "resolved"] == [
        (second.key, fix.key)
    ]


def test_a_list_is_read_with_the_sentence_that_introduces_it() -> None:
    t = Transcript()
    t.say(
        "The root cause is:\n- `date(settled_at)` hides the column from the index\n"
        "- the only usable index is `merchant_id`"
    )
    node = only(t.extract(), "DISCOVERY")
    assert "`date(settled_at)` hides the column" in node.summary
    assert "`merchant_id`" in node.summary


def test_a_wrap_up_that_restates_the_session_is_kept_out() -> None:
    t = Transcript()
    t.run("Bash", "refund_number_seq | 2315 | gw0 gw1 gw2 gw3",
          command="psql -c 'SELECT * FROM refund_number_seq'")  # fmt: skip
    t.say("I found that `refund_number_seq` is shared by all four `pytest-xdist` workers,"
          " because they run against one database.")  # fmt: skip
    t.say(
        "**Root cause.** It turns out `refund_number_seq` is shared by all four `pytest-xdist`"
        " workers, because they run against one database."
        "\n\n**Fixed.** The test no longer assumes consecutive numbers."
    )
    first, again = of_type(t.extract(), "DISCOVERY")
    assert not first.suppressed
    assert again.suppressed == "restates what the session already found"


def test_an_investigation_must_name_the_command_and_what_it_showed() -> None:
    t = Transcript()
    t.say("Looking into the export module for the slow path.")
    t.run(
        "Bash",
        "Seq Scan on orders (rows=12) Rows Removed by Filter: 2100000",
        command='psql -c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM orders WHERE region = 1"',
    )
    t.say("Investigating with `EXPLAIN (ANALYZE, BUFFERS)` showed 2.1M rows of `orders` removed"
          " by the filter, because `region` has no index.")  # fmt: skip
    vague, method = of_type(t.extract(), "INVESTIGATION")
    assert vague.suppressed
    assert not method.suppressed


def test_url_routes_are_not_shortened_like_file_paths() -> None:
    from store.ingest.snippets import short_paths

    assert short_paths("POST /internal/settlements/export") == "POST /internal/settlements/export"
    assert short_paths("see /home/dev/work/app/src/api/client.py") == "see client.py"
