"""The nuggets app's kinds, as stored in the foundation's string columns.

`Job.kind`, `AssessorWork.kind`, `ImportBatch.kind` and `LabelSource.family`
hold these values; the labels people read are registered in `nuggets.parts`.
"""

AUTO_NUGGETS = "auto_nuggets"  # a job: nuggets made and rated by an LLM (AutoNuggets)
DRAFT_NUGGETS = "draft_nuggets"  # a job: AutoNuggets drafts, for people to post-edit

NUGGETS_MANUAL = "nuggets_manual"  # work: a person writes the topic's nuggets (ManualNuggets)
NUGGETS_AUTO_EDIT = "nuggets_auto_edit"  # work: a person post-edits an LLM's nuggets (AutoNuggets+Edits)
NUGGET_KINDS = (NUGGETS_MANUAL, NUGGETS_AUTO_EDIT)  # the work that makes a nugget list (the first family's)
BANK_MANUAL = "bank_manual"  # work: a person writes the topic's question bank
BANK_AUTO_EDIT = "bank_auto_edit"  # work: a person post-edits an LLM's question bank
BANK_KINDS = (BANK_MANUAL, BANK_AUTO_EDIT)
WORKSPACE_KINDS = NUGGET_KINDS + BANK_KINDS  # the work the nugget workspace edits

IMPORT_NUGGETS = "nuggets"  # a file: nuggetizer JSONL

LABEL_FAMILY = "nuggets"  # the label family of nugget set names
IMPORT_BANKS = "banks"  # a file: question banks in the AutoJudge v3 layout
