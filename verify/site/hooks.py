"""MkDocs hook: write the machine-readable files of the site after the pages are built.

Rendering does not depend on this hook (Zensical ignores ``hooks:`` and still renders every
badge); the hook only adds ``evidence.json`` (the ledger), ``quiz.json`` and the Anki deck to the built site.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from verify import settings as settings_mod
from verify.core.errors import ClaimError
from verify.quiz import publish
from verify.settings import Settings
from verify.site import session
from verify.storage.fs import atomic_write_text

LEDGER_FORMAT = 1


def ledger_document(sess: session.Session) -> dict[str, Any]:
    probe = sess.outcome.probe
    return {
        "format": LEDGER_FORMAT,
        "built_on": {k: probe.get(k) for k in ("device_name", "device_key", "torch", "torch_build", "python", "os")},
        "claims": sess.ledger(),
    }


def on_config(config: Any, **kwargs: Any) -> Any:
    """The settings of the checkout whose mkdocs.yml is being built, for every fence of this build."""
    try:
        settings_mod.use_for_site(Settings.for_config(config["config_file_path"]))
    except ClaimError as exc:
        raise PluginError(str(exc)) from exc
    return config


def on_post_build(config: Any, **kwargs: Any) -> None:
    site = Path(config["site_dir"])
    try:
        sess = session.get()
        atomic_write_text(site / "evidence.json", json.dumps(ledger_document(sess), ensure_ascii=False, indent=1))
        publish.write(sess.settings, Path(config["docs_dir"]), site, sess.outcome, config.get("site_url"))
    except ClaimError as exc:  # a clean message naming the file, not a traceback
        raise PluginError(str(exc)) from exc
