"""MkDocs hook: write the machine-readable files of the site after the pages are built.

Rendering does not depend on this hook (Zensical ignores ``hooks:`` and still renders every
badge); the hook only adds ``evidence.json`` (the ledger) and ``quiz.json`` to the built site.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from verify import session
from verify.errors import ClaimError
from verify.quiz import bank

LEDGER_FORMAT = 1


def ledger_document(sess: session.Session) -> dict[str, Any]:
    probe = sess.outcome.probe
    return {
        "format": LEDGER_FORMAT,
        "built_on": {k: probe.get(k) for k in ("device_name", "device_key", "torch", "torch_build", "python", "os")},
        "claims": sess.ledger(),
    }


def on_post_build(config: Any, **kwargs: Any) -> None:
    site = Path(config["site_dir"])
    try:
        sess = session.get()
        (site / "evidence.json").write_text(json.dumps(ledger_document(sess), ensure_ascii=False, indent=1),
                                            encoding="utf-8")
        bank.write_quiz_json(Path(config["docs_dir"]), site)
    except ClaimError as exc:  # a clean message naming the file, not a traceback
        raise PluginError(str(exc)) from exc
