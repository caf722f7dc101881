"""The mock-interview quiz: one question bank, scored answers, FSRS scheduling, Anki export.

Nothing here imports torch: the terminal quiz must start at once.
"""
