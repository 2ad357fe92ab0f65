"""Deterministic synthetic skill folders for benchmarks: realistic shape, varied wording."""

from __future__ import annotations

import random
from pathlib import Path

AREAS = (
    "postgres",
    "kubernetes",
    "terraform",
    "react",
    "django",
    "fastapi",
    "kafka",
    "redis",
    "graphql",
    "docker",
    "github-actions",
    "sentry",
    "grafana",
    "prometheus",
    "celery",
    "typescript",
    "rust",
    "golang",
    "android",
    "ios",
    "webpack",
    "vite",
    "pytest",
    "jest",
    "playwright",
    "airflow",
    "spark",
    "snowflake",
    "dbt",
    "stripe",
    "auth0",
    "oauth",
    "s3",
    "lambda",
    "nginx",
    "helm",
    "argo",
    "vault",
    "elasticsearch",
    "mongodb",
    "sqlite",
    "pandas",
    "numpy",
    "pytorch",
    "openapi",
    "grpc",
    "websocket",
    "cdn",
    "dns",
    "tls",
)
ACTIONS = (
    "debug",
    "migrate",
    "profile",
    "review",
    "deploy",
    "roll-back",
    "upgrade",
    "secure",
    "test",
    "document",
    "monitor",
    "tune",
    "refactor",
    "scaffold",
    "audit",
    "backfill",
    "benchmark",
    "harden",
    "troubleshoot",
    "automate",
)
OBJECTS = (
    "slow queries",
    "flaky tests",
    "memory leaks",
    "schema changes",
    "release pipelines",
    "access tokens",
    "error budgets",
    "build caches",
    "cold starts",
    "rate limits",
    "connection pools",
    "background jobs",
    "feature flags",
    "api contracts",
    "alert rules",
    "dependency trees",
    "bundle size",
    "race conditions",
    "data exports",
    "retry storms",
)
WHEN = (
    "Use when {obj} start hurting a {area} service in production.",
    "Use when a teammate asks how to {act} {obj} safely.",
    "Use when CI fails because of {obj} in the {area} code.",
    "Use before shipping changes that touch {obj}.",
    "Use when an incident review points at {obj}.",
)
STEPS = (
    "Reproduce the problem on a branch and capture the exact command output.",
    "Check the dashboards for the last deploy and compare error rates.",
    "Write the smallest failing test that shows the behaviour.",
    "Apply the change behind a flag and watch the metrics for an hour.",
    "Record what you learned in the runbook and link the pull request.",
    "Ask the owning team to review before merging.",
    "Roll back immediately if latency doubles after the change.",
)


def synthetic_skill(index: int, rng: random.Random) -> tuple[str, str]:
    """(folder name, SKILL.md text) for skill number `index`."""
    area, act, obj = rng.choice(AREAS), rng.choice(ACTIONS), rng.choice(OBJECTS)
    name = f"{area}-{act}-{obj.split()[-1]}-{index}"
    when = rng.choice(WHEN).format(area=area, act=act, obj=obj)
    description = (
        f"{act.replace('-', ' ').capitalize()} {obj} in {area} projects with a"
        f" repeatable checklist and the commands that matter. {when}"
    )
    steps = "\n".join(f"{i}. {rng.choice(STEPS)}" for i in range(1, rng.randint(6, 14)))
    body = (
        f"# {name}\n\n## When to use\n\n{when}\n\n## Steps\n\n{steps}\n\n"
        f"## Commands\n\n```bash\n{area} --check {obj.split()[0]}\n```\n\n"
        f"## Pitfalls\n\n- Do not {act} {obj} on Fridays.\n- Keep the {area} logs.\n"
    )
    text = (
        f"---\nname: {name}\ndescription: {description}\nlicense: MIT\nmetadata:\n"
        f'  version: "1.{index % 7}.0"\n  tags: {area}, {act}\n---\n\n{body}'
    )
    return name, text


def write_skills(root: Path, count: int, seed: int = 7) -> list[Path]:
    """Write `count` skill folders under `root` (idempotent for the same seed)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        name, text = synthetic_skill(index, rng)
        folder = root / name
        folder.mkdir(exist_ok=True)
        path = folder / "SKILL.md"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


THOUGHTS = (
    "I think the {obj} come from the {area} client. Let me check the configuration.",
    "Let me look at the {area} logs around the failure.",
    "That didn't work, same error in the {area} tests.",
    "Let's try a different approach: instead of patching {obj}, isolate the {area} calls.",
    "I found that the {area} retry wraps {obj} twice.",
    "The root cause was a missing timeout in the {area} adapter. Fixed: tests pass now.",
    "Reading the {area} module to understand how {obj} are created.",
)


def synthetic_session(
    path: Path, target_bytes: int, seed: int = 11, session_id: str = "bench-session"
) -> int:
    """Write a Claude Code-shaped session of about `target_bytes`; returns records written."""
    import json

    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        while out.tell() < target_bytes:
            area, obj = rng.choice(AREAS), rng.choice(OBJECTS)
            for record in _exchange(session_id, count, area, obj, rng):
                out.write(json.dumps(record) + "\n")
                count += 1
    return count


def _exchange(sid: str, n: int, area: str, obj: str, rng: random.Random) -> list[dict[str, object]]:
    base = {
        "sessionId": sid,
        "cwd": f"/work/{area}",
        "gitBranch": "main",
        "version": "2.1.39",
        "userType": "external",
        "isSidechain": False,
        "parentUuid": None,
        "timestamp": f"2026-10-{1 + n % 28:02d}T10:00:00.000Z",
    }
    thought = rng.choice(THOUGHTS).format(area=area, obj=obj)
    failing = rng.random() < 0.3
    # Tool output sized like real sessions' (test runs, file reads: ~0.5-4 KB), so that
    # MB/s figures mean what they mean on real transcripts (~1.5 KB a line on average).
    lines = rng.randint(8, 60)
    output = "\n".join(
        f'  File "/work/{area}/client.py", line {i * 7}, in call'
        if failing
        else f"tests/{area}/test_{obj.split()[-1]}.py::test_case_{i} PASSED [{i * 100 // lines}%]"
        for i in range(lines)
    ) + ("\nTimeoutError: pool exhausted" if failing else f"\n{lines} passed in 1.2s")
    return [
        {
            **base,
            "type": "user",
            "uuid": f"u{n}",
            "message": {"role": "user", "content": f"Please look into the {obj} in {area}."},
        },
        {
            **base,
            "type": "assistant",
            "uuid": f"a{n}",
            "message": {
                "id": f"m{n}",
                "role": "assistant",
                "type": "message",
                "content": [{"type": "text", "text": thought}],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": f"b{n}",
            "message": {
                "id": f"m{n}",
                "role": "assistant",
                "type": "message",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t{n}",
                        "name": "Bash",
                        "input": {"command": f"pytest tests/{area} -x"},
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "uuid": f"r{n}",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{n}",
                        "content": output,
                        "is_error": failing,
                    }
                ],
            },
        },
    ]
