"""Deterministic synthetic skill folders for benchmarks: realistic shape, varied wording."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

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


# -- reasoning sessions for the patterns benchmarks ----------------------------------------------

#: Projects the synthetic reasoning sessions belong to (a few, as on one team).
PROJECTS = (
    "/work/acme-api",
    "/work/acme-web",
    "/work/billing",
    "/work/data-platform",
    "/work/infra",
    "/work/mobile",
)
CAUSES = (
    "a missing timeout in the client",
    "a stale cache entry after deploys",
    "two workers sharing one connection",
    "a retry loop without backoff",
    "an unpinned transitive dependency",
    "a config default that differs in CI",
    "a race between startup and the health check",
    "an index that the planner ignores",
    "a token that expires mid-request",
    "a fixture leaking state between tests",
    "an unbounded queue growing under load",
    "clock skew between hosts",
    "a schema change applied out of order",
    "a global singleton reused across threads",
    "a silent exception swallowed in middleware",
)
ERRORS = (
    "TimeoutError: operation timed out after {n}s",
    "ConnectionRefusedError: [Errno 111] connection refused on port {port}",
    "AssertionError: expected {n} rows, got {m}",
    "RuntimeError: pool exhausted ({n} of {n} connections in use)",
    "PermissionError: access denied for role app_{n}",
    "KeyError: 'tenant_{n}' not found in cache",
    "OOMKilled: container exceeded {n}Mi memory limit",
    "ValueError: invalid version string 1.{n}.{m}",
    "HTTP 429 Too Many Requests after {n} retries",
    "deadlock detected while waiting for ShareLock on transaction {n}",
    "panic: runtime error: index out of range [{n}] with length {m}",
    "ImportError: cannot import name 'Client' (circular import, line {n})",
)
FIXES = (
    "set an explicit timeout and a bounded retry with jitter",
    "invalidate the cache key on every deploy",
    "give each worker its own connection from the pool",
    "pin the dependency and regenerate the lock file",
    "align the CI config with production defaults",
    "wait for readiness before running the health check",
    "add a covering index and analyze the table",
    "refresh the token before it expires",
    "reset the fixture state in teardown",
    "cap the queue and shed load with a 503",
    "use monotonic clocks for the deadline",
    "apply the migrations in dependency order",
    "make the singleton thread-local",
    "log and re-raise the exception in middleware",
)
COMPONENTS = (
    "client",
    "connection pool",
    "worker",
    "scheduler",
    "middleware",
    "migration runner",
    "cache layer",
    "auth adapter",
    "test fixtures",
    "deploy script",
    "retry wrapper",
    "serializer",
)
FINDINGS = (
    "opens a new connection per request",
    "retries on every status code, including 4xx",
    "reads its config once at import time",
    "holds a lock while calling the network",
    "shares state between test cases",
    "ignores the deadline passed by the caller",
    "caches negative lookups forever",
    "logs secrets at debug level",
    "runs migrations on every start",
    "buffers whole responses in memory",
)
#: Per-problem identifiers (module `{noun}_{role}`, function `{verb}_{noun}`): real nodes name
#: the code they are about, which is what tells one recurring problem from another.
NOUNS = (
    "invoice", "ledger", "cart", "tenant", "session", "payment", "report", "order",
    "shipment", "webhook", "audit", "refund", "coupon", "profile", "search", "upload",
    "thumbnail", "export", "billing", "inventory", "quota", "signup", "password", "avatar",
    "catalog", "pricing", "checkout", "schedule", "reminder", "digest", "metrics", "ticket",
    "comment", "feed", "playlist", "booking", "address", "currency", "tax", "consent",
)  # fmt: skip
ROLES = (
    "sync", "client", "handler", "resolver", "cache", "importer", "exporter", "worker",
    "scheduler", "validator", "serializer", "gateway", "repository", "consumer", "producer",
    "migrator", "renderer", "poller", "limiter", "indexer",
)  # fmt: skip
VERBS = (
    "fetch", "build", "refresh", "reconcile", "publish", "parse", "render", "retry", "flush",
    "compute", "load", "merge", "apply", "enqueue", "resolve", "verify",
)  # fmt: skip
_PHRASES: dict[str, tuple[str, ...]] = {
    "HYPOTHESIS": (
        "Hypothesis: the {obj} in {module} come from {cause}{detail}.",
        "Hypothesis: {cause} in `{function}` explains the {obj}{detail}.",
        "Hypothesis: maybe `{module}` triggers {obj} through {cause}.",
        "Hypothesis: {function} is called twice, so the {obj} are {cause}{detail}.",
    ),
    "INVESTIGATION": (
        "Investigation: ran `{command}` to see how `{module}` handles {obj}.",
        "Investigation: read `{file}` to trace `{function}`{detail}.",
        "Investigation: compared {area} logs for `{module}` before and after the {obj} started.",
        "Investigation: added logging around `{function}` in {module}{detail}.",
    ),
    "DEAD_END": (
        "Dead end: `{command}` failed with {error}.",
        "Dead end: patching `{function}` did not stop the {obj}: {error}.",
        "Dead end: raising limits on {module} still fails with {error}.",
        "Dead end: reverting {module} changed nothing, `{function}` raises {error}.",
    ),
    "PIVOT": (
        "Pivot: stop patching the {obj}; isolate `{module}` instead{detail}.",
        "Pivot: instead of tuning {area}, reproduce `{function}` in a minimal test{detail}.",
        "Pivot: switch from the {area} logs to tracing `{function}` directly.",
        "Pivot: bisect the commits that touched `{file}`{detail}.",
    ),
    "SOLUTION": (
        "Solution: {fix} in `{module}`; the {obj} are gone and tests pass.",
        "Solution: fixed the {obj} in `{function}` — {fix}{detail}.",
        "Solution: `{command}` passes after we {fix}.",
        "Solution: in {module} we {fix_short}; no more {obj}.",
    ),
    "DISCOVERY": (
        "Discovery: `{module}` {finding}{detail}.",
        "Discovery: the {obj} trace back to `{function}`, which {finding}.",
        "Discovery: in {area}, `{module}` {finding}, so {obj} pile up.",
        "Discovery: `{function}` {finding}{detail}.",
    ),
    "CONTEXT_LOAD": (
        "Context load: read {n} files under `src/{area}/{module}/`.",
        "Context load: loaded `{module}` and its {n} tests.",
        "Context load: skimmed the {area} runbook and `{file}`.",
        "Context load: read `{function}` and its callers in {module}.",
    ),
}
_SUFFIXES = ("", "_v2", "_util")
_DETAILS = (
    "",
    "",
    "",
    " (seen in `{file}`)",
    " on the {branch} branch",
    " after the last deploy",
    " under load in worker {n}",
    " only in CI",
)


def problem_templates(count: int = 3000, seed: int = 23) -> list[dict[str, str]]:
    """`count` recurring problems: each names its own code (a module and a function) in an
    area, with an object, a cause, an error, a fix and a finding of its own."""
    rng = random.Random(seed)
    templates = []
    for i in range(count):
        area = AREAS[i % len(AREAS)]
        obj = OBJECTS[(i // len(AREAS)) % len(OBJECTS)]
        noun = rng.choice(NOUNS)
        module = f"{noun}_{rng.choice(ROLES)}"
        function = f"{rng.choice(VERBS)}_{noun}{rng.choice(('', 's', '_batch', '_all'))}"
        fix = rng.choice(FIXES)
        templates.append(
            {
                "area": area,
                "obj": obj,
                "module": module,
                "function": function,
                "cause": rng.choice(CAUSES),
                "error": rng.choice(ERRORS),
                "fix": fix,
                "fix_short": " ".join(fix.split()[:4]).rstrip(","),
                "finding": rng.choice(FINDINGS),
                "command": rng.choice(
                    (
                        f"pytest tests/{area}/test_{module}.py -x",
                        f"make test-{noun}",
                        f"{area} --check {module}",
                        f"kubectl logs deploy/{noun}-{area}",
                        f"npm run test -- {module}",
                        f"python -m {area}.{module} --dry-run",
                    )
                ),
                "home": PROJECTS[(i * 7 + rng.randrange(len(PROJECTS))) % len(PROJECTS)],
            }
        )
    return templates


def _arc(rng: random.Random) -> list[str]:
    """The node types of one session, in order (about five on average)."""
    arc = []
    if rng.random() < 0.4:
        arc.append("CONTEXT_LOAD")
    if rng.random() < 0.9:
        arc.append("HYPOTHESIS")
    arc.append("INVESTIGATION")
    if rng.random() < 0.25:
        arc.append("INVESTIGATION")
    failed = rng.random() < 0.7
    if failed:
        arc.append("DEAD_END")
        if rng.random() < 0.2:
            arc.append("DEAD_END")
        if rng.random() < 0.55:
            arc.append("PIVOT")
    if rng.random() < 0.8:
        arc.append("SOLUTION")
    if rng.random() < 0.4:
        arc.append("DISCOVERY")
    return arc


def reasoning_sessions(
    nodes: int,
    *,
    templates: int = 3000,
    seed: int = 29,
    zipf: float = 0.5,
    start: str = "2026-01-05T09:00:00+00:00",
    days: int = 300,
) -> list[dict[str, Any]]:
    """Sessions of reasoning nodes (about five each) until `nodes` nodes exist.

    Each session works on one recurring problem (popularity ~ rank^-zipf, so a few recur
    often and most a handful of times), mostly in that problem's home project; its nodes are
    `node.extracted` payloads with edges, its messages rows of the session's archive. Same
    arguments, same output."""
    from datetime import datetime, timedelta

    rng = random.Random(seed)
    problems = problem_templates(templates, seed=seed + 1)
    weights = [1.0 / (rank + 1) ** zipf for rank in range(len(problems))]
    order = list(range(len(problems)))
    rng.shuffle(order)  # popularity independent of area/object
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    developers = [f"dev{i}@example.com" for i in range(8)]
    sessions: list[dict[str, Any]] = []
    made = 0
    expected = max(1, nodes // 5)
    origin = datetime.fromisoformat(start)
    while made < nodes:
        index = len(sessions)
        problem = problems[order[rng.choices(range(len(problems)), cum_weights=cumulative)[0]]]
        project = problem["home"] if rng.random() < 0.85 else rng.choice(PROJECTS)
        sid = f"syn-{seed}-{index:07d}"
        began = origin + timedelta(days=days * index / expected, minutes=rng.randrange(600))
        arc = _arc(rng)[: nodes - made]
        file = f"{sid}.jsonl"
        session_nodes: list[dict[str, Any]] = []
        messages: list[list[object]] = []
        previous: dict[str, str] = {}
        for position, type_ in enumerate(arc):
            values = {
                **problem,
                "n": rng.randint(2, 64),
                "m": rng.randint(65, 999),
                "port": rng.choice((5432, 6379, 8080, 9092, 443)),
                "branch": rng.choice(("main", "develop", f"fix/{problem['area']}")),
                "file": f"src/{problem['area']}/{problem['module']}{rng.choice(_SUFFIXES)}.py",
            }
            values["error"] = problem["error"].format(**values)
            values["detail"] = rng.choice(_DETAILS).format(**values)
            summary = rng.choice(_PHRASES[type_]).format(**values)
            evidence = f"{values['error']}" if type_ == "DEAD_END" else summary.split(": ", 1)[1]
            node_id = f"n_syn{seed}{made:08d}"
            edges = []
            if position:
                edges.append({"source": session_nodes[-1]["node_id"], "type": "informed"})
            if type_ == "PIVOT" and "DEAD_END" in previous:
                edges.append({"source": previous["DEAD_END"], "type": "triggered_pivot"})
            if type_ == "SOLUTION" and "DEAD_END" in previous:
                edges.append({"source": previous["DEAD_END"], "type": "resolved"})
            line = 2 * position + 2
            stamp = (began + timedelta(minutes=3 * position)).isoformat()
            messages.append([position, file, line, line, "assistant", "text", evidence, stamp, 0])
            session_nodes.append(
                {
                    "node_id": node_id,
                    "session_id": sid,
                    "project": project,
                    "type": type_,
                    "summary": summary,
                    "evidence": evidence,
                    "file": file,
                    "line_start": line,
                    "line_end": line,
                    "confidence": round(rng.uniform(0.5, 0.95), 2),
                    "scope": "TEAM" if rng.random() < 0.1 else "PROJECT",
                    "tier": "warm",
                    "strategy": "keywords",
                    "developer": "",
                    "key": node_id,
                    "edges_in": edges,
                }
            )
            previous[type_] = node_id
            made += 1
        developer = rng.choice(developers)
        for node in session_nodes:
            node["developer"] = developer
        sessions.append(
            {
                "session_id": sid,
                "project": project,
                "branch": "main",
                "started_at": began.isoformat(),
                "ended_at": (began + timedelta(minutes=3 * len(arc) + 5)).isoformat(),
                "developer": developer,
                "messages": messages,
                "nodes": session_nodes,
            }
        )
    return sessions


def problem_queries(count: int, seed: int = 31) -> list[str]:
    """Varied problem statements an agent might bring to memory search or diagnose."""
    rng = random.Random(seed)
    problems = problem_templates()
    shapes = (
        "{obj} in {module}",
        "why do we get {error} in {area}?",
        "{function} keeps failing with {obj}",
        "how did we fix {obj} in {area} last time",
        "tests flaky after touching {module}",
        "{error}",
    )
    out = []
    for _ in range(count):
        problem = rng.choice(problems)
        values = {**problem, "n": rng.randint(2, 64), "m": rng.randint(65, 999), "port": 5432}
        values["error"] = problem["error"].format(**values)
        out.append(rng.choice(shapes).format(**values))
    return out
