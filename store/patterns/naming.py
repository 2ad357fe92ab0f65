"""Skill names a maintainer would choose: built from what the members of a pattern share (the
command, the error, the library, module or identifier, what was changed, the file), then from
the key phrases they repeat, never from the first words of a sentence.

`tsc-ts2307-testing-library-react`, `api-connections-idle-in-transaction`: 2–5 words,
kebab-case, spec-valid (at most 64 characters of a-z, 0-9 and single hyphens) and unique.

The rule reads the shape of the text, not a project's vocabulary: code spans are commands,
identifiers, paths or flags by their form; error classes and codes by their case; phrases are
runs of content words (a preposition may join two: "idle in transaction"). A term counts when
at least two of the texts (the title and the members' summaries) name it; the title (the most
specific member) adds its own error, which is what a pitfall is about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from store.ingest.bar import STOPWORDS

MAX_NAME = 64
#: A name is cut below this, so a uniqueness suffix always fits.
NAME_BUDGET = 48
MIN_WORDS, ENOUGH_WORDS, MAX_WORDS = 2, 4, 5
#: Entity terms longer than this (a migration file's stem) say less than they cost.
MAX_TERM_WORDS = 3

# Term classes, in the order a name lists them.
COMMAND, ERROR, THING, CHANGE, FILE, FLAG, PHRASE = range(7)

#: Programs that only run another one: the program after them is the command (1: after a
#: verb such as `run` when one follows: `npm run build`, `python -m pytest`).
RUNNERS = {
    "npx": 0, "bunx": 0, "pnpx": 0, "sudo": 0, "time": 0, "env": 0, "nohup": 0, "exec": 0,
    "command": 0, "npm": 1, "pnpm": 1, "yarn": 1, "bun": 1, "uv": 1, "poetry": 1, "pdm": 1,
    "hatch": 1, "pipx": 1, "python": 1, "python3": 1, "py": 1,
}  # fmt: skip
#: The word after a runner that hands over to the real program (`npm run`, `python -m`).
RUNNER_VERBS = {"run", "exec", "dlx", "x", "-m", "tool"}
#: Shell plumbing around the command that matters (`cd x && …`, `yes | …`, `… | grep`).
PLUMBING = frozenset(
    """cd echo yes cat true false export set source printf sleep head tail grep egrep sort uniq
    wc tee xargs less more tr cut awk sed jq ls pwd which test read clear""".split()
)
#: Positional words that are arguments, not subcommands (`pytest tests`, `alembic upgrade head`).
ARGUMENTS = frozenset("tests test src app lib all head main master origin dev prod".split())
#: Words a name never carries: reserved by some validators, or meaningless in a name.
RESERVED = frozenset({"claude", "anthropic"})
#: Joiners allowed inside a phrase, between two content words.
CONNECTORS = frozenset({"in", "of", "on", "for", "per", "to", "with", "across", "without"})
#: Verbs, adverbs and generic words of session prose: they join or frame a lesson, they do
#: not name what it is about.
NOISE = frozenset(
    """add adds added adding change changes changed changing check checks checked checking
    create creates created creating edit edits edited editing fail fails failed failing fix
    fixes fixed fixing run runs ran running work works worked working pass passes passed
    passing succeed succeeds succeeded succeeding help helps helped raise raises raised
    raising return returns returned returning call calls called hold holds held holding
    keep keeps kept leave leaves left show shows showed shown find finds found say says said
    take takes took taken give gives gave given look looks looked looking seem seems seemed
    become becomes became know knows knew mean means meant think thought turn turns turned
    start starts started stop stops stopped stopping put puts set sets setting hit hits
    remove removes removed removing drop drops dropped dropping update updates updated
    install installs installed installing try tries trying happen happens happened cause
    causes caused expect expects expected produce produces produced reach reaches reached
    come comes came ensure ensures let lets wait waits waited waiting read reads reading
    write writes wrote written writing makes making uses using usage need needed needs want
    wanted also instead still even already actually really simply directly correctly
    properly exactly probably finally usually always never often sometimes again later
    earlier first second third last next new old same other another different whole every
    each several many few much more less big bigger small smaller slow slower fast faster
    good bad better worse real right wrong plus via thing things way ways time times case
    cases part parts lot lots kind issue issues problem problems solution result results
    step steps something nothing anything everything someone everyone doing done getting
    gets able unable sure like dead end ends error errors due inside within behind during
    under between through around until into onto upon against among one two three four
    five six seven eight nine ten hundred thousand""".split()
)
#: First words of code, not of a command line (`import x from 'y'`, `ALTER TABLE …`).
CODE_KEYWORDS = frozenset(
    """import from def class return const let var function assert if for while with async
    await select insert update delete alter create begin drop with raise throw new""".split()
)

_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:'[a-z]+)?")
_ERROR_CLASS = re.compile(
    r"\b(?:[A-Z]{2,}\d{2,}|(?:[A-Z][a-z0-9]+)+(?:Error|Exception|Warning)|HTTP \d{3}"
    r"|E(?:NO|CONN|ADDR|ACCES|PERM|EXIST|TIMEDOUT|PIPE|ISDIR|NOTDIR|MFILE|BUSY|AGAIN|INVAL"
    r"|HOSTUNREACH|NETUNREACH|AI_)[A-Z_]*)\b"
)
_CODE_CASE = re.compile(
    r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*_[a-z0-9_]+"
    r"|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b"
)
#: File extensions a file name in running text ends with (`sqlalchemy.exc` is a module).
EXTENSIONS = (
    "py|pyi|ipynb|ts|tsx|js|jsx|mjs|cjs|json|jsonl|ya?ml|toml|ini|cfg|conf|env|lock|md|rst|txt"
    "|csv|sql|sh|bash|zsh|ps1|bat|go|rs|rb|php|java|kt|kts|scala|swift|c|h|cc|cpp|hpp|cs|m"
    "|html?|css|scss|sass|less|vue|svelte|astro|xml|proto|graphql|tf|tfvars|hcl|gradle|dart"
    "|lua|ex|exs|erl|r|jl|pl|log|dockerfile|mdx"
)
_FILE = re.compile(
    rf"(?<![\w/.-])(?:[\w@.-]+/)*([\w-]{{2,}})(?:\.[\w-]+)*\.(?:{EXTENSIONS})\b", re.IGNORECASE
)
_DOTTED = re.compile(r"\b\w+(?:[./_]\w+)+\b")
_SETTING = re.compile(r"^([A-Za-z_][\w.]*)\s*[:=]\s*\S")
_PACKAGE = re.compile(r"['\"](@?[a-z0-9][\w.-]*(?:/[\w.-]+)*)['\"]")
_CHANGE = re.compile(
    r"\b(?:after|by) (?:adding|editing|removing|dropping|changing|setting|installing"
    r"|upgrading|downgrading|pinning|renaming|replacing|enabling|disabling|passing|using)\s+$"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?")
_ENV = re.compile(r"^[A-Za-z_]\w*=")
_PLAIN_WORD = re.compile(r"^[a-z][a-z-]{2,20}$")


@dataclass
class _Term:
    words: tuple[str, ...]
    kind: int
    texts: set[int] = field(default_factory=set)
    first: tuple[int, int] = (1 << 30, 1 << 30)  # (text index, position): the title is text 0

    @property
    def content(self) -> int:
        return sum(1 for w in self.words if w not in CONNECTORS)

    def stems(self) -> set[str]:
        return {_stem(w) for w in self.words if w not in CONNECTORS}


def skill_name(title: str, members: Sequence[str], taken: set[str], fallback: str) -> str:
    """A spec-valid, unique name for a pattern with this title (its most specific member)
    and these member summaries; `fallback` when they name nothing usable."""
    name = "-".join(name_words(title, members)) or fallback
    unique, n = name, 2
    while unique in taken:
        suffix = f"-{n}"
        unique = name[: MAX_NAME - len(suffix)].rstrip("-") + suffix
        n += 1
    return unique


def name_words(title: str, members: Sequence[str]) -> list[str]:
    """The words of the name: shared entity terms first (command, error, library or
    identifier, what changed, file, flag), then the most widely shared phrases, 2–5 words."""
    texts = _texts(title, members)
    if not texts:
        return []
    terms: dict[str, _Term] = {}
    for index, text in enumerate(texts):
        for position, (kind, words) in enumerate(_terms(text)):
            # one key for `lock_timeout`, `LockTimeout` and "lock timeouts"
            key = "".join(_stem(w) for w in words if w not in CONNECTORS)
            if not key:
                continue
            term = terms.setdefault(key, _Term(words, kind))
            if kind != PHRASE and len(words) > len(term.words):
                term.words = words  # the identifier's own parts, where one spelling shows them
            term.kind = min(term.kind, kind)
            term.texts.add(index)
            term.first = min(term.first, (index, position))
    shared = 2 if len(texts) > 1 else 1
    entities = sorted(
        (
            t
            for t in terms.values()
            if t.kind != PHRASE and (len(t.texts) >= shared or t.kind == CHANGE or _own_error(t))
        ),
        key=lambda t: (t.kind, -len(t.texts), t.first),
    )
    phrases = sorted(
        (t for t in terms.values() if t.kind == PHRASE and len(t.texts) >= shared),
        key=lambda t: (-len(t.texts) * t.content, -t.content, t.first),
    )
    chosen = _fill([], entities, limit=3, stop=MAX_WORDS)
    chosen = _fill(chosen, phrases, limit=MAX_WORDS, stop=ENOUGH_WORDS)
    if _count(chosen) < MIN_WORDS:  # the members share too little: the title speaks alone
        own = [t for t in terms.values() if 0 in t.texts and t not in chosen]
        own.sort(key=lambda t: (t.kind == PHRASE, t.kind, t.first))
        chosen = _fill(chosen, own, limit=MAX_WORDS, stop=ENOUGH_WORDS)
    return _cut([w for t in chosen for w in t.words])


def _texts(title: str, members: Sequence[str]) -> list[str]:
    """The title first, then the other members, each text once. A title cut short ("…") is
    its member's summary: the member stands in for it rather than counting twice."""
    head = title.strip().rstrip("…").strip().lower()
    first, rest = title.strip(), []
    for text in (m.strip() for m in members):
        if head and text.lower().startswith(head) and first == title.strip():
            first = text
        else:
            rest.append(text)
    return [t for t in dict.fromkeys([first, *rest]) if t]


def _own_error(term: _Term) -> bool:
    """The title's error: what a pitfall is about, even when one member alone names it."""
    return term.kind == ERROR and 0 in term.texts


def _fill(chosen: list[_Term], pool: Sequence[_Term], *, limit: int, stop: int) -> list[_Term]:
    """`chosen` plus terms from `pool` in order: each adds words no chosen term has, at most
    `limit` terms of the pool and `MAX_WORDS` words in all, until `stop` words are reached."""
    out = list(chosen)
    used = {s for t in out for s in t.stems()}
    added = 0
    for term in pool:
        if _count(out) >= stop or added >= limit:
            break
        if len(term.words) > MAX_TERM_WORDS + (term.kind == PHRASE):
            continue
        if term.stems() & used or _count(out) + len(term.words) > MAX_WORDS:
            continue
        out.append(term)
        used |= term.stems()
        added += 1
    return out


def _count(terms: Sequence[_Term]) -> int:
    return sum(len(t.words) for t in terms)


def _cut(words: list[str]) -> list[str]:
    """Words whose kebab form fits the budget (whole words only)."""
    out: list[str] = []
    for word in words:
        if len("-".join([*out, word])) > NAME_BUDGET:
            break
        out.append(word)
    return out


# -- terms of one text --------------------------------------------------------------------------


def _terms(text: str) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(class, words) of every term the text names, in reading order."""
    position = 0
    for match in _CODE_SPAN.finditer(text):
        yield from _plain_terms(text[position : match.start()])
        changed = bool(_CHANGE.search(text[max(0, match.start() - 30) : match.start()]))
        for kind, words in _span_terms(match.group(1)):
            yield (CHANGE if changed and kind != COMMAND else kind), words
        position = match.end()
    yield from _plain_terms(text[position:])


def _span_terms(span: str) -> Iterator[tuple[int, tuple[str, ...]]]:
    """A code span by its form: a command line, a flag, a path or file, an identifier."""
    span = span.strip()
    if not span:
        return
    if span.startswith("-"):
        words = _words(span.lstrip("-").split("=", 1)[0])
        if words:
            yield FLAG, words
        return
    setting = _SETTING.match(span)
    if setting:  # `lock_timeout = 3s`: the setting is the term
        yield THING, _words(setting.group(1).rsplit(".", 1)[-1])
        return
    if " " in span or "|" in span:
        first = span.split(None, 1)[0].strip("({").lower()
        if first in CODE_KEYWORDS:  # code: only the packages it names
            for match in _PACKAGE.finditer(span):
                yield THING, _words(match.group(1))
            return
        for program in _programs(span):
            yield COMMAND, program
        return
    if "/" in span:
        yield from _path_terms(span)
        return
    file = _FILE.fullmatch(span)
    if file:
        yield FILE, _words(file.group(1))
        return
    if _IDENTIFIER.fullmatch(span):
        words = _words(span.removesuffix("()").rsplit(".", 1)[-1])
        if words:
            yield (ERROR if _ERROR_CLASS.fullmatch(span) else THING), words


def _path_terms(span: str) -> Iterator[tuple[int, tuple[str, ...]]]:
    if span.startswith("@"):  # a scoped package: `@testing-library/react`
        yield THING, _words(span)
        return
    last = span.rstrip("/").rsplit("/", 1)[-1]
    file = _FILE.fullmatch(last)
    words = _words(file.group(1) if file else last)
    if words:
        yield FILE, words


def _programs(line: str) -> Iterator[tuple[str, ...]]:
    """The programs of a command line (each part of a pipeline or a `&&` chain), each with
    its subcommand when it has one (`alembic upgrade`), runners and shell plumbing skipped."""
    for part in re.split(r"\|\||&&|[|;]", line):
        tokens = [t.strip("'\"()") for t in part.split()]
        tokens = [t for t in tokens if t]
        while tokens and _ENV.match(tokens[0]):
            tokens.pop(0)
        while tokens and tokens[0] in RUNNERS:
            runner = tokens.pop(0)
            while tokens and tokens[0].startswith("-") and tokens[0] != "-m":
                tokens.pop(0)
            if RUNNERS[runner] and tokens and tokens[0] in RUNNER_VERBS:
                tokens.pop(0)
            while tokens and tokens[0].startswith("-"):
                tokens.pop(0)
        if not tokens:
            continue
        program = tokens[0].rsplit("/", 1)[-1]
        program = re.sub(r"@[\w.^~-]*$", "", program)  # `create-next-app@latest`
        program = re.sub(r"\.(?:py|js|mjs|cjs|ts|sh|rb|pl)$", "", program)
        if not re.fullmatch(r"[A-Za-z][\w.-]*", program) or program.lower() in PLUMBING:
            continue
        words = _words(program)
        if (
            len(words) == 1
            and len(tokens) > 1
            and _PLAIN_WORD.match(tokens[1])
            and tokens[1] not in ARGUMENTS
        ):
            words += _words(tokens[1])
        if words:
            yield words


def _plain_terms(text: str) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Error classes and codes, quoted packages, files and code-case identifiers named in
    running text, then its phrases."""
    for match in _ERROR_CLASS.finditer(text):
        yield ERROR, _words(match.group(0), digits=True)
    for match in _PACKAGE.finditer(text):
        value = match.group(1)
        if (
            value.startswith("@")
            or "/" in value
            or re.search(r"\b(?:module|package)\s+$", text[: match.start()])
        ):
            yield THING, _words(value)
    for match in _FILE.finditer(text):
        if not re.fullmatch(r"\d+", match.group(1)):
            yield FILE, _words(match.group(1))
    for match in _CODE_CASE.finditer(text):
        word = match.group(0)
        if _ERROR_CLASS.fullmatch(word):
            continue
        # PascalCase in running text is mostly a name (TypeScript, PostgreSQL): one word
        proper = word[0].isupper() and "_" not in word and not word.isupper()
        yield THING, (word.lower(),) if proper else _words(word)
    for pattern in (_ERROR_CLASS, _PACKAGE, _FILE, _CODE_CASE, _DOTTED):
        text = pattern.sub(" | ", text)
    yield from ((PHRASE, words) for words in _phrases(text))


def _phrases(text: str) -> Iterator[tuple[str, ...]]:
    """Runs of content words (a single connector may join two), each run's n-grams of one to
    three content words that start and end on a content word."""
    run: list[str] = []
    end = 0
    for match in _WORD.finditer(text):
        gap = text[end : match.start()]
        end = match.end()
        if run and gap not in (" ", "-"):
            yield from _ngrams(run)
            run = []
        word = match.group(0).lower().removesuffix("'s")
        if "'" in word:  # a contraction (I'll, didn't) is never a name word
            word = "'"
        if word in CONNECTORS:
            if run and run[-1] not in CONNECTORS:
                run.append(word)
            else:
                yield from _ngrams(run)
                run = []
        elif _is_name_word(word):
            run.append(word)
        else:
            yield from _ngrams(run)
            run = []
    yield from _ngrams(run)


def _ngrams(run: list[str]) -> Iterator[tuple[str, ...]]:
    for start, first in enumerate(run):
        if first in CONNECTORS:
            continue
        content = 0
        for stop in range(start, len(run)):
            if run[stop] not in CONNECTORS:
                content += 1
                if content > 3:
                    break
                yield tuple(run[start : stop + 1])


def _is_name_word(word: str) -> bool:
    return (
        len(word) >= 3
        and word not in STOPWORDS
        and word not in NOISE
        and word not in RESERVED
        and word.isalnum()
        and not word.isdigit()
        and not (word.endswith("ly") and len(word) > 5)
    )


def _words(text: str, *, digits: bool = False) -> tuple[str, ...]:
    """Kebab words of an identifier, path or phrase: split at case changes, digits stay with
    their letters (`TS2307` → `ts2307`), `@`, `/`, `_`, `.` and `-` separate; numbers alone
    are dropped unless `digits` (`HTTP 404`)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[a-z])(?=[A-Z])", " ", text)
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", spaced)]
    return tuple(w for w in words if w not in RESERVED and (digits or not w.isdigit()))


def _stem(word: str) -> str:
    """A word without its plural ending, to match `connection` with `connections`."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word
