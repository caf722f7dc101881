"""The mock-interview quiz: one question bank, scored answers, drills from claims, FSRS, Anki export.

Modules by job: ``schema`` (what a question is: the front matter's schema and the bank's typed
records), ``bank`` (pages to a validated bank), ``reference`` (answers away from the site),
``claims`` (what the bank takes from a ledger), ``drills`` (predict-the-output drills and how a
prediction is checked), ``scoring`` (the answer's sentences that share a key point's words, never a verdict; the rating from the candidate's own marks), ``progress`` (FSRS cards and the
progress file shared with the browser), ``deck`` (review cards and the Anki deck, from
``templates/``), ``tui`` (what the terminal draws and reads) and ``practice`` (a round in the
terminal). The site's side is `verify/site/quiz.py`; the commands are `verify/cli/quiz.py`.

The quiz reads a :class:`verify.core.ledger.Ledger`; it never runs a claim. Nothing here imports
torch: the terminal quiz must start at once.
"""
