"""A judge's report in Chinese for the terminal, and as JSON (``--json``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from verify.judge import gpu
from verify.judge.judge import Report

VERDICT = {"pass": "通过", "fail": "未通过", "error": "出错（解答的代码或运行环境）"}


def replay(report: Report, file: str) -> str:
    return f"verify judge run {report.problem} {file} --seed {report.seed}"


def text(report: Report, file: str) -> str:
    lines = [f"题目：{report.problem}    解答：{file}",
             f"结果：{VERDICT[report.verdict]}（退出码 {report.exit_code}）",
             f"用例：通过 {report.passed}/{report.cases}；随机用例的种子 {report.seed}，重放：{replay(report, file)}"]
    if report.verdict != "pass":
        lines.append(f"失败的用例：{report.case}" if report.case else "失败在运行任何用例之前或之间")
        lines.append(f"原因：{report.reason}")
        lines += [f"  {i}. {m.line()}" for i, m in enumerate(report.mismatches[:6], 1)]
        if report.hint:
            lines.append(f"像这个已知错误（{report.mutant}）：{report.hint}")
        if report.detail:
            lines += ["详情：", *("  " + line for line in report.detail.rstrip().splitlines()[-20:])]
    lines += gpu.lines(report.gpu)
    lines.append(f"隔离：{report.isolation}")
    lines.append(f"用时 {report.seconds:.1f} 秒（含启动子进程；PyTorch 题含导入 torch）")
    return "\n".join(lines)


def as_json(report: Report) -> dict[str, Any]:
    data = dataclasses.asdict(report)
    data["exit_code"] = report.exit_code
    data["mismatches"] = [dataclasses.asdict(m) | {"line": m.line()} for m in report.mismatches]
    return data
