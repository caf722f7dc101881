"""``verify judge``: list the 手撕 problems, show one, judge a file against one.

Exit status of ``verify judge run``: 0 passed, 1 failed, 2 an error in the candidate's code or its
environment (a problem that does not exist, a file that is not there, a solution that raises).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from verify.cli import zh
from verify.cli.common import settings_for

judge_app = typer.Typer(help="手撕题：写出经典算子和算法，由本地评测器检查。", cls=zh.Group, no_args_is_help=True,
                        add_completion=False, context_settings={"help_option_names": ["--help", "-h"]})
console = Console()

RootOpt = Annotated[Path | None, typer.Option("--root", metavar="<目录>",
                                              help="站点目录；默认从当前目录往上找 mkdocs.yml")]
IdArg = Annotated[str, typer.Argument(metavar="题目", help="题目 id，如 rmsnorm-torch（见 verify judge list）")]


def _problem(root: Path | None, problem_id: str):  # noqa: ANN202  (verify.judge is imported late: torch-free start)
    from verify.judge import problem  # noqa: PLC0415

    try:
        return problem.find(settings_for(root).root, problem_id)
    except problem.ProblemError as exc:
        console.print(str(exc), style="red", markup=False, soft_wrap=True)
        raise typer.Exit(2) from None


@judge_app.command("list", cls=zh.Command)
def list_problems(root: RootOpt = None) -> None:
    """列出所有手撕题。"""
    from verify.judge import problem  # noqa: PLC0415

    table = Table("题目", "标题", "语言", "错误解", "相关页面")
    for p in problem.all_problems(settings_for(root).root):
        table.add_row(p.id, p.title, p.language, str(len(p.mutants)), ", ".join(p.questions))
    console.print(table)


@judge_app.command(cls=zh.Command)
def show(problem_id: IdArg, root: RootOpt = None) -> None:
    """显示一道题的题面、接口、容差和起始代码。"""
    p = _problem(root, problem_id)
    console.print(p.title, style="bold", markup=False)
    console.print((p.path / "statement.md").read_text(encoding="utf-8"), markup=False, highlight=False)
    console.print(f"容差：rtol={p.tolerance.rtol:g}，atol={p.tolerance.atol:g}（{p.tolerance.reason}）", markup=False)
    if p.ops.forbidden or p.forbidden_calls:
        console.print(f"禁止：{', '.join([*p.forbidden_calls, *p.ops.forbidden])}", markup=False)
    console.print(f"起始代码（{p.starter}）：", markup=False)
    console.print(p.starter.read_text(encoding="utf-8"), markup=False, highlight=False)
    cuda = p.path / "starter.cu"
    if cuda.is_file():  # a kernel problem's CUDA C++ starter: compiled for the report, never run here
        console.print(f"另有 CUDA C++ 版起始代码（{cuda}）：评测器从不运行 CUDA C++，参考解的 CUDA C++ 版只为报告按 sm_80 / sm_90a "
                      f"编译过，结果见站点手撕题总页的 {p.id} 一节。", markup=False, soft_wrap=True)
    console.print(f"评测：verify judge run {p.id} <你的文件>", markup=False)


@judge_app.command(cls=zh.Command)
def run(problem_id: IdArg,
        file: Annotated[Path, typer.Argument(metavar="文件", help="你的解答（.py）")],
        seed: Annotated[int | None, typer.Option("--seed", metavar="<整数>", help="随机用例的种子（重放一次评测）")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="以 JSON 输出报告")] = False,
        gpu: Annotated[bool, typer.Option("--gpu/--no-gpu", help="核函数题：附上编译或模拟得到的 GPU 一节（默认附上）")] = True,
        root: RootOpt = None) -> None:
    """评测一个解答文件：退出码 0 通过，1 未通过，2 解答的代码或环境出错。"""
    from verify.judge import judge, report  # noqa: PLC0415

    p = _problem(root, problem_id)
    if not file.is_file():
        console.print(f"没有这个文件：{file}", style="red", markup=False)
        raise typer.Exit(2)
    result = judge.judge(p, file, seed, gpu=gpu)
    if as_json:
        typer.echo(json.dumps(report.as_json(result), ensure_ascii=False, indent=1))
    else:
        colour = {"pass": "green", "fail": "red", "error": "yellow"}[result.verdict]
        console.print(report.text(result, str(file)), style=colour, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(result.exit_code)
