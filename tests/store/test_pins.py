"""Version pins (issue 16): `requires: base@N` in metadata and `relate A requires B@N`; the
blast radius, health and the runbook respect them; a stable skill never depends on a proposed
one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.errors import LibrarianError
from store.library import Library
from store.skills.parser import parse_skill_md
from store.verify import verify
from tests.store.conftest import write_skill


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    """base-deploy at v2; app pins v1 in its metadata, web follows the served version,
    ops requires web."""
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "base-deploy", "Deploy a service.")
    library.scan([root])
    library.change_status("base-deploy", "skill.proposed", "reworking it")
    write_skill(root, "base-deploy", "Deploy a service, v2.")
    pinned = "metadata:\n  requires: base-deploy@1\n"
    write_skill(root, "app", "Ship the app.", extra=pinned)
    write_skill(root, "web", "Ship the web.", extra="metadata:\n  requires: base-deploy\n")
    write_skill(root, "ops", "Operate.", extra="metadata:\n  requires: web\n")
    library.scan([root])
    library.change_status("base-deploy", "skill.promoted", "v2 proven")
    return library


def test_the_parser_reads_pins_and_warns_about_bad_ones() -> None:
    text = (
        "---\nname: app\ndescription: d\nmetadata:\n"
        "  requires: base-deploy@3, other@v2 bad@x\n  complements: notes@2\n---\nbody\n"
    )
    parsed = parse_skill_md(text.encode(), "app")
    assert not isinstance(parsed, Exception)
    assert ("requires", "base-deploy") in parsed.relations  # type: ignore[union-attr]
    assert parsed.pins == (  # type: ignore[union-attr]
        ("requires", "base-deploy", 3),
        ("requires", "other", 2),
    )
    codes = [w.code for w in parsed.warnings]  # type: ignore[union-attr]
    assert codes.count("relation_pin_invalid") == 2  # bad@x, and a pin on complements


def test_blast_radius_of_a_version_leaves_out_dependents_pinned_elsewhere(lib: Library) -> None:
    whole = lib.blast("base-deploy")
    assert {d.name for d in whole.dependents} == {"app", "web", "ops"}
    v2 = lib.blast("base-deploy", 2)
    assert {d.name for d in v2.dependents} == {"web", "ops"}
    assert [(d.name, d.pin) for d in v2.pinned] == [("app", 1)]
    assert [(p.dependent, p.version_no, p.target_served) for p in v2.pins] == [("app", 1, 2)]
    v1 = lib.blast("base-deploy", 1)
    assert {d.name for d in v1.dependents} == {"app", "web", "ops"}
    assert [d.pin for d in v1.dependents if d.name == "app"] == [1]
    with pytest.raises(LibrarianError, match="no version 9"):
        lib.blast("base-deploy", 9)


def test_health_warns_only_dependents_whose_version_drifts(lib: Library) -> None:
    for ok in (True, False, False, False):
        lib.record_outcome("base-deploy", ok, version=2)
    rows = {h.name: h for h in lib.health()[0]}
    assert rows["base-deploy"].verdict == "DRIFTING"
    assert any(f.startswith("at risk: requires base-deploy (v2 served)") for f in rows["web"].flags)
    assert not any(f.startswith("at risk") for f in rows["app"].flags)  # pinned to v1


def test_relate_pins_re_pins_and_checks(lib: Library) -> None:
    assert lib.relate("ops", "requires", "base-deploy@1") == "added: ops requires base-deploy@1"
    assert lib.relate("ops", "requires", "base-deploy", version=2) == (
        "re-pinned: ops requires base-deploy@2"
    )
    assert lib.relate("ops", "requires", "base-deploy@2").startswith("already there")
    deps = {d.name: d.pin for d in lib.dependencies("ops")}
    assert deps["base-deploy"] == 2
    with pytest.raises(LibrarianError, match="has no version 7"):
        lib.relate("ops", "requires", "base-deploy@7")
    with pytest.raises(LibrarianError, match="a pin is name@N"):
        lib.relate("ops", "requires", "base-deploy@latest")
    with pytest.raises(LibrarianError, match="only requires and extends can pin"):
        lib.relate("ops", "complements", "base-deploy@1")
    assert verify(lib).ok


def test_a_stable_skill_cannot_come_to_depend_on_a_proposed_one(
    lib: Library, tmp_path: Path
) -> None:
    write_skill(tmp_path / "skills", "canary", "Canary checks.")
    lib.scan([tmp_path / "skills"])
    lib.change_status("canary", "skill.proposed", "new")
    with pytest.raises(LibrarianError, match="ops is stable and requires canary, which is only"):
        lib.relate("ops", "requires", "canary")
    lib.change_status("ops", "skill.deprecated", "on hold")
    assert lib.relate("ops", "requires", "canary").startswith("added")  # not stable: allowed
    with pytest.raises(LibrarianError, match="a stable skill cannot depend on a proposed one"):
        lib.change_status("ops", "skill.promoted", "back")
    problems = lib.graph_problems()
    assert problems.unproven == ()  # ops is deprecated now
    lib.change_status("canary", "skill.promoted", "proven")
    lib.change_status("ops", "skill.promoted", "back")
    lib.change_status("canary", "skill.proposed", "reworked")  # the rule broken from the far end
    assert [(u.source, u.target) for u in lib.graph_problems().unproven] == [("ops", "canary")]
    assert [u.target for u in lib.get_skill("ops").unproven] == ["canary"]
    assert verify(lib).ok


def test_a_stable_skill_pins_only_a_proven_version(lib: Library, tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "base-deploy", "Deploy a service, v3 candidate.")
    lib.scan([tmp_path / "skills"])
    with pytest.raises(LibrarianError, match="v3 of base-deploy is a candidate still proving"):
        lib.relate("ops", "requires", "base-deploy@3")
    assert lib.relate("ops", "requires", "base-deploy@2").startswith("added")
