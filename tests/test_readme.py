"""The README's facts that can drift: the counts it gives, and which torch wheel the Makefile installs."""

from __future__ import annotations

import re

from tests._project import REPO_SETTINGS as SETTINGS
from verify.storage import scan

ROOT = SETTINGS.root
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")


def _make_default(name: str) -> str:
    found = re.search(rf"^{name}\s*\?=[ \t]*(.*)$", MAKEFILE, re.M)
    assert found, f"the Makefile has no default for {name}"
    return found.group(1).strip()


def test_the_counts_the_readme_gives_are_the_checkouts():
    """`现在有 N 道题、M 条论断`: the question pages under docs/questions/ and the claims of the registry."""
    found = re.findall(r"现在有 (\d+) 道题、(\d+) 条论断", README)
    assert len(found) == 1, "the README gives today's counts once, in the words this test reads"
    pages = len(list((SETTINGS.docs_dir / "questions").glob("*.md")))
    claims = len(scan.load_registry(SETTINGS).claims)
    assert (int(found[0][0]), int(found[0][1])) == (pages, claims)


def test_every_other_count_of_questions_or_claims_is_dated():
    """A count in a sentence about the present goes stale; the README's other counts say when they were taken."""
    present = re.compile(r"\b(?:has|have|holds|today)\b[^.\n]{0,40}\b\d+ (?:questions|claims)\b|"
                         r"(?:共|现有|一共)\s*\d+\s*(?:道题|条论断)")
    assert present.findall(README) == []


def test_the_readme_names_the_torch_wheel_the_makefile_installs():
    torch, index = _make_default("TORCH"), _make_default("TORCH_INDEX")
    assert re.fullmatch(r"torch==[\d.]+", torch), torch
    # every pin the README writes is the Makefile's (a local label such as +cpu names where it came from)
    pins = set(re.findall(r"torch==([\d.]+)", README))
    assert pins == {torch.split("==")[1]}, pins
    # the one paragraph that says which wheel: the pin, and the index the Makefile uses by default
    paragraphs = [p for p in re.split(r"\n(?=- \*\*|\n)", README) if p.startswith("- **torch 装哪个 wheel**")]
    assert len(paragraphs) == 1
    said = paragraphs[0]
    assert f"`{torch}`" in said
    if index:
        assert index in said and "默认" in said
    else:
        assert "从 PyPI 装" in said and "`TORCH_INDEX` 默认为空" in said
        # the README must not say elsewhere that make installs another build
        assert not re.search(r"CPU build of `?torch", README)
    # the override it shows is the Makefile's own variable, with the URL the Makefile's comment gives
    override = re.search(r"make serve TORCH_INDEX=(\S+)", MAKEFILE)
    assert override and f"make serve TORCH_INDEX={override.group(1)}`" in said


def test_the_readme_shows_the_two_commands_as_the_makefile_defines_them():
    for target in ("serve", "test"):
        assert re.search(rf"^{target}:", MAKEFILE, re.M), target
        assert re.search(rf"^make {target}\s+#", README, re.M), target
    # and a reader's path comes before the maintainer's
    assert README.index("## 读和练") < README.index("## 快速开始")
    assert "打开模拟面试练习" in README and "Anki" in README.split("## 快速开始")[0]
