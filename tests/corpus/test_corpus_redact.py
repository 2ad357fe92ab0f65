"""Redaction on real transcripts: every redaction `redact` makes in the corpus is listed and
must be one a person reviewed and judged a plausible secret (false positives at zero).

Reads every string in every record (message text, tool input and output, ids, timestamps,
image data) of the shared corpus in place; skipped when it is absent. Run with `-s` to see
the list.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooling.evaluation.redaction import REVIEWED_CORPUS_SECRETS, redactions, transcript_files

pytestmark = pytest.mark.corpus

CORPUS = Path(
    os.environ.get("LIBRARIAN_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared/corpus")
)
TRANSCRIPTS = CORPUS / "transcripts"
if not TRANSCRIPTS.is_dir():
    pytest.skip(f"no transcripts corpus at {TRANSCRIPTS}", allow_module_level=True)

# The reviewed redactions (`REVIEWED_CORPUS_SECRETS`, shared with `librarian bench`) are empty:
# the corpus (mock sessions of claude-code-viewer, claude-code-log fixtures, simonw's sample)
# holds no credential, and `redact` finds none in its ~350,000 characters (distinct strings)
# of prose, code, tool output, uuids, request ids and timestamps.


def test_every_redaction_in_the_corpus_transcripts_is_a_reviewed_secret() -> None:
    files = transcript_files(TRANSCRIPTS)
    assert len(files) >= 10
    found, size = redactions(files, TRANSCRIPTS)
    assert size > 300_000  # every distinct string of the whole corpus was read
    for r in found:
        print(f"{r.file}: …{r.before!r} [{r.value!r}] {r.after!r}…")
    unexpected = [r for r in found if (r.file, r.value) not in REVIEWED_CORPUS_SECRETS]
    assert not unexpected, "\n".join(f"{r.file}: {r.before}[{r.value}]{r.after}" for r in found)
