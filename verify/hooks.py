"""MkDocs hook, and where a build is put together: the engine makes the ledger the pages read
(:func:`verify.site.session.use`), and the machine-readable files are written after the pages.

Rendering does not depend on this hook (Zensical ignores ``hooks:`` and still renders every
badge); the hook only adds ``evidence.json`` (the ledger), ``quiz.json`` and the Anki deck to the built site.

Under ``mkdocs serve`` it also watches the claim sources (:func:`on_serve`): saving a snippet
rebuilds, the session re-runs that file's claims only (the evidence cache is content-addressed)
and the browser reloads. Strict mode and serve: ``make serve`` builds with ``--strict`` first
(``make site``), so a failing site is refused before the server starts, and then serves with
``--no-strict``. A strict rebuild that fails is not shown: MkDocs keeps the server waiting for a
good build, so requests hang and the browser keeps the old page. Without strict the rebuild
finishes, the page shows the claim as 失败 with its message, the terminal logs the failure summary
(``log.error``), and the server carries on.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

import msgspec
from mkdocs.exceptions import PluginError

from verify import settings as settings_mod
from verify.core.records import JsonObject
from verify.errors import ClaimError
from verify.judge.problem import Problem, all_problems
from verify import build  # noqa: F401  (the engine behind the pages)
from verify.running import quiet
from verify.settings import Settings
from verify.site import quiz as site_quiz
from verify.site import problems, rendercache, rewatch, session
from verify.storage.fs import atomic_write_text

LEDGER_FORMAT = 1
log = logging.getLogger("mkdocs.verify")


def ledger_document(sess: session.Session) -> JsonObject:
    """The content of the site's ``evidence.json``."""
    return {"format": LEDGER_FORMAT, "built_on": sess.outcome.probe.built_on(),
            "claims": [row.to_json() for row in sess.ledger()]}


def on_config(config: Any, **kwargs: Any) -> Any:
    """The settings of the checkout whose mkdocs.yml is being built, for every fence of this build."""
    try:
        settings_mod.use_for_site(Settings.for_config(config["config_file_path"]))
    except ClaimError as exc:
        raise PluginError(str(exc)) from exc
    return config


#: this build's 手撕 problems, read once by :func:`on_files` (each page reading all 21 folders again cost a
#: warm rebuild about 3 s on a 2-core machine)
_problems: list[Problem] = []


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:
    """A page for each 手撕 problem (``judge/<id>.md``), made from its folder under ``snippets/judge/``."""
    from mkdocs.structure.files import File  # noqa: PLC0415

    try:
        _problems[:] = all_problems(settings_mod.for_site().root)
    except ClaimError as exc:  # a problem folder that does not fit its schema: the message names the file
        raise PluginError(str(exc)) from exc
    for uri, content in problems.pages(_problems).items():
        files.append(File.generated(config, uri, content=content))
    return files


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """A question page gets its 手撕练习 line (:mod:`verify.site.problems`). The quiz page gets one empty
    ``q=<id>`` target per question page: each page's 练这道题 link (``quiz.md#q=<id>``, which the quiz reads to
    open that question) then names an anchor the page has, and MkDocs' link check stops reporting thirty
    missing anchors on every build."""
    uri = page.file.src_uri
    if uri == "judge.md":
        return problems.with_problem_links(markdown, _problems)
    if uri.startswith("questions/"):
        return problems.with_practice(markdown, problems.practice_line(_problems, Path(uri).stem))
    if "```quizbank" not in markdown:
        return markdown
    pages = sorted((settings_mod.for_site().docs_dir / "questions").glob("*.md"))
    # hidden: following the link scrolls nowhere, as before, and the page shows nothing more
    targets = "".join(f'<span id="q={p.stem}"></span>' for p in pages)
    return f"<div hidden>{targets}</div>\n\n" + markdown


_held: list[contextlib.ExitStack] = []


def on_pre_build(config: Any, **kwargs: Any) -> None:
    """Every build compares the sources again, however soon after the previous one it starts.

    Under ``verify serve`` claims run in another process while the server builds: a build holds
    the machine's timing lock shared, as an ordinary claim does, so no performance claim is timed
    while a page renders (such a build runs no claim itself).
    """
    session.recheck()
    if settings_mod.for_site().live and not _held:
        stack = contextlib.ExitStack()
        stack.enter_context(quiet.hold(False))
        _held.append(stack)


def _release() -> None:
    while _held:
        _held.pop().close()


def on_build_error(error: Exception, **kwargs: Any) -> None:
    _release()


def on_serve(server: Any, config: Any, builder: Any, **kwargs: Any) -> Any:
    """Watch the snippets and the recorded evidence, for every mkdocs.yml that uses this hook.

    A hook, not ``watch:`` in mkdocs.yml: the folders follow the checkout of the config being
    served, and each project's mkdocs.yml need not repeat them. MkDocs watches docs_dir itself.
    Not ``verify/`` (also a source of the session): the server process imports the library and
    would render with its old code; restart the server after changing it. A folder deleted and
    made again while serving is watched again (:class:`verify.site.rewatch.Rewatch`).
    """
    settings = settings_mod.for_site()
    # evidence/ is made when missing, so that the first merged or recorded file shows at once; verify
    # serve touches a stamp in live_dir as claims finish behind the server.
    with contextlib.suppress(OSError):
        settings.evidence_dir.mkdir(exist_ok=True)
        if settings.live:
            settings.live_dir.mkdir(parents=True, exist_ok=True)
    folders = [settings.snippets_dir, settings.evidence_dir, *([settings.live_dir] if settings.live else [])]
    rewatch.Rewatch(server, folders, outdated=session.outdated).start()
    if config["strict"]:
        log.warning("verify: serving in strict mode: a rebuild with a failing claim is not shown and the server "
                    "waits until it is fixed; serve with --no-strict to see the failure on the page")
    return server


def on_post_build(config: Any, **kwargs: Any) -> None:
    site = Path(config["site_dir"])
    try:
        _write_machine_files(config, site)
        rendercache.prune(settings_mod.for_site())  # the rendered HTML and plots this build did not use
    finally:
        _release()


def _write_machine_files(config: Any, site: Path) -> None:
    try:
        sess = session.get()
        # msgspec, not json: json.dumps with indent runs its pure-Python encoder (a few times slower)
        text = msgspec.json.format(msgspec.json.encode(ledger_document(sess)), indent=1).decode()
        atomic_write_text(site / "evidence.json", text)
        site_quiz.write(sess.settings, Path(config["docs_dir"]), site, sess.outcome, config.get("site_url"))
    except ClaimError as exc:  # a clean message naming the file, not a traceback
        raise PluginError(str(exc)) from exc
