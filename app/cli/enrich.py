"""`librarian enrich` and `enrichments`: thin skills get a proposed rewrite of their discovery
frontmatter (description, when to use, triggers, tags) that waits for review as a diff.

`enrich` without a skill lists the thin ones; `enrich SKILL…` (or `--all`) proposes, by the
configured LLM when one is (`--llm`, or `enrich.source = "llm"`, or an API key with the default
"auto"), else by rules mined from the transcripts where the skill was used (`--rules`).
`enrichments approve ID` writes the SKILL.md back (a new version); `reject ID --reason R`."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from app.cli.common import (
    Subcommands,
    actions,
    add_command,
    emit,
    open_library,
    plain,
)
from store.errors import LibrarianError
from store.ingest.cold import ColdTierUnavailable, client_from_config
from store.models.governance import Enrichment, ThinSkill
from store.text import neutralise, one_line

if TYPE_CHECKING:
    from store.library import Library
    from store.skills.enrich import ToolCaller


def register(sub: Subcommands) -> None:
    """Add `enrich` and `enrichments`."""
    enrich = add_command(
        sub,
        "enrich",
        "thin skills: list them, or propose a rewrite of their frontmatter for review",
        cmd_enrich,
        json_flag=True,
        reads=lambda args: not args.skills and not args.all,
    )
    enrich.add_argument("skills", nargs="*", metavar="SKILL")
    enrich.add_argument("--all", action="store_true", help="propose for every thin skill")
    how = enrich.add_mutually_exclusive_group()
    how.add_argument("--llm", action="store_true", help="by the configured LLM (needs a key)")
    how.add_argument("--rules", action="store_true", help="by rules, no network")
    proposals = add_command(
        sub,
        "enrichments",
        "enrichment proposals: list, show, diff, approve ID, reject ID --reason R",
        cmd_enrichments,
        json_flag=True,
        reads=actions("list", "show", "diff"),
    )
    proposals.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "show", "diff", "approve", "reject"],
    )
    proposals.add_argument("proposal_id", nargs="?")
    proposals.add_argument(
        "--status",
        default="pending",
        choices=["pending", "approved", "rejected", "stale", "replaced", "all"],
    )
    proposals.add_argument("--reason", default="", help="why (required to reject)")


def choose_client(args: argparse.Namespace, library: Library) -> ToolCaller | None:
    """The LLM to propose with, or None for rules (`--llm`, `--rules`, `enrich.source`)."""
    if args.rules:
        return None
    source = str(library.config.get("enrich.source", "auto") or "auto").lower()
    if not args.llm and source == "rules":
        return None
    if not args.llm and source == "auto":
        env = str(library.config.get("llm.api_key_env", "ANTHROPIC_API_KEY"))
        if not os.environ.get(env, "").strip():
            return None  # no LLM configured: rules
    try:
        return client_from_config(library.config)
    except ColdTierUnavailable as exc:
        raise LibrarianError(f"{exc} (or pass --rules)") from exc


def cmd_enrich(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if not args.skills and not args.all:
            thin = library.thin_skills()
            emit(args, [plain(t) for t in thin], thin_text(thin))
            return 0
        names = args.skills or [t.name for t in library.thin_skills()]
        client = choose_client(args, library)
        made = [library.enrich(name, client) for name in names]
    emit(args, [plain(e) for e in made], enrichments_text(made, "no thin skills to enrich"))
    return 0


def cmd_enrichments(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if args.action == "list":
            status = None if args.status == "all" else args.status
            rows = library.enrichments(status)
            emit(args, [plain(e) for e in rows], enrichments_text(rows, "no enrichment proposals"))
            return 0
        if not args.proposal_id:
            raise LibrarianError(f"enrichments {args.action} needs a proposal ID")
        if args.action in ("show", "diff"):
            found = library.enrichment(args.proposal_id)
        elif args.action == "approve":
            found = library.approve_enrichment(args.proposal_id)
        else:
            found = library.reject_enrichment(args.proposal_id, args.reason)
    text = (
        neutralise(found.diff)
        if args.action == "diff"
        else "\n".join([enrichments_text([found], ""), *detail_lines(found)])
    )
    emit(args, plain(found), text)
    return 0


def thin_text(rows: list[ThinSkill]) -> str:
    if not rows:
        return "no thin skills: every description says what and when"
    lines = [f"{len(rows)} thin skills (`librarian enrich SKILL` proposes a rewrite):"]
    for t in rows:
        lines.append(f"  {one_line(t.name, 48):<48} v{t.version_no}  {one_line(t.description, 70)}")
        lines += [f"      {one_line(r, 120)}" for r in t.reasons]
    return "\n".join(lines)


def enrichments_text(rows: list[Enrichment], empty: str) -> str:
    if not rows:
        return empty
    lines = []
    for e in rows:
        decided = f" by {one_line(e.decided_by, 40)}" if e.decided_by else ""
        why = f": {one_line(e.reason, 120)}" if e.reason else ""
        lines.append(
            f"{e.proposal_id}  {e.status:<8} {one_line(e.skill_name, 40):<40} v{e.version_no}"
            f"  {one_line(e.source, 30)}{decided}{why}"
        )
    return "\n".join(lines)


def detail_lines(e: Enrichment) -> list[str]:
    lines = [f"  {one_line(k, 20)}: {one_line(v, 300)}" for k, v in sorted(e.fields.items())]
    lines += [f"  because {one_line(r, 200)}" for r in e.reasons]
    return lines
