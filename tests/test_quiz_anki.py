"""The Anki export read back: one note per question, stable GUIDs across edits, tags, backs."""

from __future__ import annotations

import sqlite3
import zipfile
from pathlib import Path

from verify.quiz.anki import FIELDS, export, note_guid
from verify.quiz.bank import build_bank
from verify.quiz.samples import write_sample_docs


def read_apkg(path: Path, tmp: Path) -> dict[str, dict]:
    with zipfile.ZipFile(path) as z:
        z.extract("collection.anki2", tmp)
    conn = sqlite3.connect(tmp / "collection.anki2")
    rows = conn.execute("SELECT id, guid, flds, tags FROM notes").fetchall()
    conn.close()
    out = {}
    for nid, guid, flds, tags in rows:
        fields = dict(zip(FIELDS, flds.split("\x1f"), strict=True))
        out[fields["QuestionId"]] = {"id": nid, "guid": guid, "fields": fields, "tags": tags.split()}
    return out


def test_export_and_reexport_keep_guids(tmp_path):
    docs = tmp_path / "docs"
    ids = write_sample_docs(docs)
    first = read_apkg(export(build_bank(docs), tmp_path / "a.apkg"), tmp_path / "x1")
    assert sorted(first) == ids
    note = first["expand-demo"]
    assert note["guid"] == note_guid("expand-demo")
    assert "topic::tensor" in note["tags"] and "difficulty::2" in note["tags"]
    assert "stride 设为 0" in note["fields"]["BetterAnswer"]
    assert "只改 stride" in note["fields"]["KeyPoints"] and "零拷贝" in note["fields"]["KeyPoints"]

    # edit a page: the better answer and the title change, the id stays
    path = docs / "questions" / "expand-demo.md"
    path.write_text(path.read_text(encoding="utf-8").replace("repeat 分配新内存并复制", "repeat 分配 N 倍内存"),
                    encoding="utf-8")
    second = read_apkg(export(build_bank(docs), tmp_path / "b.apkg"), tmp_path / "x2")
    assert {k: v["guid"] for k, v in second.items()} == {k: v["guid"] for k, v in first.items()}
    assert "N 倍内存" in second["expand-demo"]["fields"]["BetterAnswer"]
    assert len({v["guid"] for v in second.values()}) == len(ids)
