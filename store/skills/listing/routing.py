"""What the listing budget costs routing: the project's routing evaluation (434 hand-written
tasks over the 217 corpus skills, `store/eval/`) run twice on a library that holds only what
Claude Code lists — each skill's name and its description cut at the per-skill cap — first
with every description, then with the descriptions the budget drops replaced by the name
alone. The ranker stands in for the model: it sees exactly the listing's text.

With no usage history the order in which descriptions are granted is by name (Claude Code
does not document its order among skills never invoked). The libraries are built with the
real embedding model in a scratch folder and thrown away."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from store.files import Refused, read_regular
from store.models import ParseFailure, SkillSummary, Suggestion
from store.skills.listing.budget import DESCRIPTION_OVERHEAD, NAME_OVERHEAD, listing_text
from store.skills.parser import MAX_FILE_BYTES, parse_skill_md

QUERIES = Path(__file__).resolve().parents[2] / "eval" / "routing_queries.jsonl"
KS = (1, 5, 10)


class RoutingLibrary(AbstractContextManager["RoutingLibrary"], Protocol):
    """The part of a library the evaluation uses."""

    def scan(self, paths: Sequence[Path] | None = None) -> Any: ...

    def suggest_many(
        self, contexts: Sequence[str], limit: int | None = None
    ) -> list[list[Suggestion]]: ...

    def list_skills(self) -> list[SkillSummary]: ...


@dataclass(frozen=True)
class ListedSkill:
    key: str  # "<repo>/<dir>" under the corpus skills folder
    name: str
    text: str  # the listing text with the per-skill cap applied


def corpus_listing(skills_root: Path, cap: int = 1536) -> list[ListedSkill]:
    """Every corpus skill as the listing shows it (name order)."""
    out = []
    for path in sorted(skills_root.glob("*/*/SKILL.md")):
        try:
            parsed = parse_skill_md(read_regular(path, MAX_FILE_BYTES), path.parent.name)
        except Refused:
            continue
        if isinstance(parsed, ParseFailure):
            continue
        text, _, _ = listing_text(parsed.description, parsed.when_to_use, cap)
        out.append(ListedSkill(f"{path.parent.parent.name}/{path.parent.name}", parsed.name, text))
    return sorted(out, key=lambda s: (s.name, s.key))


def granted(listed: Sequence[ListedSkill], budget: int) -> set[str]:
    """Keys whose description fits the budget, granted in order until one does not."""
    remaining = budget - sum(len(s.name) + NAME_OVERHEAD for s in listed)
    keep: set[str] = set()
    for skill in listed:
        cost = DESCRIPTION_OVERHEAD + len(skill.text)
        if cost > remaining:
            break
        remaining -= cost
        keep.add(skill.key)
    return keep


def write_listing_tree(root: Path, listed: Sequence[ListedSkill], keep: set[str] | None) -> None:
    """SKILL.md folders holding only the listing's text (all of it when `keep` is None)."""
    shutil.rmtree(root, ignore_errors=True)
    for skill in listed:
        folder = root / skill.key
        folder.mkdir(parents=True)
        shown = skill.text if keep is None or skill.key in keep else skill.name.replace("-", " ")
        frontmatter = (
            f"---\nname: {json.dumps(skill.name)}\ndescription: {json.dumps(shown)}\n---\n"
        )
        (folder / "SKILL.md").write_text(frontmatter, encoding="utf-8")


def load_queries(path: Path = QUERIES) -> list[tuple[str, tuple[str, ...]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            out.append((str(item["query"]), tuple(item["expected"])))
    return out


def evaluate(
    library: RoutingLibrary, tree: Path, queries: Sequence[tuple[str, tuple[str, ...]]]
) -> dict[str, float]:
    """recall@1/5/10 and MRR of the library's ranking over the queries."""
    names = {
        str(Path(row.fs_path).parent.relative_to(tree.resolve())): row.name
        for row in library.list_skills()
    }
    results = library.suggest_many([q for q, _ in queries], max(KS))
    ranks = []
    for (_, expected), hits in zip(queries, results, strict=True):
        wanted = {names.get(e, e) for e in expected}
        ranks.append(next((i for i, h in enumerate(hits, start=1) if h.name in wanted), 0))
    total = max(len(ranks), 1)
    metrics = {f"recall@{k}": round(sum(1 for r in ranks if 0 < r <= k) / total, 4) for k in KS}
    metrics["mrr"] = round(sum(1.0 / r for r in ranks if r) / total, 4)
    return metrics


def routing_loss(
    open_library: Callable[[Path], RoutingLibrary],
    skills_root: Path,
    work: Path,
    budgets: Sequence[int],
    cap: int = 1536,
) -> dict[str, Any]:
    """Routing with every description, and with each budget's cut."""
    listed = corpus_listing(skills_root, cap)
    queries = load_queries()
    runs: dict[str, Any] = {"skills": len(listed), "queries": len(queries)}
    variants: list[tuple[str, set[str] | None]] = [("full", None)]
    variants += [(f"budget_{b}", granted(listed, b)) for b in budgets]
    for label, keep in variants:
        tree = work / f"listing-{label}"
        write_listing_tree(tree, listed, keep)
        library_dir = work / f"library-{label}"
        shutil.rmtree(library_dir, ignore_errors=True)
        with open_library(library_dir) as library:
            library.scan([tree])
            metrics = evaluate(library, tree, queries)
        described = len(listed) if keep is None else len(keep)
        runs[label] = {**metrics, "described": described, "name_only": len(listed) - described}
    return runs
