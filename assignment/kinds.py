"""The assignment app's kinds, as stored in the foundation's string columns (labels: `assignment.parts`)."""

AUTO_ASSIGN = "auto_assign"  # a job: an LLM assigns nuggets to answers (AutoAssign)
ASSIGN_MANUAL = "assign_manual"  # work: a person assigns nuggets to answers (ManualAssign)
IMPORT_ASSIGNMENTS = "assignments"  # a file: nugget assignment labels
LABEL_FAMILY = "assignment"  # the label family of assigners
