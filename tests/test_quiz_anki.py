"""The Anki deck: a note per key point, follow-up and drill, stable GUIDs, night-mode-safe, read by real Anki."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

import pytest

from verify.quiz.bank import build_bank
from verify.quiz.claims import ClaimFacts
from verify.quiz.deck import FIELDS, MODEL, cloze, export, note_guid, text_html
from verify.quiz.schema import Bank, Drill
from tests._quiz_samples import write_interview_page, write_sample_docs

DRILL = Drill(id="drill:expand-demo.demo", claim="expand-demo.demo", question="expand-demo", anchor="#claim-expand-demo.demo",
              format="value", key="stride", answer=[0, 1], accept=("[0,1]",), answer_text="(0, 1)",
              code="import torch\n\nx = torch.tensor([[1, 2, 3]])\nreturn {\"stride\": x.expand(4, 3).stride()}", prompt="运行这段代码，`x.expand(4, 3).stride()` 是什么？",
              sentence="`x.expand(4, 3)` 的 stride 是 (0, 1)。", device="AMD EPYC", torch="2.13.0", torch_build="cpu",
              date="2026-12-01", snippet="snippets/samples/demo.py", line=7, here=True)
FACTS = ClaimFacts(sentences={"expand-demo.demo": "`x.expand(4, 3)` 的 stride 是 (0, 1)，不拷贝。"}, drills=(DRILL,),
                   where={"expand-demo.demo": "AMD EPYC · torch 2.13.0"})
PLACEHOLDER = re.compile(r"#!v|#!in|```|\{[a-z_.]+(?::[^}]*)?\}|(?<!—)—(?!—)|…")


def read_apkg(path: Path, tmp: Path) -> dict[str, dict]:
    with zipfile.ZipFile(path) as z:
        z.extract("collection.anki2", tmp)
    conn = sqlite3.connect(tmp / "collection.anki2")
    rows = conn.execute("SELECT id, guid, flds, tags FROM notes").fetchall()
    conn.close()
    out = {}
    for nid, guid, flds, tags in rows:
        fields = dict(zip(FIELDS, flds.split("\x1f"), strict=True))
        out[fields["NoteId"]] = {"id": nid, "guid": guid, "fields": fields, "tags": tags.split()}
    return out


def expected_ids(bank: Bank) -> set[str]:
    ids = {f"kp:{q.id}:{n}" for q in bank.questions for n in range(1, len(q.key_points) + 1)}
    ids |= {f"fu:{q.id}:{n}" for q in bank.questions for n in range(1, len(q.follow_ups) + 1)}
    return ids | {d.id for d in bank.drills}


def test_a_note_per_key_point_follow_up_and_drill_with_stable_guids(tmp_path):
    docs = tmp_path / "docs"
    write_sample_docs(docs)
    write_interview_page(docs)
    bank = build_bank(docs, facts=FACTS, site_url="https://example.org/site/")
    first = read_apkg(export(bank, tmp_path / "a.apkg"), tmp_path / "x1")
    assert set(first) == expected_ids(bank) and len(first) == (2 + 2 + 1 + 5) + 4 + 1  # key points, follow-ups, a drill
    for note_id, note in first.items():
        assert note["guid"] == note_guid(note_id)
        text = " ".join(note["fields"].values())
        assert not PLACEHOLDER.search(text), (note_id, PLACEHOLDER.search(text))
        assert f"question::{note_id.split(':')[1]}" in note["tags"] or note_id.startswith("drill:")

    kp = first["kp:repeat-vs-expand:1"]
    assert kp["fields"]["Kind"] == "考察点" and "kind::考察点" in kp["tags"] and "question::repeat-vs-expand" in kp["tags"]
    assert 'class="blank"' in kp["fields"]["Front"] and "stride" not in kp["fields"]["Front"]  # the keywords are the answer
    assert "只改元数据" in kp["fields"]["Back"] and "expand 会拷贝" in kp["fields"]["Back"]  # the point and what contradicts it
    assert first["kp:expand-demo:1"]["fields"]["Back"].count('class="ev"') == 1  # the claim that backs it, and where it ran
    assert "AMD EPYC · torch 2.13.0" in first["kp:expand-demo:1"]["fields"]["Back"]
    fu = first["fu:expand-demo:1"]
    assert "对 expand 的结果原地写会怎样？" in fu["fields"]["Front"] and "RuntimeError" in fu["fields"]["Back"]
    drill = first["drill:expand-demo.demo"]
    assert "<pre><code>" in drill["fields"]["Front"] and "(0, 1)" in drill["fields"]["Back"]
    assert "AMD EPYC · torch 2.13.0+cpu" in drill["fields"]["Back"] and "kind::预测输出" in drill["tags"]
    assert 'href="https://example.org/site/questions/expand-demo/#claim-expand-demo.demo"' in drill["fields"]["Link"]
    assert 'href="https://example.org/site/questions/repeat-vs-expand/"' in kp["fields"]["Link"]

    # edit a page: the point changes, the ids and so the GUIDs stay
    path = docs / "questions" / "expand-demo.md"
    path.write_text(path.read_text(encoding="utf-8").replace("expand 只改 stride，不拷贝数据", "expand 只改 stride 和元数据"),
                    encoding="utf-8")
    second = read_apkg(export(build_bank(docs, facts=FACTS), tmp_path / "b.apkg"), tmp_path / "x2")
    assert {k: v["guid"] for k, v in second.items()} == {k: v["guid"] for k, v in first.items()}
    assert "只改 stride 和元数据" in second["kp:expand-demo:1"]["fields"]["Back"]
    link = second["kp:expand-demo:1"]["fields"]["Link"]
    assert "questions/expand-demo/" in link and "<a " not in link  # no relative link that leads nowhere
    assert "site_url" not in link and "mkdocs.yml" not in link  # and no set-up instruction for a candidate


def test_card_html_is_escaped_and_keywords_blanked():
    assert text_html("a <b> & `x<y>`\nz") == "a &lt;b&gt; &amp; <code>x&lt;y&gt;</code><br>z"
    assert cloze("expand 的 stride 为 <0>，`stride` 不变", ["stride", "<0>"]) == (
        'expand 的 <span class="blank">\u3000</span> 为 <span class="blank">\u3000</span>，'
        '<code><span class="blank">\u3000</span></code> 不变')
    assert cloze("strides 和 stride", ["stride"]).count("blank") == 1  # a Latin keyword only as a whole word


def test_styling_is_safe_in_night_mode():
    css = MODEL.css
    assert not re.search(r"(?<![-\w])(?:background|color)\s*:\s*#", css), "a fixed colour would be unreadable in one mode"
    assert ".nightMode" in css and "rgba(127, 127, 127" in css


# --- the real Anki library, in its own environment ---------------------------------------------------

IMPORT = r"""
import json, sys
from anki.collection import Collection, ImportAnkiPackageOptions, ImportAnkiPackageRequest
from anki.import_export_pb2 import ImportAnkiPackageUpdateCondition as U
col = Collection(sys.argv[1])
logs = []
for pkg in sys.argv[2:]:
    options = ImportAnkiPackageOptions(merge_notetypes=True, with_scheduling=False, with_deck_configs=False,
                                       update_notes=U.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_ALWAYS,
                                       update_notetypes=U.IMPORT_ANKI_PACKAGE_UPDATE_CONDITION_ALWAYS)
    log = col.import_anki_package(ImportAnkiPackageRequest(package_path=pkg, options=options)).log
    logs.append({"new": len(log.new), "updated": len(log.updated), "unchanged": len(log.duplicate)})
notes = [col.get_note(nid) for nid in col.find_notes("")]
print(json.dumps({"logs": logs, "notes": {n["NoteId"]: {"guid": n.guid, "back": n["Back"], "tags": n.tags} for n in notes}}))
col.close()
"""
#: the Anki library the deck is checked against, pinned (an open range would test a different library each month)
ANKI = "26.9.3"
NO_REGISTRY = ("No matching distribution", "Could not find a version", "NewConnectionError", "Network is unreachable",
               "Temporary failure in name resolution", "ConnectionError", "Max retries exceeded")


@pytest.fixture(scope="module")
def anki_python(tmp_path_factory) -> Path:
    """A virtual environment with PyPI's ``anki`` (the library the Anki app is built on)."""
    env = tmp_path_factory.mktemp("anki-env")
    venv.EnvBuilder(with_pip=False).create(env)  # installed into by this environment's pip (--python): no ensurepip
    python = env / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", f"anki=={ANKI}"],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        if any(s in proc.stdout + proc.stderr for s in NO_REGISTRY):
            pytest.skip("pip cannot reach the package registry to install anki: " + proc.stderr.strip()[-300:])
        pytest.fail("pip install anki failed: " + (proc.stdout + proc.stderr)[-2000:])
    return python


@pytest.mark.slow
def test_the_sites_deck_imports_into_anki_and_a_second_import_only_updates(anki_python, tmp_path):
    from tests.test_quiz_site import build_sample_site  # noqa: PLC0415

    root = build_sample_site(tmp_path / "site")
    bank = Bank.from_json(json.loads((root / "site" / "quiz.json").read_text(encoding="utf-8")))
    assert {d.format for d in bank.drills} == {"value", "faster", "exception"}
    first = tmp_path / "first.apkg"
    first.write_bytes((root / "site" / "interview-quiz.apkg").read_bytes())
    page = root / "docs" / "questions" / "expand-demo.md"  # edit a follow-up's answer and build again
    page.write_text(page.read_text(encoding="utf-8").replace("add_ 报 RuntimeError", "add_ 抛出 RuntimeError"),
                    encoding="utf-8")
    # Anki updates a note on import only when its modification time differs from the one it has,
    # and genanki stamps a deck's notes with the second it is written: a rebuild within the same
    # second would be imported as unchanged. A user's next build is seconds apart; this one may not be.
    written = (root / "site" / "interview-quiz.apkg").stat().st_mtime
    time.sleep(max(0.0, math.floor(written) + 1.05 - time.time()))
    build_sample_site(root)
    second = root / "site" / "interview-quiz.apkg"
    res = subprocess.run([str(anki_python), "-c", IMPORT, str(tmp_path / "collection.anki2"), str(first), str(second)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    want = expected_ids(bank)
    assert set(out["notes"]) == want  # one note per key point, follow-up and drill, and no more
    assert out["logs"][0]["new"] == len(want)
    assert out["logs"][1]["new"] == 0 and out["logs"][1]["updated"] >= 1  # updates, never duplicates
    assert "add_ 抛出 RuntimeError" in out["notes"]["fu:expand-demo:1"]["back"]
    assert all(n["guid"] == note_guid(i) for i, n in out["notes"].items())


def test_a_drill_card_shows_the_code_without_the_harness(tmp_path):
    from verify.core.registry import ClaimSpec  # noqa: PLC0415
    from verify.quiz import drills  # noqa: PLC0415
    from verify.quiz.deck import cards_of  # noqa: PLC0415

    module = "import torch\n\n\n@claim('expand-demo.demo', statement='{stride}', expect={'stride': [0, 1]})\n" \
             "def _(ctx):\n    import math  # noqa: PLC0415\n\n    x = torch.tensor([[1, 2, 3]], device=ctx.device)\n" \
             "    ctx.observe(n=math.prod(x.shape))\n    return {'stride': x.expand(4, 3).stride()}\n"
    spec = ClaimSpec(id="expand-demo.demo", question="expand-demo", statement="{stride}", kind="fact",
                     snippet="snippets/samples/demo.py", line=4, expect={"stride": [0, 1]})
    made = drills.make(spec, drills.with_context(module, module[module.index("@claim"):]), {"stride": [0, 1], "n": 3})
    assert made is not None
    write_sample_docs(tmp_path / "docs")
    facts = ClaimFacts(sentences=FACTS.sentences, where=FACTS.where,
                       drills=(Drill.from_json({**DRILL.to_json(), "code": made.code}),))
    bank = build_bank(tmp_path / "docs", html=False, facts=facts)
    front = next(c for c in cards_of(bank) if c.kind == "drill").front_html
    code = re.search(r"<pre><code>(.*?)</code></pre>", front, re.S).group(1)
    assert "import torch" in code and "x.expand(4, 3).stride()" in code
    for harness in ("def _(ctx", "ctx.", "noqa", "@claim"):
        assert harness not in code, harness
