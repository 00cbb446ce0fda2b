"""Answer verdicts: an app that exists only in the test settings (tests/settings.py).

It is the worked example of docs/architecture.md, "Adding a judge" and "Adding a
kind of human work": yes/no verdicts on whether an answer answers its topic's
query, by an LLM job, by people on a page of their own, or from a file, with an
exporter and a score family. It reaches the foundation through the public
registry alone: nothing in assessor/ names it.
"""
