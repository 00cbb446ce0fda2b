"""The crucible app's job kind, as stored in `Job.kind`."""

CRUCIBLE = "crucible"  # the LLM job that writes a run's reports from a question bank
