"""Build tiny throw-away projects (snippets, pages, mkdocs.yml) for the engine and site tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from verify.settings import Settings

REPO = Path(__file__).resolve().parent.parent

MKDOCS_YML = f"""\
site_name: tiny
docs_dir: docs
site_dir: site
theme:
  name: material
  language: zh
  font: false
plugins:
  - search
hooks:
  - {REPO / "verify" / "hooks.py"}
markdown_extensions:
  - pymdownx.inlinehilite:
      custom_inline:
        - {{name: v, class: vf-val, format: !!python/name:verify.build.value_inline }}
        - {{name: in, class: vf-input, format: !!python/name:verify.build.input_inline }}
  - verify.site.cjk
  - pymdownx.superfences:
      custom_fences:
        - name: claim
          class: claim
          format: !!python/name:verify.build.claim_fence
        - name: evidence
          class: evidence
          format: !!python/name:verify.build.evidence_fence
        - name: ledger
          class: ledger
          format: !!python/name:verify.build.ledger_fence
"""

GOOD_SNIPPET = '''\
import torch
from verify.claim import claim

Q = "tiny"


@claim("tiny.stride", question=Q, statement="expand 的 stride 为 0。", expect={"stride": [0, 1]})
def _(ctx):
    return {"stride": torch.ones(1, 3).expand(4, 3).stride()}


@claim("tiny.error", question=Q, statement="转置后 view 报错。",
       raises=("RuntimeError", "view size is not compatible"))
def _(ctx):
    torch.ones(3, 4).t().view(12)
'''

def question_page(better: str, qid: str = "tiny") -> str:
    """A question page the quiz bank accepts, with ``better`` as its 更好的回答 section."""
    return f"""\
---
id: {qid}
title: 小站
sources: [{{company: 测试, round: 一面}}]
difficulty: 1
tags: [test]
key_points:
  - point: expand 的 stride 为 0
    keywords: [stride]
follow_ups:
  - {{q: 会拷贝吗？, a: 不会。}}
---

# 小站

## 普通回答

expand 不拷贝。

## 更好的回答

{better}
## 考察点

stride。

## 追问

无。

## 证据

```evidence
{qid}
```
"""


PAGE = question_page("""\
```claim
tiny.stride
```

```claim
tiny.error
```
""")


def settings(root: Path) -> Settings:
    """The settings a command run in ``root`` would make."""
    return Settings.for_root(root)


REPO_SETTINGS = Settings.for_root(REPO)


def _seed_probe(root: Path) -> None:
    """Reuse this machine's probe (same interpreter, same torch) instead of importing torch again."""
    from verify.running import probe  # noqa: PLC0415

    probe.probe(REPO_SETTINGS)
    target = root / ".cache" / "probe.json"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REPO_SETTINGS.cache_dir / "probe.json").read_bytes())


def write(root: Path, files: dict[str, str]) -> Path:
    _seed_probe(root)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if rel.endswith(".py") else text, encoding="utf-8")
    return root


def tiny_project(root: Path, snippet: str = GOOD_SNIPPET, page: str = PAGE, extra: dict[str, str] | None = None) -> Path:
    files = {"mkdocs.yml": MKDOCS_YML, "docs/index.md": "# 首页\n", "docs/questions/tiny.md": page,
             "snippets/tiny/basic.py": snippet}
    files.update(extra or {})
    return write(root, files)


def env_for(root: Path) -> dict[str, str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env.pop("VERIFY_NO_RUN", None)
    return env


def mkdocs_build(root: Path, strict: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q"] + (["--strict"] if strict else [])
    return subprocess.run(cmd, cwd=root, env=env_for(root), capture_output=True, text=True, timeout=600)


def cold_cache(path: Path) -> Path:
    """An empty cache folder holding only this machine's probe (so no worker imports torch to probe it)."""
    from verify.running import probe  # noqa: PLC0415

    probe.probe(REPO_SETTINGS)  # a fresh clone has no probe yet when this is the first test to ask
    path.mkdir(parents=True)
    (path / "probe.json").write_bytes((REPO_SETTINGS.cache_dir / "probe.json").read_bytes())
    return path


def start_verify(root: Path, cache: Path, *args: str) -> subprocess.Popen[str]:
    """``verify ARGS`` in ``root`` with its own cache folder and one worker, as a separate process."""
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cache), VERIFY_JOBS="1")
    return subprocess.Popen([sys.executable, "-m", "verify.cli", *args], cwd=root, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def recorded_bundle(tmp: Path, snippet: str = GOOD_SNIPPET) -> dict:
    """A bundle's content from a real recording of the tiny project (both claims passing), built in ``tmp``."""
    import json  # noqa: PLC0415

    from verify.running import record  # noqa: PLC0415

    root = tiny_project(tmp / "p", snippet=snippet)
    env = dict(env_for(root), VERIFY_CACHE_DIR=str(cold_cache(tmp / "cache")))
    path, out = record.record(Settings.for_root(root, environ=env), jobs=1)
    assert out.failures == []
    data = json.loads(path.read_text())
    data["created"] = max(r["provenance"]["date"] for r in data["claims"].values())
    return data


def file_as_device(path: Path, key: str) -> Path:
    """A recorded file filed as another device's, as a committed recording of it would be: the key inside too."""
    import json  # noqa: PLC0415

    data = json.loads(path.read_text())
    data["device_key"] = key
    for rec in data["claims"].values():
        rec["provenance"]["device_key"] = key
    target = path.with_name(f"{key}.json")
    target.write_text(json.dumps(data))
    if target != path:
        path.unlink()
    return target
