"""The 手撕 problems on the site: one page per problem, and a line on each question page that links its problems.

A problem page (``judge/<id>.md``, made at build time from the problem's folder, never written to ``docs/``)
shows the statement, the interface, the starter, how the solution is run, and the commands that judge it
and practise it. Whether the judge tells right from wrong is the problem's claim, shown once, on the judge
page (``judge.md#<id>``); the problem page links it. Each question page that a problem names gets a line
before its evidence (「手撕练习：…」), so a page never links a problem that does not exist.
"""

from __future__ import annotations

import re
from pathlib import Path

from verify.core.frontmatter import front_matter
from verify.judge.problem import Problem

FOLDER = "judge"
#: how each language's solution is run, as the page says it
RUNS = {
    "python": "在独立子进程里运行 Python。",
    "torch": "在独立子进程里用 CPU 上的 PyTorch 运行，并记录实际跑了哪些 ATen 算子。",
    "triton": "在 Triton 的解释器里运行（CPU 上逐个 program 执行，没有 GPU）：返回的张量必须是某次核函数启动的参数。",
    "numba": "在 numba 的 CUDA 模拟器里运行（每个线程是一个 Python 线程，没有 GPU）：返回的数组必须是某次核函数启动的参数。",
}
#: what each sanitizer of a C++ problem's ``sanitizers`` is built with, as the page names it (address brings
#: LeakSanitizer with it: the leak checks)
SANITIZERS = {"address": "AddressSanitizer、LeakSanitizer", "undefined": "UBSan", "thread": "ThreadSanitizer"}
_EVIDENCE = re.compile(r"^## 证据\s*$", re.MULTILINE)


def src_uri(problem_id: str) -> str:
    return f"{FOLDER}/{problem_id}.md"


def _code(path: Path) -> str:
    lang = {".py": "python", ".cpp": "cpp", ".h": "cpp", ".hpp": "cpp", ".cu": "cuda"}.get(path.suffix, "")
    return f"```{lang}\n{path.read_text(encoding='utf-8').rstrip()}\n```"


def _cuda_starter(p: Problem) -> str:
    """A kernel problem's CUDA C++ starter, where it has one: compiled for the report, never run here."""
    cu = p.path / "starter.cu"
    if not cu.is_file():
        return ""
    return (f"\n## CUDA C++ 版起始代码（`starter.cu`）\n\n想用 CUDA C++ 写的，从这里开始。本机没有 GPU：评测器不运行它，"
            f"只有参考解的 CUDA C++ 版按 sm_80 / sm_90a 编译过，见[手撕题总页](../judge.md#{p.id})。\n\n{_code(cu)}\n")


def _run(p: Problem) -> str:
    """How ``p``'s solution is run; a C++ problem's line from its own sanitizers."""
    if p.language != "cpp":
        return RUNS[p.language]
    return (f"用 g++ -std=c++17 加 {'、'.join(SANITIZERS[s] for s in p.sanitizers)} 编译（编译也在沙箱里），"
            "在独立进程里运行。")


def _statement(p: Problem) -> str:
    """The statement without its own title (the page's title is the problem's)."""
    text = (p.path / "statement.md").read_text(encoding="utf-8").strip()
    lines = text.splitlines()
    body = lines[1:] if lines and lines[0].startswith("# ") else lines
    return "\n".join(body).strip()


def _question_title(p: Problem, question: str) -> str:
    """The title of the question page ``p`` names (its front matter), or its id where the page has none."""
    path = p.path.resolve().parents[2] / "docs" / "questions" / f"{question}.md"
    if not path.is_file():
        return question
    _front, data = front_matter(path)
    title = data.get("title") if isinstance(data, dict) else None
    return title if isinstance(title, str) and title else question


def page(p: Problem) -> str:
    """The markdown of ``p``'s page."""
    name, starter, ext = p.starter.name, _code(p.starter), p.starter.suffix
    questions = "、".join(f"[{_question_title(p, q)}](../questions/{q}.md)" for q in p.questions)
    return f"""# {p.title}

`{p.id}` · 接口 `{p.interface}` · 原理见 {questions}

{_statement(p)}

## 起始代码（`{name}`）

{starter}
{_cuda_starter(p)}
## 评测

{_run(p)}容差：{_tolerance(p)}。

```bash
# 题面、接口、起始代码
verify judge show {p.id}
# 评测：退出码 0 通过，1 未通过，2 代码或环境出错
verify judge run {p.id} 你的解答{ext}
# 在 $EDITOR 里写，评测，按结果排复习
verify quiz handwrite --problem {p.id}
```

评测器认得出 {len(p.mutants)} 种常见错误：题目自带的正确解都通过、这 {len(p.mutants)} 个错误解都失败，是构建时跑出来的（见[手撕题总页](../judge.md#{p.id})）；别的错法不一定被抓到。
"""


def _tolerance(p: Problem) -> str:
    tol = p.tolerance
    if not tol.rtol and not tol.atol:
        return tol.reason
    return f"rtol {tol.rtol:g}、atol {tol.atol:g}（{tol.reason}）"


def pages(known: list[Problem]) -> dict[str, str]:
    """Every problem page of ``known`` (:func:`~verify.judge.problem.all_problems`): its ``src_uri`` -> its markdown."""
    return {src_uri(p.id): page(p) for p in known}


def practice_line(known: list[Problem], question: str, base: str = "../") -> str:
    """The 手撕练习 line of a question page, or '' where no problem of ``known`` names it."""
    named = [p for p in known if question in p.questions]
    if not named:
        return ""
    links = "；".join(f"[{p.title}]({base}{src_uri(p.id)})" for p in named)
    return f"手撕练习：{links}。写完在本地评测：`verify judge run <题目> 你的文件`，或 `verify quiz handwrite`。"


def with_problem_links(markdown: str, known: list[Problem]) -> str:
    """The judge page with a link to each problem's page under that problem's heading (``{#<id>}``)."""
    for p in known:
        heading = re.compile(r"^##[^\n]*\{#" + re.escape(p.id) + r"\}[ \t]*$", re.MULTILINE)
        found = heading.search(markdown)
        if found is not None:
            link = f"\n\n题面、起始代码和评测命令：[{p.title}]({src_uri(p.id)})"
            markdown = markdown[:found.end()] + link + markdown[found.end():]
    return markdown


def with_practice(markdown: str, line: str) -> str:
    """``markdown`` with ``line`` before its evidence section (at its end where it has none)."""
    if not line:
        return markdown
    found = _EVIDENCE.search(markdown)
    if found is None:
        return markdown.rstrip() + "\n\n" + line + "\n"
    return markdown[:found.start()] + line + "\n\n" + markdown[found.start():]
