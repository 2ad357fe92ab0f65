"""One skill as the Skills screen and `librarian show` present it: the catalog's detail, its
governance (served version, candidate, unproven requirements) and the pattern it graduated
from."""

from __future__ import annotations

import dataclasses

from store import catalog
from store.kernel import Kernel, LibraryError
from store.lifecycle.graph import DependencyGraph
from store.lifecycle.manifest import governed
from store.models import SkillDetail
from store.skills.usage import ImportanceRule


def skill_detail(kernel: Kernel, key: str | int) -> SkillDetail:
    """The skill named `key` (or with that id); `LibraryError` when there is none."""
    # Cycles through the skill come from the cached dependency graph (a search of the
    # whole graph per skill shown is seconds at 200,000 relations).
    detail = catalog.get_skill(
        kernel.db,
        key,
        kernel.now(),
        kernel.service(DependencyGraph).cycles_through,
        ImportanceRule.from_config(kernel.config),
    )
    if detail is None:
        raise LibraryError(f"no skill named {key!r}")
    detail = governed(kernel, detail)
    with kernel.db.read() as conn:
        row = conn.execute(
            "SELECT pattern_id, confidence FROM patterns WHERE skill_name=?"
            " AND status='graduated' ORDER BY updated_at DESC, pattern_id LIMIT 1",
            (detail.summary.name,),
        ).fetchone()
    if row is None:
        return detail
    floor = float(kernel.config.get("patterns.min_confidence", 0.4))
    why = ""
    if float(row[1]) < floor:
        why = (
            f"graduated from pattern {row[0]}, whose confidence decayed to {row[1]:.2f}"
            f" (below {floor:.2f}): nobody has retrieved it lately"
        )
    return dataclasses.replace(detail, pattern_id=row[0], revalidate=why)
