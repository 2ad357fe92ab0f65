"""The agent harness's own tool errors: one real-shaped example per listed entry, and
project errors that must not be mistaken for them."""

from __future__ import annotations

import pytest

from store.ingest.harness import HARNESS_ERRORS, harness_error

EXAMPLES = {
    "edit_string_not_found": "<tool_use_error>String to replace not found in file.\n"
    "String: def checkout(</tool_use_error>",
    "edit_multiple_matches": "<tool_use_error>Found 3 matches of the string to replace, but "
    "replace_all is false.</tool_use_error>",
    "edit_no_change": "<tool_use_error>No changes to make: old_string and new_string are "
    "exactly the same.</tool_use_error>",
    "file_not_read": "<tool_use_error>File has not been read yet. Read it first before writing "
    "to it.</tool_use_error>",
    "file_changed_since_read": "<tool_use_error>File has been modified since read, either by "
    "the user or by a linter.</tool_use_error>",
    "sibling_errored": "<tool_use_error>Sibling tool call errored</tool_use_error>",
    "input_validation": "<tool_use_error>InputValidationError: Task failed due to the following "
    "issue:\nThe required parameter `prompt` is missing</tool_use_error>",
    "output_too_large": "File content (48213 tokens) exceeds maximum allowed tokens (25000). "
    "Please use offset and limit parameters.",
    "interrupted": "[Request interrupted by user for tool use]",
    "user_rejected": "The user doesn't want to proceed with this tool use. The tool use was "
    "rejected (eg. if it was a file edit, the new_string was NOT written to the file).",
    "permission_pending": "Claude requested permissions to write to /w/CLAUDE.md, but you "
    "haven't granted it yet.",
    "read_directory": "EISDIR: illegal operation on a directory, read",
    "no_such_tool": "<tool_use_error>Error: No such tool available: Serach</tool_use_error>",
    "mcp_server_failed": 'MCP server "conductor" tool "GetWorkspaceDiff" timed out after 100000s',
    "model_api_auth": 'Failed to authenticate. API Error: 401 {"type":"error","error":{"type":'
    '"authentication_error","message":"OAuth token has expired."}}',
    "sandbox_temp_file": "Exit code 1\n(eval):1: can't create temp file for here document: "
    "operation not permitted",
    "working_directory": "Exit code 1\n(eval):cd:1: no such file or directory: cmd/app/strategy",
    "bare_error": "Error",
}

PROJECT_ERRORS = [
    "src/hooks/useTodos.test.ts(6,33): error TS2307: Cannot find module "
    "'@testing-library/react' or its corresponding type declarations.",
    "Exit code 1\nFAILED tests/test_pay.py::test_refund - AssertionError: 3 != 4",
    "ls: cannot access 'types/': No such file or directory",
    'Traceback (most recent call last):\n  File "app.py", line 3\nImportError: no module x',
    "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
    "psycopg.errors.LockNotAvailable: canceling statement due to lock timeout",
    "Error: Cannot find module 'next/dist/compiled/webpack'",
    "Error: connect ECONNREFUSED 127.0.0.1:5432 (the MCP server's own database)",
    "open /etc/app/config.yaml: no such file or directory",
]


def test_every_entry_has_an_example() -> None:
    assert {e.name for e in HARNESS_ERRORS} == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_harness_error_is_recognised(name: str) -> None:
    found = harness_error(EXAMPLES[name])
    assert found is not None
    assert found.name == name


@pytest.mark.parametrize("text", PROJECT_ERRORS)
def test_project_errors_are_not_harness_errors(text: str) -> None:
    assert harness_error(text) is None
