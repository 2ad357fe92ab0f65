"""Issue 11's measuring stick: how much of the review queue a careful reviewer would keep.

- `labels`: the labelled dev set in the project's `tests/quality/` folder (lessons a reviewer
  would keep from each corpus transcript; `RUBRIC.md` there says what counts).
- `measure`: pending nodes against the lessons: precision, coverage, narration, per file.
- `corpus`: the corpus ingested into a fresh library with the real pipeline (warm tier
  alone), then measured; `librarian bench --only quality` runs it.
"""
