"""The grades app's job kind, work kind and label family, as stored in `Job.kind`, `AssessorWork.kind` and
`LabelSource.family`. Its score family (the meta-evaluation's `grades:NAME`) is `grades.scoring.SCORE_FAMILY`."""

GRADES = "question_grading"  # the LLM job
GRADES_FAMILY = "question_grades"  # the sources grade labels are kept under
GRADE_WORK = "grade_judging"  # a person's grades of a topic's reports on its bank's questions
IMPORT_GRADES = "grade_file"  # a file: grades in the reference's nugget-grades JSONL layout
