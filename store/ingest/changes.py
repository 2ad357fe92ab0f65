"""What changed between the failing attempt and the one that worked (issue 11): the flags
and arguments that differ, what feeds the command, the files edited in between with the gist
of old → new, the packages installed, the last project command run; and how a solution names
the error it fixed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from store.ingest import shapes, snippets
from store.ingest.actions import EDIT_TOOLS, ROUTINE_PROGRAMS, Action, Episode, _installs
from store.ingest.candidates import Candidate, replace
from store.ingest.memo import per_session
from store.ingest.snippets import _FILTERS


def _was(failed_with: str, whole: bool = False) -> str:
    """How the solution names the error it fixed: its code or class, or (`whole`, when no
    dead end beside it reaches the queue) the gist of the error line itself."""
    if not whole:
        named = snippets.error_class(failed_with)
        return f" (it had failed with {named})" if named else ""
    error = snippets.error_gist(failed_with)
    if error is None:
        return ""
    gist = snippets.error_line(failed_with[error[0] : error[1]], 110)
    return f" (it had failed with {gist.rstrip('.')})" if gist else ""


def _with_symptom(fix: Candidate, episode: Episode) -> Candidate:
    """The solution as the whole lesson — the error, then what changed — when the dead end
    beside it stays out of the queue."""
    failed_with = episode.failures[-1].result.text
    short, whole = _was(failed_with), _was(failed_with, whole=True)
    if not whole or short == whole:
        return fix
    head = fix.summary.rstrip(".")
    if short and head.endswith(short):
        head = head[: -len(short)]
    if fix.summary.endswith("…"):
        return fix  # no room left: the dead end's own summary is in the session's view
    return replace(fix, summary=snippets.fit(head.rstrip(".") + whole))


#: Options that change how a command reports, never whether it works.
_OUTPUT_FLAGS = re.compile(
    r"^-(?:q|v|vv|vvv|s|x|qq)$|^--(?:quiet|verbose|silent|color|colour|no-colou?r|tb|reporter"
    r"|format|json|progress|no-progress|summary|durations|show-\w+|log-level|loglevel)(?:=.*)?$"
)


def output_only(failed: str, worked: str) -> bool:
    """Whether the working command differs from the failing one only by options that change
    how it reports (`-q`, `--tb=short`, `--verbose`…): such a retry fixed nothing."""
    _, before = snippets.command_tokens(failed)
    _, after = snippets.command_tokens(worked)
    added = [w for w in after if w not in before]
    dropped = [w for w in before if w not in after]
    return bool(added or dropped) and all(_OUTPUT_FLAGS.match(w) for w in added + dropped)


def _command_changes(failed: str, worked: str) -> list[str]:
    """How the working command differs from the failing one: flags and arguments added or
    dropped, and what feeds it (a pipe in front of it)."""
    if not failed or not worked:
        return []
    feed_before, before = snippets.command_tokens(failed)
    feed_after, after = snippets.command_tokens(worked)
    changes: list[str] = []
    swapped = _swapped(before, after)
    # Free text (a commit message, an inline script, a query) is not a flag that changed.
    added = [w for w in after if w not in before and _token(w)]
    dropped = [w for w in before if w not in after and _token(w)]
    if swapped:
        changes.append(swapped)
    else:
        if added:
            changes.append("adding " + ", ".join(_code(w) for w in added[:4]))
        if dropped:
            changes.append("dropping " + ", ".join(_code(w) for w in dropped[:3]))
    if feed_after and feed_after != feed_before:
        changes.append(f"piping {_code(' '.join(_shown(w) for w in feed_after))} into it")
    return changes


#: At most this many named changes (a flag with its value is one) make a retry "the same
#: command with a small change"; more is a rewrite, and which change fixed it is a guess.
MAX_TWEAKS = 3


def tweak_doubt(failed: str, worked: str, missing: str = "") -> str:
    """Why the difference between the failing and the working command line cannot be
    credited as the fix ("" when it can): it is the same command with 1–3 named flags or
    arguments added, dropped or swapped (and perhaps what is piped into it), and nothing
    else on the line changed — no other step, no quoting, no inline script or text. Or the
    error said a program was `missing` and the retry runs another in its place (`… -- curl`
    → `… -- python -c …` when the container has no curl)."""
    feed_before, before = snippets.command_tokens(failed)
    feed_after, after = snippets.command_tokens(worked)
    if missing and _replaced(before, after) == missing:
        return ""
    if _other_command(before, after):
        return "the retry ran another command from there on, not the same one with a small change"
    added = [w for w in after if w not in before]
    dropped = [w for w in before if w not in after]
    if any(not _token(w) for w in added + dropped):
        return "the retry changed free text (an inline script, a message, a query), not a flag"
    if any(w in _ASKS_ONLY for w in added):
        return "the working command only printed its help or version: it ran nothing"
    fed = feed_after != feed_before
    count = _named_count(after, added, []) + _named_count(before, dropped, after) + fed
    if count > MAX_TWEAKS:
        return f"the command was rewritten ({count} changes): which one fixed it is not clear"
    pipe = ("|", *feed_after, *feed_before) if fed else ()
    allowed_in, allowed_out = {*added, *pipe}, {*dropped, *pipe}
    came, went = _raw_difference(failed, worked)
    if any(_unquoted(w) not in allowed_in for w in came) or any(
        _unquoted(w) not in allowed_out for w in went
    ):
        return (
            "the command line changed beyond the flags named (another step, quoting or a"
            " redirection): what fixed it is not clear"
        )
    return ""


def _replaced(before: Sequence[str], after: Sequence[str]) -> str:
    """The program the retry stopped running, when where the two lines first differ another
    program took its place ("" otherwise)."""
    if not _swapped(before, after):
        return ""
    at = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
    return before[at].rsplit("/", 1)[-1]


def _other_command(before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether, where the two lines first differ, another program or subcommand took the
    other's place and the rest of the line changed with it (`gh pr create …` → `gh pr edit
    6689 …`, `… -- curl -s …` → `… -- python -c …`), not an option's value."""
    swapped = _swapped(before, after)
    if not swapped:
        return False
    at = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
    if all(_SCRIPT_FILE.search(w) for w in (before[at], after[at])):
        return True  # another script run by the same interpreter (`bash a.sh` → `bash b.sh`)
    if not swapped.startswith("running "):
        return False
    option = before[at - 1] if at else ""
    if option.startswith("-") and option != "--":
        return False
    return all(_COMMAND_WORD.fullmatch(w) for w in (before[at], after[at]))


#: A script file an interpreter runs: the program itself, not an argument.
_SCRIPT_FILE = re.compile(r"\.(?:sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl|php|ps1|lua|R)$")
#: A word that names a program or a subcommand (`curl`, `edit`, `rollout`).
_COMMAND_WORD = re.compile(r"[a-z][\w.-]{1,24}")
#: Options that only ask a program about itself: a run with one changes nothing.
_ASKS_ONLY = frozenset({"--help", "-h", "--version", "-V", "help"})


def _named_count(line: Sequence[str], changed: Sequence[str], other: Sequence[str]) -> int:
    """How many named changes the words `changed` of `line` are: an option and its value
    count once (`--target x86_64-unknown-linux-gnu`), and so does a new value given to an
    option both lines have (`--env staging` → `--env prod`: `line` is the failing one, the
    old value is not counted again)."""
    count = 0
    for i, word in enumerate(line):
        if word not in changed:
            continue
        option = line[i - 1] if i else ""
        if option.startswith("-") and not word.startswith("-"):
            if option in changed:
                continue  # the value of an option added or dropped with it
            if option in other and _new_value(option, other, line):
                continue  # the old value of an option whose value changed
        count += 1
    return count


def _new_value(option: str, other: Sequence[str], line: Sequence[str]) -> bool:
    """Whether `option` takes, in `other`, a value `line` does not have."""
    at = list(other).index(option)
    value = other[at + 1] if at + 1 < len(other) else ""
    return bool(value) and not value.startswith("-") and value not in line


#: A raw shell word with its quotes kept, or an operator.
_RAW_WORD = re.compile(
    r"""(?:\d*[<>]+&-?\d*|&>>?|[^\s"'|&;]+|"(?:\\.|[^"\\])*"?|'[^']*'?)+|&&|\|\||[|;&]"""
)
#: A redirection of a stream (`2>&1`, `>/dev/null`, `2> err.log`): how output is kept.
_REDIRECTION = re.compile(r"^\d*(?:>>?|&>)(?:&\d+)?\S*$")
_BARE_REDIRECT = re.compile(r"^\d*(?:>>?|&>>?)$")


def _raw_words(command: str) -> list[str]:
    """The command line as typed, word by word with quotes kept, without heredoc bodies,
    redirections or the filters its output is piped through (`| tail -20`)."""
    return list(_raw_words_of(command))


@per_session  # an episode's commands are compared again and again
def _raw_words_of(command: str) -> tuple[str, ...]:
    text = snippets.HEREDOC_BODY.sub(r"\1", command) if "<<" in command else command
    words: list[str] = []
    target = False  # the word after a bare `>`: the file the output goes to
    for word in _RAW_WORD.findall(text):
        if target:
            target = False
        elif _REDIRECTION.match(word):
            target = bool(_BARE_REDIRECT.match(word))
        else:
            words.append(word)
    while "|" in words:
        cut = len(words) - 1 - words[::-1].index("|")
        tail = words[cut + 1 :]
        if not tail or tail[0] not in _FILTERS:
            break
        words = words[:cut]
    return tuple(words)


def _raw_difference(failed: str, worked: str) -> tuple[list[str], list[str]]:
    """(words only the working line has, words only the failing line has), as typed."""
    before, after = Counter(_raw_words(failed)), Counter(_raw_words(worked))
    return list((after - before).elements()), list((before - after).elements())


def _unquoted(word: str) -> str:
    return word.replace('"', "").replace("'", "")


def _swapped(before: Sequence[str], after: Sequence[str]) -> str:
    """How the command changed when, where the two first differ, a word that is not a flag
    took another's place: one argument replaced ("with `x` instead of `y`"), or the program
    run from there on ("running `python -c …` instead of `curl -s …`"); "" otherwise."""
    at = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), None)
    if at is None or any(w.startswith("-") or "=" in w for w in (before[at], after[at])):
        return ""  # a flag, or a setting put in front (`KEY=value cmd`): added or dropped
    if list(before[at + 1 :]) == list(after[at + 1 :]):
        return f"passing {_code(after[at])} instead of {_code(before[at])}"
    return f"running {_lead(after[at:])} instead of {_lead(before[at:])}"


def _lead(words: Sequence[str]) -> str:
    """The first words of a command, as typed (free text stops it)."""
    shown: list[str] = []
    for word in words[:3]:
        if not _token(word):
            break
        shown.append(_shown(word))
    more = " …" if len(words) > len(shown) else ""
    return f"`{snippets.clean(' '.join(shown), 40)}{more}`"


def _token(word: str) -> bool:
    return len(word) <= 60 and _SPACE.search(word) is None


def _shown(word: str) -> str:
    """A shell word as it would be typed (an empty argument is `""`)."""
    return word if word and _SPACE.search(word) is None else f'"{word}"'


#: A character `str.isspace` calls a space (`\s` is the same test, without a loop per
#: character in Python).
_SPACE = re.compile(r"\s")


def _code(word: str) -> str:
    return f"`{snippets.clean(word, 40)}`"


def _edit_changes(changes: Sequence[Action], failed_with: str = "") -> list[str]:
    """The files edited in between, each with its last edit that added something (the one
    that held; removing a leftover is tidying, not the fix): first the files the failure
    named, then the most recently edited."""
    edits = [a for a in changes if a.tool.name in EDIT_TOOLS and not prose_only(a, failed_with)]
    if not edits:
        return []
    files: dict[str, Action] = {}
    for edit in reversed(edits):
        name = snippets.file_name(edit.target)
        if name not in files or (_tidying(files[name]) and not _tidying(edit)):
            files[name] = edit
    order = sorted(files, key=lambda name: name not in failed_with)  # stable: latest first
    named = [f"editing `{name}` ({snippets.edit_gist(files[name].tool)})" for name in order]
    more = f" and {len(named) - 2} more files" if len(named) > 2 else ""
    return [", ".join(named[:2]) + more]


#: Files of prose (notes, docs, plans): editing one makes no command work, unless the
#: command's error named it.
_PROSE = re.compile(r"\.(?:md|markdown|txt|rst|adoc)$", re.IGNORECASE)


def prose_only(edit: Action, failed_with: str) -> bool:
    """Whether an edit is to a file of prose the failure never named (a note, a plan, a
    README): it cannot be what made the command work."""
    name = snippets.file_name(edit.target)
    return bool(_PROSE.search(name)) and name not in failed_with


def _tidying(edit: Action) -> bool:
    return snippets.edit_gist(edit.tool).startswith(("removed ", "edited it"))


def _install_changes(changes: Sequence[Action], failed_with: str = "") -> list[str]:
    """The installs in between that the failure asked for: its error named a missing
    module or package and the install names it (an install the error never asked for is
    not credited: something else in between may have been the fix)."""
    missing = needed(failed_with)
    return [
        f"running `{snippets.clean(snippets.main_stage(a.command), 70)}`"
        for a in changes
        if a.command and _installs(a) and missing and _names_package(a.command, missing)
    ][:2]


def needed(failed_with: str) -> str:
    """The module, package or program the failure's error says is missing ("" when
    none)."""
    span = snippets.error_gist(failed_with)
    gist = failed_with[span[0] : span[1]] if span else ""
    return shapes.missing_package(gist) or shapes.missing_program(gist)


#: Where a package's name ends and its version or extras begin (`zod@3.23.8`, `x==1.2`).
_VERSION_CUT = re.compile(r"[=<>~^!\[]|@(?=\d|\^|~|latest)")


def _names_package(command: str, needed: str) -> bool:
    """Whether an install command names the missing module or package: its top-level name
    (`@scope/pkg`, or the first part of `pkg.sub` / `pkg/sub`), hyphens and underscores
    alike, as one of the packages installed or a part of one (`yaml` in `pyyaml`)."""
    top = needed if needed.startswith("@") else re.split(r"[./]", needed)[0]
    want = top.lower().replace("_", "-")
    if len(want) < 2:
        return False
    words = snippets.main_stage(command).lower().replace("_", "-").split()[2:]
    names = [_VERSION_CUT.split(w)[0] for w in words if not w.startswith("-")]
    return any(want == n or (len(want) >= 3 and want in n) for n in names)


#: Subcommands that only read (`kubectl get`, `git log`, `alembic heads`, `docker ps`).
_READS = frozenset(
    "get describe logs list ls show status top view inspect info explain version history"
    " heads current ps images search diff".split()
)


def _reads(command: str) -> bool:
    """Whether a command only looks at something (`ls`, `kubectl get pods`, `git log`)."""
    words = snippets.main_stage(command).split()
    return bool(words) and (words[0] in ROUTINE_PROGRAMS or any(w in _READS for w in words[1:6]))


#: Programs and subcommands that only check (a type-check, a linter, a test run, a dry run):
#: running one in between changes nothing a later success could owe to it.
_CHECK_WORDS = frozenset(
    "tsc eslint biome prettier ruff mypy pyright flake8 pylint black pytest vitest jest mocha"
    " test tests lint typecheck type-check check vet clippy --noemit --check --dry-run"
    " --list-files".split()
)


def _only_checks(command: str) -> bool:
    words = [w.lower() for w in snippets.main_stage(command).split()[:6]]
    return any(w in _CHECK_WORDS for w in words)


def _acted_between(changes: Sequence[Action], between: Sequence[Action] = ()) -> str:
    """Why a success cannot be credited to anything when other commands ran between the
    failure and it ("" when none did, or all of them only looked or checked): an install
    the error never asked for, a project command that acts (a deploy, a migration, a setup
    step), or a small command that changes the state the retry runs in (`cd`, `git add`,
    `mv`, a file written by a redirection or an inline script, time waited). Crediting any
    of them is a guess, and so is crediting the retry's own tweaks."""
    ran = [a for a in changes if a.command and a.tool.name not in EDIT_TOOLS]
    if any(_installs(a) for a in ran):
        return (
            "an install ran in between that the error never asked for: which change fixed it"
            " is a guess"
        )
    acting = [a for a in ran if not _reads(a.command) and not _only_checks(a.command)]
    acting += [a for a in between if a.command and a.routine and _changes_state(a.command)]
    if acting:
        last = max(acting, key=lambda a: a.pos)
        name = snippets.clean(snippets.main_stage(last.command) or last.command, 50)
        return f"another command ran in between (`{name}`): what fixed it is not clear"
    return ""


#: Small commands that change the state a later command runs in: the folder, files, the
#: staged set, time.
_STATE_PROGRAMS = frozenset(
    "cd pushd popd mkdir touch cp mv rm rmdir ln chmod chown install unzip tar sleep wait"
    " export source . kill pkill".split()
)
#: Version-control subcommands that change the working copy or what is staged.
_GIT_STATE = frozenset(
    "add rm mv checkout switch restore reset stash pull merge rebase cherry-pick apply clean"
    " init clone commit".split()
)
#: A redirection into a file (not a stream or /dev/null), `tee`, or `sed -i`: a write.
_WRITES = re.compile(
    r"(?:^|[^\d&<>])>>?[ \t]*(?!&|/dev/null\b)[\w./~$\"'-]|\btee\b|\bsed\s+(?:-\w+\s+)*-i"
)


def _changes_state(command: str) -> bool:
    """Whether a routine command line changes something a retry could owe its success to."""
    body = snippets.HEREDOC_BODY.sub(r"\1", command)
    if _WRITES.search(body) or _SCRIPT.search(body):
        return True
    for step in re.split(r"\s*(?:&&|\|\||;|\n|\|)\s*", body):
        words = [w for w in step.split() if "=" not in w or w.startswith("-")]
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head in _STATE_PROGRAMS:
            return True
        if head == "git" and any(w in _GIT_STATE for w in snippets.positional(words[1:])[:1]):
            return True
    return False


#: An interpreter given its program inline or on stdin: a script that may write anything.
_SCRIPT = re.compile(
    r"(?:^|[\s;&|(])(?:python[\d.]*|node|ruby|perl|deno|bun|php)(?:\s+-[\w-]+)*\s+(?:-[ceE]\b|-?\s*<<)"
)


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
