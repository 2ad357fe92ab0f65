"""The one key grammar: every key of the app means one thing on every screen.

`GRAMMAR` is the table (the README's key table says the same); every `Binding` of the app's
screens, dialogs and widgets is built with `bind(verb, …)`, which takes the key from the table
and records the binding's id under its verb, so a test can check each screen against it and
the `?` sheet can group a screen's keys by purpose.

The families:

- **Screens** — `1`…`9` open a screen; `?` this screen's keys; `q` quit.
- **Go to** — the focused skill (or session) on another screen: `g` graph, `h` health,
  `l` lineage, `R` runbook, `i` the Skills screen.
- **Decide** — on the selected thing (or every marked one): `a` approve, `x` reject, `e`
  edit, `s` scope, `p` promote, `u` undo, `n` next (skip), `+` new, `-` remove…
- **Show** — what a list shows: `/` filter, `f` type, `S` status, `o` order…
- **Focus and move** — `d` detail, `escape` clear then back to the list, arrows, `j` `k`.
- **Library** — the whole library: `r` refresh, `c` consolidate, `>` push, `<` pull,
  `v` verify.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.keys import key_to_character

#: The groups of the `?` sheet and the README, in the order they are shown.
GROUPS: tuple[str, ...] = ("Decide", "Go to", "Show", "Focus and move", "Library", "Screens")


@dataclass(frozen=True)
class Verb:
    """One meaning of one or more keys (`keys`: Textual key names), shown under `group`."""

    name: str
    keys: tuple[str, ...]
    group: str
    meaning: str


#: Every verb of the app, by group. A key belongs to one verb only.
GRAMMAR: tuple[Verb, ...] = (
    # Decide: the selected thing (or every marked one).
    Verb(
        "approve",
        ("a",),
        "Decide",
        "say yes to what is proposed: a node, draft, relation or enrichment; graduate a pattern;"
        " the changes health proposes; the runbook's next step (each shows what it does first"
        " when it changes more than the selection)",
    ),
    Verb("reject", ("x",), "Decide", "say no to what is proposed (asks a reason)"),
    Verb("edit", ("e",), "Decide", "rewrite the node's summary"),
    Verb("scope", ("s",), "Decide", "switch the scope PROJECT ⇄ TEAM"),
    Verb("promote", ("p",), "Decide", "put a node kept out by the knowledge bar in the queue"),
    Verb("keep", ("K",), "Decide", "keep a draft's transient literal on purpose (again: not)"),
    Verb("undo", ("u",), "Decide", "undo your last decision"),
    Verb("skip", ("n",), "Decide", "leave this one pending and go to the next pending one"),
    Verb("new", ("plus",), "Decide", "add something new: a relation, a runbook run"),
    Verb("remove", ("minus", "delete"), "Decide", "remove the selected hand-made relation"),
    Verb("abandon", ("A",), "Decide", "abandon the open runbook run"),
    Verb("mark", ("m",), "Decide", "mark or unmark: a decision applies to every marked one"),
    Verb("mark_all", ("ctrl+a",), "Decide", "mark everything listed (again: unmark)"),
    Verb("yes", ("y",), "Decide", "in a question: yes, do it"),
    # Go to: the focused skill (or session) on another screen.
    Verb(
        "graph",
        ("g",),
        "Go to",
        "the graph of the focused thing: a skill's dependency graph, a session's reasoning DAG",
    ),
    Verb("health", ("h",), "Go to", "the focused skill's health (runs, failures, drift)"),
    Verb("lineage", ("l",), "Go to", "the focused skill's lineage (versions, provenance)"),
    Verb("runbook", ("R",), "Go to", "the focused skill's retirement runbook"),
    Verb("info", ("i",), "Go to", "the focused skill on the Skills screen (its full entry)"),
    # Show: what the list shows.
    Verb("filter", ("slash",), "Show", "filter the list by words, or find a skill to centre on"),
    Verb("task", ("t",), "Show", "describe a task: skills ranked as you type"),
    Verb("type", ("f",), "Show", "only one type, kind or verdict (again: the next, then all)"),
    Verb("status", ("S",), "Show", "which statuses are listed (again: the next)"),
    Verb("project", ("P",), "Show", "only this project (again: every project)"),
    Verb("order", ("o",), "Show", "the order of the list"),
    Verb("group", ("G",), "Show", "group the rows by session (again: one list)"),
    Verb("drafts", ("D",), "Show", "the SKILL.md drafts waiting for review (again: the nodes)"),
    Verb("relations", ("C",), "Show", "relations proposed from co-usage (again: the nodes)"),
    Verb("enrichments", ("E",), "Show", "rewrites proposed for thin skills (again: the nodes)"),
    Verb("source", ("T",), "Show", "mine ⇄ team: this library or the team hub's staged items"),
    Verb("budget", ("b",), "Show", "Claude Code's skill listing against its budget (again: not)"),
    Verb("arcs", ("H",), "Show", "highlight dead end → pivot → solution paths"),
    Verb("next_tab", ("right_square_bracket",), "Show", "the next tab"),
    Verb("previous_tab", ("left_square_bracket",), "Show", "the previous tab"),
    Verb("members", ("M",), "Show", "the pattern's member nodes"),
    # Focus and move.
    Verb("detail", ("d",), "Focus and move", "to the detail pane (scroll it)"),
    Verb(
        "clear",
        ("escape",),
        "Focus and move",
        "clear the filters (again: back to the list); in a dialog: cancel",
    ),
    Verb("open", ("enter",), "Focus and move", "open the selected row; in a dialog: confirm"),
    Verb("back", ("backspace",), "Focus and move", "back to where you were before"),
    Verb("up", ("up", "k"), "Focus and move", "previous row"),
    Verb("down", ("down", "j"), "Focus and move", "next row"),
    Verb("page_up", ("pageup",), "Focus and move", "up a page"),
    Verb("page_down", ("pagedown",), "Focus and move", "down a page"),
    Verb("first", ("home",), "Focus and move", "first row"),
    Verb("last", ("end",), "Focus and move", "last row"),
    Verb(
        "left",
        ("left",),
        "Focus and move",
        "towards where it comes from: the column on the left, a parent node",
    ),
    Verb(
        "right",
        ("right",),
        "Focus and move",
        "towards what follows: the column on the right, a child node",
    ),
    Verb("fold", ("space",), "Focus and move", "fold or unfold the branch under the cursor"),
    # Library: the whole library, not the selection.
    Verb("refresh", ("r",), "Library", "read again: rescan the skill roots, the hub's state"),
    Verb("consolidate", ("c",), "Library", "cluster the approved nodes into patterns again"),
    Verb("push", ("greater_than_sign",), "Library", "push to the team hub"),
    Verb("pull", ("less_than_sign",), "Library", "pull from the team hub"),
    Verb("verify", ("v",), "Library", "check the library (or the hub) against its log"),
    # Screens.
    Verb("view", tuple("123456789"), "Screens", "open a screen by its number"),
    Verb("keys", ("question_mark",), "Screens", "this screen's keys, by purpose"),
    Verb("quit", ("q",), "Screens", "quit"),
)

VERBS: dict[str, Verb] = {verb.name: verb for verb in GRAMMAR}

#: The verb of every binding id built with `bind` (filled as the modules are imported).
VERB_OF_ID: dict[str, str] = {}


def bind(
    verb: str,
    action: str,
    description: str,
    *,
    id: str,
    tooltip: str = "",
    show: bool = True,
    key: str | None = None,
) -> Binding:
    """A binding for `verb`, on the verb's keys (or on `key`, one of them)."""
    found = VERBS[verb]
    if key is not None and key not in found.keys:
        raise ValueError(f"{key!r} is not a key of {verb!r}")
    if VERB_OF_ID.get(id, verb) != verb:
        raise ValueError(f"binding id {id!r} is already the verb {VERB_OF_ID[id]!r}")
    VERB_OF_ID[id] = verb
    return Binding(
        key or ",".join(found.keys),
        action,
        description,
        show=show,
        id=id,
        tooltip=tooltip or description,
    )


def verb_of(binding: Binding) -> Verb | None:
    """The verb a binding was built for, or None (Textual's own bindings)."""
    name = VERB_OF_ID.get(binding.id or "")
    return VERBS[name] if name is not None else None


def key_text(key: str) -> str:
    """A key as the README and the sheet write it: `+` for `plus`, `esc` for `escape`."""
    special = {"escape": "esc", "question_mark": "?", "slash": "/", "plus": "+", "minus": "-"}
    if key in special:
        return special[key]
    character = key_to_character(key) if len(key) > 1 else None
    readable = character is not None and character.isprintable() and not character.isspace()
    return character if readable and character is not None else key


def markdown_table() -> str:
    """The grammar as the README's key table (a test keeps the two the same)."""
    lines = ["| Group | Key | Verb | Meaning |", "|---|---|---|---|"]
    for group in GROUPS:
        for verb in (v for v in GRAMMAR if v.group == group):
            keys = " ".join(f"`{key_text(k)}`" for k in verb.keys)
            if verb.name == "view":
                keys = "`1`…`9`"
            lines.append(f"| {group} | {keys} | {verb.name} | {verb.meaning} |")
    return "\n".join(lines)
