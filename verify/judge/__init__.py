"""The 手撕 judge: problems as data under ``snippets/judge/``, a candidate run in a child process, a report.

``problem`` (the schema of a problem folder), ``loading`` (the parent's one load of a problem's own
files), ``sandbox`` (the child's isolation), ``child`` (what runs there), ``compare`` (one case's
mismatches), ``judge`` (a file on a problem), ``report`` (its text and JSON), ``selfcheck`` (every
solution passes and every mutant fails: what each problem's claim observes).
"""
