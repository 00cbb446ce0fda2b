"""A judge of answers in a few lines: one label per answer from a fixed set, by people, an LLM job or a file.

An app declares its label model (a `LabelProvenance` with `answer` and `label`) and one `AnswerLabels`: its
names, its choices and what each scores, its prompt. `AnswerLabels.register()` adds the rest to the registry:
the label family; the LLM job (a call per answer of the chosen runs and topics); the people's work on the
label-app kit (an answer a page, blind to runs), with its organizer's pages; the JSONL importer and export;
the score family (a run's mean over the source's topics), with its notes, leaderboard and downloads. The
leaderboard and downloads are the foundation's pages of `labels:` (assessor/labelkit/urls.py), one set for
every app on the kit.
"""
