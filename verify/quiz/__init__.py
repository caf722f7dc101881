"""The mock-interview quiz: one question bank, scored answers, drills from claims, FSRS, Anki export.

Modules by job: ``schema`` and ``bank`` (pages to a validated bank), ``reference`` (answers away
from the site), ``claims`` (what the bank takes from a verification), ``drills`` and ``drillcheck``
(predict-the-output drills and how an answer is checked), ``scoring`` (key points, contradictions),
``progress`` and ``transfer`` (FSRS cards, the progress file shared with the browser), ``cards`` and
``anki`` (the deck), ``publish`` and ``fence`` (the site), ``terminal``, ``commands``, ``tui``,
``liveinput`` and ``loading`` (``verify quiz``), ``samples`` (pages and claims for tests and demos).

Nothing here imports torch: the terminal quiz must start at once.
"""
