"""Where a site build is put together: what ``mkdocs.yml`` names, and the engine behind the pages.

The site's modules only read the ledger (:class:`verify.core.ledger.Ledger`); importing this one
makes the engine its producer, so a page's first fence verifies the claims (from the cache, or by
running them). ``mkdocs.yml`` names the fences and inline formats through here, so MkDocs and
Zensical (which ignores ``hooks:``) build the same pages; :mod:`verify.hooks` imports it too.
"""

from __future__ import annotations

import threading
from typing import Any

from verify import settings as settings_mod

from verify.bench import run as bench_run
from verify.site import bench_fence as bench_fences
from verify.running import engine
from verify.site import session
from verify.site.fences import claim_fence, evidence_fence, ledger_fence
from verify.site.gpuspecs import gpu_specs_fence
from verify.site.inline import input_inline, see_inline, value_inline
from verify.site.quiz import quizbank_fence
from verify.site.syllabus import questions_fence

session.use(engine.verify)

_lock = threading.Lock()
_ensured: set[str] = set()


def bench_fence(source: str, *args: Any, **kwargs: Any) -> str:
    """The site's bench fence, after the build's first one has run the benchmarks ``VERIFY_BENCH`` asks for."""
    settings = settings_mod.for_site()
    with _lock:
        if str(settings.root) not in _ensured:
            _ensured.add(str(settings.root))
            bench_run.ensure(settings)
    return bench_fences.bench_fence(source, *args, **kwargs)

__all__ = ["bench_fence", "claim_fence", "evidence_fence", "gpu_specs_fence", "input_inline", "ledger_fence", "questions_fence",
           "quizbank_fence", "see_inline", "value_inline"]
