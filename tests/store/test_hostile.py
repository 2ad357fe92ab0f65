"""A hostile skills folder: everything bad is reported with a reason, the good loads, the
library stays intact, and nothing from a skill is executed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from store.files import Refused, read_regular
from store.verify import verify
from tests.store.conftest import write_skill

REPO = Path(__file__).resolve().parents[2]

BOMB = (
    "---\nname: bomb\ndescription: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"k{i}: &a{i} [*{'a' if i == 0 else f'a{i - 1}'}, *{'a' if i == 0 else f'a{i - 1}'}"
        f", *{'a' if i == 0 else f'a{i - 1}'}]\n"
        for i in range(12)
    )
    + "---\nbody\n"
)


def hostile_folder(root: Path, sentinel: Path) -> dict[str, bytes]:
    files = {
        "bomb": BOMB.encode(),
        "python-tag": (
            f"---\nname: python-tag\ndescription: !!python/object/apply:os.system"
            f' ["touch {sentinel}"]\n---\nbody\n'
        ).encode(),
        "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 50,
        "bad-utf8": b"---\nname: bad-utf8\ndescription: caf\xe9 \xff\n---\nbody\n",
        "empty": b"",
        "no-frontmatter": b"# Just a heading\n\nNo frontmatter here.\n",
        "deep": ("---\nname: deep\ndescription: " + "[" * 200 + "]" * 200 + "\n---\n").encode(),
        "unterminated": b"---\nname: unterminated\ndescription: never closed\n",
        "no-description": b"---\nname: no-description\n---\nbody\n",
    }
    for folder, data in files.items():
        (root / folder).mkdir(parents=True)
        (root / folder / "SKILL.md").write_bytes(data)
    return files


def test_hostile_folder(make_library, tmp_path: Path) -> None:
    root = tmp_path / "hostile"
    sentinel = tmp_path / "executed"
    hostile_folder(root, sentinel)
    write_skill(root, "good", "Deploy services to Kubernetes clusters safely.")
    (root / "bom-crlf").mkdir()
    (root / "bom-crlf" / "SKILL.md").write_bytes(
        b"\xef\xbb\xbf---\r\nname: bom-crlf\r\ndescription: Windows line endings and a BOM."
        b"\r\nlicense: MIT\r\n---\r\n\r\nBody.\r\n"
    )
    write_skill(
        root,
        "escape",
        "'[bold red]Markup[/] and \x1b[31mescapes\x1b[0m stay literal.'",
        body="\x1b]0;pwned\x07 [link=http://x]click[/link]\n",
    )
    write_skill(root, "traversal", "A name that tries to climb out.", name='"../../etc/passwd"')
    write_skill(root, "huge", "A very long body.", body="word " * 600_000)
    write_skill(root, "tabs", "Tab indented metadata.", extra="metadata:\n\tauthor: someone\n")
    write_skill(root, "colon", "Use this skill when: deploying on Fridays")
    dup = tmp_path / "dup"
    write_skill(dup, "good", "The same name in another root.")
    loop = root / "loop"
    loop.mkdir()
    os.symlink(root, loop / "back-to-root")

    library = make_library()
    started = time.perf_counter()
    report = library.scan([root, dup])
    assert time.perf_counter() - started < 60
    skipped = {Path(s.path).parent.name: s.code for s in report.skipped}
    assert skipped == {
        "bomb": "yaml_bomb",
        "python-tag": "unsafe_tag",
        "binary": "binary",
        "bad-utf8": "invalid_utf8",
        "empty": "empty",
        "no-frontmatter": "no_frontmatter",
        "deep": "too_deep",
        "unterminated": "unterminated_frontmatter",
        "no-description": "no_description",
    }
    assert all(s.reason for s in report.skipped)
    names = {s.name for s in library.list_skills()}
    assert {"good", "bom-crlf", "escape", "huge", "tabs", "colon", "traversal"} <= names
    assert "../../etc/passwd" not in names
    assert not sentinel.exists()
    escape = library.get_skill("escape")
    assert escape.manifest["description"].startswith("[bold red]Markup[/] and \x1b[31m")
    assert "\x1b]0;pwned\x07" in escape.body
    assert [name for name, _ in report.collisions] == ["good"]
    assert any(w.code == "name_unsafe" for w in library.get_skill("traversal").warnings)
    assert any(w.code == "yaml_tabs" for w in library.get_skill("tabs").warnings)
    assert any(w.code == "yaml_repaired_colon" for w in library.get_skill("colon").warnings)
    assert verify(library).ok


def test_a_skill_that_breaks_keeps_its_previous_version(make_library, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    path = write_skill(root, "alpha", "Deploy services to Kubernetes clusters safely.")
    library = make_library()
    library.scan([root])
    path.write_bytes(b"---\nname: alpha\ndescription: [unclosed\n---\n")
    report = library.scan([root])
    assert report.skipped[0].code == "yaml_error"
    assert "kept the previous version" in report.skipped[0].reason
    assert library.get_skill("alpha").summary.status == "stable"
    assert library.get_skill("alpha").manifest["description"].startswith("Deploy")
    assert verify(library).ok


def test_oversized_file_is_skipped_without_reading(make_library, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (root / "giant").mkdir(parents=True)
    with (root / "giant" / "SKILL.md").open("wb") as handle:
        handle.write(b"---\nname: giant\ndescription: big\n---\n")
        handle.seek(6 * 1024 * 1024)
        handle.write(b"end")
    report = make_library().scan([root])
    assert [s.code for s in report.skipped] == ["too_large"]


def _scan_in_child(library_dir: Path, root: Path, timeout: float = 60) -> dict[str, object]:
    """Scan without embeddings in a child process that is killed if it hangs (a FIFO opened
    for reading blocks, /dev/zero never ends)."""
    script = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from store.library import Library
        with Library(Path({str(library_dir)!r})) as library:
            report = library.scan([Path({str(root)!r})], embed=False)
            print(json.dumps({{
                "skipped": [[s.path, s.code, s.reason] for s in report.skipped],
                "names": sorted(s.name for s in library.list_skills()),
            }}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_special_skill_files_are_reported_and_never_read(tmp_path: Path) -> None:
    """A FIFO, a symlink to /dev/zero, a skill 200 folders deep and a symlink to a file
    outside the roots are each skipped with their reason; what is regular and inside loads."""
    root = tmp_path / "skills"
    write_skill(root, "good", "Deploy services to Kubernetes clusters safely.")
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "SKILL.md")
    (root / "zero").mkdir()
    os.symlink("/dev/zero", root / "zero" / "SKILL.md")
    deep = root.joinpath(*["d"] * 199)
    write_skill(deep, "buried", "A skill far below the depth limit.")
    outside = write_skill(tmp_path / "elsewhere", "leak", "Whatever the link points at.")
    (root / "leak").mkdir()
    os.symlink(outside, root / "leak" / "SKILL.md")
    (root / "dangling").mkdir()
    os.symlink(tmp_path / "missing.md", root / "dangling" / "SKILL.md")
    inside = write_skill(root, "linked", "A SKILL.md linked to a file of its own folder.")
    inside.rename(inside.with_name("README.md"))
    os.symlink("README.md", inside)

    result = _scan_in_child(tmp_path / "lib", root)
    skipped = {Path(p).parent.name: (code, reason) for p, code, reason in result["skipped"]}
    assert skipped == {
        "fifo": ("not_regular", "not a regular file (FIFO)"),
        "zero": ("device_file", "device file (character device), not read"),
        "buried": (
            "folder_too_deep",
            f"deeper than 6 folders under {root} (skills.max_depth)",
        ),
        "leak": ("outside_roots", f"symlink to a file outside the skill roots ({outside})"),
        "dangling": ("broken_symlink", "symlink to a file that is missing"),
    }
    assert result["names"] == ["good", "linked"]


def test_reading_takes_only_regular_files_up_to_a_cap(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome: list[str] = []

    def read_fifo() -> None:
        try:
            read_regular(fifo, 1024)
        except Refused as refused:
            outcome.append(refused.code)

    reader = threading.Thread(target=read_fifo, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # blocked in open(): let it go, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO blocked")
    assert outcome == ["not_regular"]
    with pytest.raises(Refused, match="device file"):
        read_regular(Path("/dev/zero"), 1024)
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(Refused, match="2,048 bytes") as refused:
        read_regular(big, 1024, "SKILL.md")
    assert refused.value.code == "too_large"
    assert read_regular(big, 2048) == b"x" * 2048
    link = tmp_path / "link.md"
    link.symlink_to(big)
    with pytest.raises(Refused, match=r"not a regular file \(symlink\)"):
        read_regular(link, 4096, follow=False)
