"""The 手撕 problem pages and the practice line of a question page, made from the problem folders."""

from __future__ import annotations

from pathlib import Path

from verify.judge import problem
from verify.site import problems

REPO = Path(__file__).resolve().parent.parent


def test_a_problem_page_shows_its_statement_starter_tolerance_and_commands():
    p = problem.find(REPO, "rmsnorm-torch")
    text = problems.page(p)
    statement = (p.path / "statement.md").read_text(encoding="utf-8").splitlines()
    assert text.startswith(f"# {p.title}\n") and statement[0] not in text.splitlines()  # one title: the problem's
    assert all(line in text for line in statement[1:] if line.strip())
    assert (p.path / "starter.py").read_text(encoding="utf-8").rstrip() in text
    assert f"verify judge run {p.id} 你的解答.py" in text and f"verify quiz handwrite --problem {p.id}" in text
    assert f"rtol {p.tolerance.rtol:g}" in text and p.tolerance.reason in text
    assert f"../judge.md#{p.id}" in text and "../questions/norm-layers.md" in text


def test_an_exact_problem_says_why_it_is_exact():
    p = problem.find(REPO, "topo-sort-python")
    assert p.tolerance.reason in problems.page(p) and "rtol" not in problems.page(p)


def test_the_practice_line_goes_before_the_evidence_and_only_where_a_problem_names_the_page():
    line = problems.practice_line(problem.all_problems(REPO), "norm-layers")
    assert "judge/rmsnorm-torch.md" in line
    assert problems.practice_line(problem.all_problems(REPO), "zero-stages") == ""
    page = "# t\n\n正文\n\n## 证据\n\n```evidence\nx\n```\n"
    out = problems.with_practice(page, line)
    assert out.index(line) < out.index("## 证据") and out.count(line) == 1
    assert problems.with_practice("# t\n", line).endswith(line + "\n")
    assert problems.with_practice(page, "") == page


def test_the_judge_page_links_each_problem_under_its_heading():
    text = "## rmsnorm-torch：RMSNorm {#rmsnorm-torch}\n\n正文\n\n## 别的 {#other}\n"
    out = problems.with_problem_links(text, problem.all_problems(REPO))
    head, rest = out.split("\n", 1)
    assert head.endswith("{#rmsnorm-torch}") and rest.lstrip().startswith("题面、起始代码和评测命令：")
    assert "(judge/rmsnorm-torch.md)" in out and out.count("题面") == 1


def test_a_problem_page_names_its_question_pages_by_title_and_its_cpp_run_by_its_sanitizers():
    lru, queue = problem.find(REPO, "lru-cache-cpp"), problem.find(REPO, "bounded-queue-cpp")
    text = problems.page(lru)
    assert "[手写 O(1) LRU" in text and "[lru-cache](" not in text
    assert "AddressSanitizer、LeakSanitizer、UBSan" in text and "ThreadSanitizer" not in text
    queue_text = problems.page(queue)
    assert "ThreadSanitizer" in queue_text and "AddressSanitizer" not in queue_text


def test_the_command_block_keeps_its_comments_on_their_own_lines():
    """A phone cuts a long line: no command carries its comment at its end."""
    text = problems.page(problem.find(REPO, "softmax-torch"))
    block = text.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert block and all(line.startswith("# ") or "#" not in line for line in block), block
    assert sum(line.startswith("verify ") for line in block) == 3
