"""Claude Code's skill listing for a working folder (issue 15, item 1).

Claude Code lists every skill's name and description in the model's context each turn,
within a character budget: 1% of the context window by default (`skillListingBudgetFraction`,
or a fixed count in `SLASH_COMMAND_TOOL_CHAR_BUDGET`), each skill's `description` +
`when_to_use` cut at 1,536 characters (`skillListingMaxDescChars`); when the listing
overflows, the descriptions of the skills invoked least go first and those skills are listed
by name only (code.claude.com/docs/en/skills, "Skill descriptions are cut short";
docs/en/settings-reference). `settings` reads those values from Claude Code's settings files,
`sources` finds the skills Claude Code would list in a folder, `budget` allots the budget
and says what to do, `routing` measures what the cut costs the routing evaluation.
"""
