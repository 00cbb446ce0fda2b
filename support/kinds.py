"""The support app's kinds, as stored in the foundation's string columns (labels: `support.parts`)."""

AUTO_SUPPORT = "auto_support"  # a job: an LLM judges whether cited segments support sentences
SUPPORT_SCRATCH = "support_scratch"  # work: a person judges support from scratch
SUPPORT_POSTEDIT = "support_postedit"  # work: a person post-edits an LLM's support labels
IMPORT_SUPPORT = "support"  # a file: support labels
LABEL_FAMILY = "support"  # the label family of support methods
