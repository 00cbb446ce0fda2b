"""The ARGUE-style app's kinds, as stored in `Job.kind`, `AssessorWork.kind` and `LabelSource.family`."""

ARGUE = "argue"  # the LLM job: yes/no judgments of a report's citations and of its sentences against gold answers
ARGUE_FAMILY = "argue"  # the sources ARGUE-style judgments are kept under
ARGUE_WORK = "argue_judging"  # a person's ARGUE-style judgments of a topic's reports
SCORE_FAMILY = "argue"  # the kept scores of an ARGUE-style source
IMPORT_ARGUE = "argue_file"  # a file: ARGUE-style judgments as export_argue writes them, one judged report a line
