"""What fails a strict build besides a failing claim: pages and claims that do not fit together.

Every problem is a :class:`Failure` naming the file (and line) to fix; the session reports them all
in one summary. The rules:

- a claim is shown by a ``claim`` fence on its own question's page, and nowhere else;
- a claim fence inside an HTML comment is an error (a reader never sees it);
- a bound value names a declared claim and a key it observed; a statement's ``{key}`` too;
- no hand-typed measurement in a question page's prose or in a statement (bind it instead).
"""

from __future__ import annotations

from typing import Protocol

from verify.core import binding, states
from verify.errors import Failure
from verify.core.ledger import Ledger
from verify.core.prose import Prose


class Session(Protocol):
    """What the checks read of a build's session (:class:`verify.site.session.Session`)."""

    outcome: Ledger
    prose: dict[str, Prose]
    pages: dict[str, list[str]]

    def detail(self, failure: Failure) -> str: ...

QUESTIONS = "questions/"


def check(sess: Session) -> list[Failure]:
    failures = _verification(sess)
    failures += _placement(sess)
    failures += _prose(sess)
    failures += _statements(sess)
    return failures


def _verification(sess: Session) -> list[Failure]:
    out = []
    for f in sess.outcome.failures:
        page = sess.pages.get(f.claim, [f.where])[0]
        # a recorded failure names the evidence file it came from; a local one, the page showing it
        where = f.where if f.where.startswith("evidence/") or page == f.where else f"docs/{page}"
        out.append(Failure(f.claim, where, sess.detail(f), snippet=f.snippet))
    return out


def _placement(sess: Session) -> list[Failure]:
    claims = sess.outcome.registry.claims
    questions = {rel[len(QUESTIONS):-3] for rel in sess.prose if rel.startswith(QUESTIONS)}
    out: list[Failure] = []
    for cid, pages in sorted(sess.pages.items()):
        spec = claims.get(cid)
        if spec is None:
            out += [Failure(cid, f"docs/{p}", "the page shows a claim that no snippet declares") for p in pages]
            continue
        for p in pages:
            if p.startswith(QUESTIONS) and p != f"{QUESTIONS}{spec.question}.md":
                out.append(Failure(cid, f"docs/{p}", f"the claim belongs to question {spec.question!r} "
                                   f"({spec.snippet}:{spec.line}); show it on that question's page", snippet=spec.snippet))
        if len(pages) > 1:
            out.append(Failure(cid, f"docs/{pages[1]}", f"the claim is shown more than once ({', '.join(pages)})"))
    for cid, spec in sorted(claims.items()):
        if spec.question not in questions:
            out.append(Failure(cid, f"{spec.snippet}:{spec.line}", f"question={spec.question!r} names no page "
                               f"(docs/{QUESTIONS}{spec.question}.md does not exist; known: "
                               f"{', '.join(sorted(questions))})", snippet=spec.snippet))
        elif cid not in sess.pages:
            out.append(Failure(cid, spec.snippet, "no page shows this claim (add a ```claim fence)", snippet=spec.snippet))
    for rel, page in sorted(sess.prose.items()):
        for cid, line in page.hidden_claims:
            out.append(Failure(cid or "-", f"docs/{rel}:{line}", "a claim fence inside an HTML comment is never shown "
                               "to a reader; remove the comment or the fence"))
    return out


def _prose(sess: Session) -> list[Failure]:
    out: list[Failure] = []
    for rel, page in sorted(sess.prose.items()):
        for problem, line in page.bad_refs:
            out.append(Failure("-", f"docs/{rel}:{line}", problem))
        for ref, line in page.refs:
            try:
                sess.outcome.value(ref)
            except binding.BindError as exc:
                out.append(Failure(ref.claim, f"docs/{rel}:{line}", f"bound value `#!v {ref.label}`: {exc}"))
        if rel.startswith(QUESTIONS):
            for text, line in page.measurements:
                out.append(Failure("-", f"docs/{rel}:{line}", f"hand-typed measurement {text!r}: bind it to a run "
                                   "(`#!v claim.id key`), mark it as an input (`#!in …`), or remove it"))
    return out


def _statements(sess: Session) -> list[Failure]:
    out: list[Failure] = []
    for cid, spec in sorted(sess.outcome.registry.claims.items()):
        where = f"{spec.snippet}:{spec.line}"
        for text in binding.statement_measurements(spec.statement):
            out.append(Failure(cid, where, f"hand-typed measurement {text!r} in the statement: write it as "
                               "{key} of an observed value, or {=…} for an input", snippet=spec.snippet))
        for text in binding.unread_references(spec.statement):
            out.append(Failure(cid, where, f"{text} in the statement is not a reference the page can fill (a key is "
                               "a name with dots, as {key} or {key:spec}): the page would show the braces",
                               snippet=spec.snippet))
        record = sess.outcome.local.get(cid)
        if record is None or not states.verified_here(sess.outcome.status(cid)):
            continue
        for key, fmt in binding.keys(spec.statement):
            try:
                binding.resolve(record.observed, key, fmt)
            except binding.BindError as exc:
                out.append(Failure(cid, where, f"statement value {{{key}}}: {exc}", snippet=spec.snippet))
    return out


def bound_counts(sess: Session, rel: str) -> tuple[int, int]:
    """(bound values, hand-typed measurements) of one page: inline values plus its claims' ``{key}``s."""
    page = sess.prose.get(rel)
    if page is None:
        return 0, 0
    claims = sess.outcome.registry.claims
    in_statements = sum(len(binding.keys(claims[cid].statement)) for cid, _ in page.claims if cid in claims)
    return len(page.refs) + in_statements, len(page.measurements)
