"""Tests for store.skills.parser: failure codes, warning codes, safety and properties."""

from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.models import ParsedSkill, ParseFailure, SpecWarning
from store.skills.parser import (
    MAX_FILE_BYTES,
    MAX_FRONTMATTER_BYTES,
    is_valid_skill_name,
    parse_skill_md,
    split_relation_targets,
)

FAILURE_CODES = {
    "too_large",
    "frontmatter_too_large",
    "binary",
    "invalid_utf8",
    "empty",
    "no_frontmatter",
    "unterminated_frontmatter",
    "yaml_error",
    "yaml_bomb",
    "too_deep",
    "unsafe_tag",
    "not_a_mapping",
    "no_description",
}
WARNING_CODES = {
    "yaml_repaired_colon",
    "yaml_tabs",
    "yaml_duplicate_keys",
    "name_missing",
    "name_unsafe",
    "name_invalid",
    "name_too_long",
    "name_mismatch",
    "description_not_string",
    "description_too_long",
    "description_angle_brackets",
    "extra_keys",
    "allowed_tools_list",
    "metadata_not_mapping",
    "metadata_non_string",
    "license_missing",
    "compatibility_too_long",
    "relation_self",
    "relation_invalid",
    "body_too_long",
    "body_empty",
}
FAST = settings(max_examples=200, deadline=None)


def skill(front: str, body: str = "# Demo\n\nDo the thing.\n") -> bytes:
    """A SKILL.md with the given frontmatter text (no surrounding `---`)."""
    return f"---\n{front}\n---\n{body}".encode()


def spec_skill(extra: str = "", name: str = "demo", body: str = "Body.\n") -> bytes:
    """A spec-clean skill (no warnings) plus optional extra frontmatter lines."""
    front = f"name: {name}\ndescription: Does demo things.\nlicense: MIT\n{extra}".rstrip("\n")
    return skill(front, body)


def parsed(data: bytes, folder: str = "demo") -> ParsedSkill:
    result = parse_skill_md(data, folder)
    assert isinstance(result, ParsedSkill), result
    return result


def failed(data: bytes, folder: str = "demo") -> ParseFailure:
    result = parse_skill_md(data, folder)
    assert isinstance(result, ParseFailure), result
    assert result.reason
    return result


def codes(result: ParsedSkill) -> list[str]:
    return [w.code for w in result.warnings]


def warning(result: ParsedSkill, code: str) -> SpecWarning:
    matches = [w for w in result.warnings if w.code == code]
    assert len(matches) == 1, result.warnings
    return matches[0]


# ------------------------------------------------------------------ failures


def billion_laughs() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return skill("description: boom\n" + "\n".join(lines))


FAILURES = {
    "too_large": b"---\ndescription: x\n---\n" + b"a" * MAX_FILE_BYTES,
    "frontmatter_too_large": skill("description: " + "x" * MAX_FRONTMATTER_BYTES),
    "binary": b"---\ndescription: x\n---\n\x00\x01\x02",
    "invalid_utf8": b"---\ndescription: caf\xe9\n---\n",
    "empty": b"",
    "no_frontmatter": b"# Just markdown\n\nNo frontmatter here.\n",
    "unterminated_frontmatter": b"---\nname: demo\ndescription: x\n\n# Body\n",
    "yaml_error": skill("name: demo\ndescription: [unclosed"),
    "yaml_bomb": billion_laughs(),
    "too_deep": skill("description: " + "[" * 200 + "]" * 200),
    "unsafe_tag": skill('description: !!python/object/apply:os.system ["echo hi"]'),
    "not_a_mapping": skill("- name\n- description"),
    "no_description": skill("name: demo"),
}


def test_every_failure_code_has_a_fixture() -> None:
    assert set(FAILURES) == FAILURE_CODES


@pytest.mark.parametrize(("code", "data"), FAILURES.items(), ids=list(FAILURES))
def test_failure_codes(code: str, data: bytes) -> None:
    assert failed(data).code == code


def test_invalid_utf8_names_the_byte_offset() -> None:
    assert failed(b"---\nname: \xff\n").reason == "not valid UTF-8 at byte 10"
    # The offset counts from the start of the file, BOM included.
    assert failed(b"\xef\xbb\xbf---\nname: \xff\n").reason == "not valid UTF-8 at byte 13"


def test_frontmatter_just_under_the_limit_loads() -> None:
    front = "description: x\nbody: " + "y" * (MAX_FRONTMATTER_BYTES - 40)
    assert isinstance(parse_skill_md(skill(front), "demo"), ParsedSkill)


@pytest.mark.parametrize("data", [b"   \n\t\n", b"\xef\xbb\xbf\r\n"])
def test_whitespace_only_is_empty(data: bytes) -> None:
    assert failed(data).code == "empty"


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("name: demo", "no 'description' in frontmatter"),
        ('name: demo\ndescription: ""', "'description' is empty"),
        ("name: demo\ndescription: '   '", "'description' is empty"),
        ("name: demo\ndescription:", "'description' is empty"),
        ("name: demo\ndescription: {a: 1}", "'description' is a mapping, not text"),
        ("", "no 'description' in frontmatter"),
    ],
)
def test_no_description(front: str, reason: str) -> None:
    assert failed(skill(front)) == ParseFailure("no_description", reason)


def test_yaml_error_is_one_line_with_file_line_number() -> None:
    reason = failed(skill("name: demo\ndescription: ok\nbad: [1, 2\nother: 3")).reason
    assert reason.startswith("YAML error on line ")
    assert "\n" not in reason


def test_not_a_mapping_names_the_type() -> None:
    assert failed(skill("just a string")).reason == "frontmatter is a str, not a mapping"


def test_billion_laughs_fails_fast() -> None:
    started = time.perf_counter()
    result = failed(billion_laughs())
    assert result.code == "yaml_bomb"
    assert time.perf_counter() - started < 1.0


def test_alias_expansion_is_counted_even_with_few_aliases() -> None:
    items = ",".join(["x"] * 1000)
    front = f"description: d\na: &a [{items}]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    front += "c: [*b,*b,*b,*b,*b,*b,*b,*b,*b]"
    assert failed(skill(front)).code == "yaml_bomb"


def test_recursive_alias_is_a_bomb() -> None:
    assert failed(skill("description: d\na: &a [*a]")).code == "yaml_bomb"


def test_modest_anchors_and_merge_keys_load() -> None:
    front = "description: d\nbase: &base {x: 1}\nderived:\n  <<: *base\n  y: 2\ncopy: *base"
    result = parsed(skill(front))
    assert result.frontmatter["derived"] == {"x": 1, "y": 2}
    assert result.frontmatter["copy"] == {"x": 1}


@pytest.mark.filterwarnings("error")
def test_reused_anchor_loads_without_python_warnings() -> None:
    result = parsed(skill("description: d\na: &x 1\nb: &x 2\nc: *x"))
    assert result.frontmatter["c"] == 2


def test_nesting_up_to_the_limit_loads() -> None:
    assert isinstance(
        parse_skill_md(skill("description: d\nx: " + "[" * 31 + "]" * 31), "d"), ParsedSkill
    )
    assert failed(skill("description: d\nx: " + "[" * 32 + "]" * 32)).code == "too_deep"


def test_python_tag_is_refused_and_never_executed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(os, "system", calls.append)
    result = failed(skill('name: demo\ndescription: !!python/object/apply:os.system ["echo hi"]'))
    assert result == ParseFailure("unsafe_tag", "unsafe YAML tag !!python/object/apply:os.system")
    assert calls == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("!<tag:yaml.org,2002:python/name:os.system> x", "!!python/name:os.system"),
        ("!custom thing", "!custom"),
        ("!!python/tuple [1, 2]", "!!python/tuple"),
    ],
)
def test_non_standard_tags_are_refused(value: str, shown: str) -> None:
    assert failed(skill(f"description: {value}")).reason == f"unsafe YAML tag {shown}"


def test_standard_tags_are_allowed() -> None:
    front = "description: !!str 123\nn: !!int '7'\ns: !!set {a, b}\nq: ! plain"
    result = parsed(skill(front))
    assert result.description == "123"
    assert result.frontmatter["n"] == 7
    assert result.frontmatter["s"] == ["a", "b"]


def test_three_megabyte_description_hits_the_frontmatter_limit() -> None:
    # The file limit (4 MB) admits it, but the frontmatter limit (256 KB) does not.
    data = skill("name: demo\ndescription: " + "x" * (3 * 1024 * 1024))
    assert failed(data).code == "frontmatter_too_large"


def test_long_description_within_limits_loads_with_a_warning() -> None:
    description = "word " * 50_000  # 250,000 characters
    result = parsed(skill(f"name: demo\ndescription: {description}\nlicense: MIT"))
    assert result.description == description.strip()
    assert "249,999" in warning(result, "description_too_long").message


def test_multi_megabyte_body_loads() -> None:
    body = "line of text\n" * 250_000  # ~3.2 MB
    result = parsed(spec_skill(body=body))
    assert result.body == body
    assert "250,000 lines" in warning(result, "body_too_long").message


# ------------------------------------------------------------------ decoding


def test_bom_and_crlf_load_cleanly() -> None:
    data = b"\xef\xbb\xbf---\r\nname: demo\r\ndescription: Does demo things.\r\n"
    data += b"license: MIT\r\n---\r\nBody\r\n"
    result = parsed(data)
    assert result.name == "demo"
    assert result.description == "Does demo things."
    assert result.body == "Body\n"
    assert result.warnings == ()


def test_lone_cr_line_endings() -> None:
    data = b"---\rname: demo\rdescription: d\rlicense: MIT\r---\rBody\r"
    result = parsed(data)
    assert (result.description, result.body, result.warnings) == ("d", "Body\n", ())


def test_spec_clean_skill_has_no_warnings() -> None:
    data = spec_skill('compatibility: Python 3.11\nallowed-tools: Read Grep\nmetadata:\n  a: "1"')
    result = parsed(data)
    assert result.warnings == ()
    assert result.license == "MIT"
    assert result.compatibility == "Python 3.11"
    assert result.declared_name == "demo"


def test_parsing_is_deterministic() -> None:
    data = skill(
        "description: Use when: x\nname: Other\nzeta: 1\nalpha: 2\nmetadata: {requires: a b}"
    )
    assert parse_skill_md(data, "demo") == parse_skill_md(data, "demo")


# ------------------------------------------------------------------ repairs


def test_unquoted_colon_is_repaired() -> None:
    result = parsed(spec_skill().replace(b"Does demo things.", b"Use this skill when: deploying"))
    assert result.description == "Use this skill when: deploying"
    message = warning(result, "yaml_repaired_colon").message
    assert "'description'" in message
    assert "line 3" in message


def test_colon_repair_folds_continuation_lines_and_nested_keys() -> None:
    front = (
        "name: demo\ndescription: Use when: deploying\n  to production\n\n"
        "license: MIT\nmetadata:\n  short-description: Ship it: now"
    )
    result = parsed(skill(front))
    assert result.description == "Use when: deploying to production"
    assert result.frontmatter["metadata"] == {"short-description": "Ship it: now"}
    assert codes(result).count("yaml_repaired_colon") == 2


def test_colon_repair_leaves_block_scalars_alone() -> None:
    front = "name: demo\ndescription: |\n  Keep: this: verbatim\nwhen_to_use: Use when: x"
    result = parsed(skill(front))
    assert result.description == "Keep: this: verbatim\n"
    assert result.when_to_use == "Use when: x"


def test_tab_indentation_is_repaired() -> None:
    front = "name: demo\ndescription: d\nlicense: MIT\nmetadata:\n\tauthor: me\n\tsource: web"
    result = parsed(skill(front))
    assert result.frontmatter["metadata"] == {"author": "me", "source": "web"}
    assert "line 6, 7" in warning(result, "yaml_tabs").message


def test_tabs_and_colon_repaired_together() -> None:
    front = "name: demo\ndescription: Use when: x\nlicense: MIT\nmetadata:\n\tauthor: me"
    result = parsed(skill(front))
    assert result.description == "Use when: x"
    assert {"yaml_tabs", "yaml_repaired_colon"} <= set(codes(result))


def test_unrepairable_yaml_reports_the_original_error() -> None:
    reason = failed(skill("name: demo\ndescription: Use when: x\nbad: [")).reason
    assert "line 3" in reason
    assert "mapping values are not allowed" in reason


def test_duplicate_keys_keep_the_first_value() -> None:
    result = parsed(skill("name: demo\ndescription: first\ndescription: second"))
    assert result.description == "first"
    assert "description" in warning(result, "yaml_duplicate_keys").message


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("raw", "declared"),
    [
        ("../evil", "../evil"),
        ("a/b", "a/b"),
        ('"a\\\\b"', "a\\b"),
        ("..", ".."),
        ('"demo\\e[31m"', "demo\x1b[31m"),
        ('"demo\\u202e"', "demo\u202e"),
        ('""', ""),
        ("[a, b]", None),
        ("{a: b}", None),
    ],
)
def test_unsafe_names_fall_back_to_the_folder(raw: str, declared: str | None) -> None:
    result = parsed(spec_skill().replace(b"name: demo", f"name: {raw}".encode()), "folder")
    assert result.name == "folder"
    assert result.declared_name == declared
    assert "'folder'" in warning(result, "name_unsafe").message
    assert "name_mismatch" not in codes(result)


@pytest.mark.parametrize("raw", ["2048", "007", "true", "1.10"])
def test_names_yaml_would_type_are_read_as_written(raw: str) -> None:
    result = parsed(spec_skill(name=raw), raw)
    assert (result.name, result.declared_name) == (raw, raw)
    assert codes(result) == ([] if is_valid_skill_name(raw) else ["name_invalid"])


def test_version_is_read_as_written() -> None:
    assert parsed(spec_skill("version: 1.10")).version == "1.10"
    assert parsed(spec_skill("metadata:\n  version: '1.10'")).version == "1.10"


def test_missing_name_uses_the_folder() -> None:
    result = parsed(skill("description: d\nlicense: MIT"), "my-skill")
    assert (result.name, result.declared_name) == ("my-skill", None)
    assert codes(result) == ["name_missing"]


def test_name_mismatch_names_both() -> None:
    result = parsed(spec_skill(name="postgresql-table-design"), "postgresql")
    assert result.name == "postgresql-table-design"
    message = warning(result, "name_mismatch").message
    assert "'postgresql-table-design'" in message
    assert "'postgresql'" in message


@pytest.mark.parametrize("name", ["Demo", "demo_skill", "-demo", "demo-", "de--mo", "démo", "a b"])
def test_invalid_names_are_kept_with_a_warning(name: str) -> None:
    result = parsed(spec_skill(name=json.dumps(name)), name)
    assert result.name == name
    assert codes(result) == ["name_invalid"]


def test_long_name() -> None:
    name = "a" * 70
    result = parsed(spec_skill(name=name), name)
    assert codes(result) == ["name_too_long"]
    assert "70 characters" in result.warnings[0].message


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("a", True),
        ("pdf-tools", True),
        ("a1-b2-c3", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("", False),
        ("A", False),
        ("-a", False),
        ("a-", False),
        ("a--b", False),
        ("a_b", False),
        ("a\n", False),
        ("é", False),
    ],
)
def test_is_valid_skill_name(name: str, valid: bool) -> None:
    assert is_valid_skill_name(name) is valid


# ------------------------------------------------------------------ warnings


WARNING_FIXTURES: dict[str, tuple[bytes, str]] = {
    "yaml_repaired_colon": (spec_skill("when_to_use: when: x"), "'when_to_use'"),
    "yaml_tabs": (spec_skill("metadata:\n\ta: b"), "line 6"),
    "yaml_duplicate_keys": (spec_skill("license: Apache-2.0"), '"license"'),
    "name_missing": (skill("description: d\nlicense: MIT"), "'demo'"),
    "name_unsafe": (spec_skill(name="../x"), "'../x'"),
    "name_invalid": (spec_skill(name="Demo"), "'Demo'"),
    "name_too_long": (spec_skill(name="d" * 65), "65 characters"),
    "name_mismatch": (spec_skill(name="other"), "'other'"),
    "description_not_string": (skill("name: demo\ndescription: [a, b]\nlicense: MIT"), "list"),
    "description_too_long": (
        skill(f"name: demo\ndescription: {'x' * 1025}\nlicense: MIT"),
        "1,025",
    ),
    "description_angle_brackets": (skill("name: demo\ndescription: a <b>\nlicense: MIT"), "'<'"),
    "extra_keys": (spec_skill("version: 1.0\nargument-hint: x"), "'argument-hint', 'version'"),
    "allowed_tools_list": (spec_skill("allowed-tools: [Read, Grep]"), "list"),
    "metadata_not_mapping": (spec_skill("metadata: just text"), "'just text'"),
    "metadata_non_string": (spec_skill("metadata:\n  tags: [a, b]"), "metadata.tags"),
    "license_missing": (skill("name: demo\ndescription: d"), "license"),
    "compatibility_too_long": (spec_skill(f"compatibility: {'c' * 501}"), "501"),
    "relation_self": (spec_skill("metadata:\n  requires: demo"), "'demo'"),
    "relation_invalid": (spec_skill("metadata:\n  requires: ../etc"), "'../etc'"),
    "body_too_long": (spec_skill(body="line\n" * 501), "501 lines"),
    "body_empty": (spec_skill(body="\n  \n"), "no instructions"),
}


def test_every_warning_code_has_a_fixture() -> None:
    assert set(WARNING_FIXTURES) == WARNING_CODES


@pytest.mark.parametrize(
    ("code", "data", "fragment"),
    [(code, data, fragment) for code, (data, fragment) in WARNING_FIXTURES.items()],
    ids=list(WARNING_FIXTURES),
)
def test_warning_codes(code: str, data: bytes, fragment: str) -> None:
    result = parsed(data)
    assert fragment in warning(result, code).message
    assert set(codes(result)) <= WARNING_CODES


def test_extra_keys_is_one_sorted_warning() -> None:
    result = parsed(spec_skill("zeta: 1\nalpha: 2\nwhen_to_use: x\nrequires: other"))
    assert warning(result, "extra_keys").message == (
        "keys outside the Agent Skills spec: 'alpha', 'requires', 'when_to_use', 'zeta'"
    )


def test_one_metadata_warning_per_non_string_value() -> None:
    result = parsed(spec_skill("metadata:\n  a: 1\n  b: [x]\n  c: ok\n  d:"))
    messages = [w.message for w in result.warnings if w.code == "metadata_non_string"]
    assert [m.split(" ")[0] for m in messages] == ["metadata.a", "metadata.b", "metadata.d"]


def test_messages_truncate_long_values() -> None:
    result = parsed(spec_skill(name="N" * 500))
    assert all(len(w.message) < 200 for w in result.warnings)


def test_description_number_is_coerced() -> None:
    result = parsed(skill("name: demo\ndescription: 42\nlicense: MIT"))
    assert result.description == "42"
    assert codes(result) == ["description_not_string"]


def test_description_list_of_mappings_fails() -> None:
    assert failed(skill("name: demo\ndescription: [{a: 1}]")).code == "no_description"


# ------------------------------------------------------------------ fields


def test_descriptive_fields_from_top_level_and_metadata() -> None:
    front = (
        "when_to_use: Deploying services\n"
        "triggers: deploy, ship\n  it\n"
        "tags: [infra, k8s]\n"
        "keywords: k8s, helm\n"
        "metadata:\n  role: planner\n  version: '2.1'\n  triggers: [rollout]\n"
        "version: 9\nrole: ignored"
    )
    result = parsed(spec_skill(front))
    assert result.when_to_use == "Deploying services"
    assert result.triggers == ("deploy", "ship it", "rollout")
    assert result.tags == ("infra", "k8s", "helm")
    assert result.role == "planner"
    assert result.version == "2.1"


def test_fields_fall_back_to_other_sources() -> None:
    front = "when-to-use: a\nrole: reviewer\nversion: 1.0.0\nmetadata:\n  keywords: x\n  tags: y"
    result = parsed(spec_skill(front))
    assert (result.when_to_use, result.role, result.version) == ("a", "reviewer", "1.0.0")
    assert result.tags == ("y", "x")
    assert parsed(spec_skill("metadata:\n  when_to_use: m")).when_to_use == "m"


@pytest.mark.parametrize(
    ("value", "tools"),
    [
        ("Bash(git:*) Bash(jq:*) Read", ("Bash(git:*)", "Bash(jq:*)", "Read")),
        ("Read, Write,Grep", ("Read", "Write", "Grep")),
        (
            '"Bash(git add:*), Bash(npm run test) Read"',
            ("Bash(git add:*)", "Bash(npm run test)", "Read"),
        ),
        ('"Bash(echo (a b)) Read"', ("Bash(echo (a b))", "Read")),
        ("[Read, 'Bash(git log:*)']", ("Read", "Bash(git log:*)")),
        ("Read Read", ("Read",)),
    ],
)
def test_allowed_tools(value: str, tools: tuple[str, ...]) -> None:
    assert parsed(spec_skill(f"allowed-tools: {value}")).allowed_tools == tools


def test_relations() -> None:
    front = (
        "requires: top-level\n"
        "metadata:\n"
        "  requires: pdf, xlsx docx\n"
        "  extends: [base-skill, demo, 'Bad Name', '../x']\n"
        "  complements: plugin:skill\n"
        "  enables: pdf\n"
        "  supersedes: [old-one]"
    )
    result = parsed(spec_skill(front))
    assert result.relations == (
        ("requires", "pdf"),
        ("requires", "xlsx"),
        ("requires", "docx"),
        ("requires", "top-level"),
        ("extends", "base-skill"),
        ("complements", "plugin:skill"),
        ("enables", "pdf"),
        ("supersedes", "old-one"),
    )
    assert codes(result).count("relation_self") == 1
    invalid = [w.message for w in result.warnings if w.code == "relation_invalid"]
    assert len(invalid) == 3  # 'Bad', 'Name' and '../x'


def test_frontmatter_is_json_safe() -> None:
    front = (
        "description: d\n"
        "created: 2024-01-02\n"
        "stamp: 2001-12-14t21:59:43.10-05:00\n"
        "blob: !!binary aGVsbG8=\n"
        "nan: .nan\n"
        "inf: -.inf\n"
        "set: !!set {b, a}\n"
        "omap: !!omap [x: 1, y: 2]\n"
        "2: int key\n"
        "true: bool key\n"
        "2024-05-06: date key"
    )
    fm = parsed(skill(front)).frontmatter
    json.dumps(fm, allow_nan=False)
    assert fm["created"] == "2024-01-02"
    assert fm["stamp"].startswith("2001-12-14T21:59:43.1")
    assert fm["blob"] == "aGVsbG8="
    assert (fm["nan"], fm["inf"]) == ("nan", "-inf")
    assert fm["set"] == ["a", "b"]
    assert fm["omap"] == {"x": 1, "y": 2}
    assert (fm["2"], fm["True"], fm["2024-05-06"]) == ("int key", "bool key", "date key")


def test_markup_and_escapes_are_preserved_verbatim() -> None:
    front = (
        "name: demo\n"
        "description: \x1b[31m[bold red]x[/] \x07bell\n"
        'when_to_use: "[link=file:///etc/passwd]click[/link] \\e[0m"\n'
        "license: MIT"
    )
    result = parsed(skill(front, body="[bold]body[/bold] \x1b[2J\x1b]8;;http://x\x07\n"))
    assert result.description == "\x1b[31m[bold red]x[/] \x07bell"
    assert result.frontmatter["description"] == result.description
    assert result.when_to_use == "[link=file:///etc/passwd]click[/link] \x1b[0m"
    assert result.body == "[bold]body[/bold] \x1b[2J\x1b]8;;http://x\x07\n"


# ------------------------------------------------------------------ split_relation_targets


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a, b c", ("a", "b", "c")),
        ("a,b,,a\n c", ("a", "b", "c")),
        (["x", "y z", "x"], ("x", "y", "z")),
        (("x",), ("x",)),
        (None, ()),
        ({"a": "b"}, ()),
        ([None, True, ["n"], 3], ("3",)),
        ("", ()),
    ],
)
def test_split_relation_targets(value: object, expected: tuple[str, ...]) -> None:
    assert split_relation_targets(value) == expected


# ------------------------------------------------------------------ properties

YAMLISH = st.text(alphabet="ab:-[]{}&*!|>'\"#,?\n\t \\%@`", max_size=80)


@FAST
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    result = parse_skill_md(data, "demo")
    assert isinstance(result, ParsedSkill | ParseFailure)


@FAST
@given(YAMLISH, st.binary(max_size=40))
def test_arbitrary_frontmatter_never_raises(front: str, tail: bytes) -> None:
    for data in (skill(front), b"---\n" + front.encode() + b"\n---\n" + tail, front.encode()):
        result = parse_skill_md(data, "demo")
        assert isinstance(result, ParsedSkill | ParseFailure)
        if isinstance(result, ParseFailure):
            assert result.code in FAILURE_CODES
            assert result.reason
        else:
            json.dumps(result.frontmatter, allow_nan=False)
            assert set(codes(result)) <= WARNING_CODES


NAMES = st.from_regex(r"\A[a-z0-9]{1,12}(-[a-z0-9]{1,12}){0,3}\Z")
PRINTABLE = st.characters(categories=("L", "M", "N", "P", "S", "Zs"))
DESCRIPTIONS = st.text(PRINTABLE, min_size=1, max_size=200).filter(str.strip)


@FAST
@given(NAMES, DESCRIPTIONS)
def test_well_formed_files_round_trip(name: str, description: str) -> None:
    front = (
        f"name: {name}\ndescription: {json.dumps(description, ensure_ascii=False)}\nlicense: MIT"
    )
    result = parsed(skill(front), name)
    assert (result.name, result.declared_name) == (name, name)
    assert result.description == description
    assert not [c for c in codes(result) if c.startswith(("name_", "yaml_"))]


@FAST
@given(st.one_of(st.text(), st.lists(st.text(), max_size=5)))
def test_split_relation_targets_is_idempotent(value: str | list[str]) -> None:
    targets = split_relation_targets(value)
    assert split_relation_targets(" ".join(targets)) == targets
    assert split_relation_targets(", ".join(targets)) == targets
    assert split_relation_targets(list(targets)) == targets
