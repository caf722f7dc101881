"""``verify quiz`` in Chinese: its help pages, its usage line and the CLI framework's own errors.

Why not gettext: typer 0.26 and later (the project pins ``>=0.26,<0.29``) carry their own copy of Click
(``typer._click``), and that copy words its messages as plain English strings ("Usage: ", "No such option: --x",
"Missing argument 'FILE'.", "Show this message and exit."): it never calls gettext, so a translation installed for
the "click" domain, or any other, changes nothing. The installed Click package is not what ``verify`` runs on.

What is done instead, for the quiz commands only (``verify run --help`` and the other commands keep their English):

- :class:`Group` and :class:`Command` are the classes of ``verify quiz`` and of each of its commands (``cls=``).
  Through Click's public Command methods they write the usage line with 用法： and [选项] / 命令 [参数]..., and give
  the help option a Chinese help text; a path argument's type is shown as 路径.
- typer's rich help panels take their titles and the words ``[default: …]`` and ``[required]`` from constants of
  ``typer.rich_utils``, read while a page is drawn: they are swapped while a quiz help page is drawn, then put back.
- A framework error (an unknown option or command, a missing argument, a value that is not a number) is caught
  where the group parses and runs a command, and shown here in Chinese, built from the exception's class and
  fields (the option's name, the parameter, the close matches), not from its English text; an unknown command is
  refused by the group itself, with the nearest command names. Three kinds of message carry no field that says
  what went wrong (a value that does not convert, an option that takes no value or lacks one, extra arguments):
  those are read by a pattern. Anything not recognised is shown as the framework words it, under the Chinese usage
  line and title. The exit status stays the framework's: 2.

tests/test_quiz_cli_zh.py runs each of these, so a typer release that renames a constant or a class shows there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from difflib import get_close_matches
from typing import Any

import typer
from typer._click.core import Command as ClickCommand
from typer._click.core import Context
from typer._click.exceptions import BadOptionUsage, MissingParameter, NoArgsIsHelpError, NoSuchOption, UsageError
from typer._click.formatting import HelpFormatter
from typer.core import TyperCommand, TyperGroup
from typer.models import TyperPath

HELP = "显示这段帮助并退出。"
_RICH_WORDS = {"ARGUMENTS_PANEL_TITLE": "参数", "OPTIONS_PANEL_TITLE": "选项", "COMMANDS_PANEL_TITLE": "命令",
               "DEFAULT_STRING": "[默认：{}]", "REQUIRED_LONG_STRING": "[必填]", "ENVVAR_STRING": "[环境变量：{}]",
               "DEPRECATED_STRING": "（已弃用）"}
_TYPES = {"integer": "整数", "int": "整数", "float": "数", "boolean": "是或否", "uuid": "UUID"}
_NOT_A = re.compile(r"(?P<value>.+) is not a valid (?P<type>\w+)\.?")


@contextmanager
def _rich_words() -> Iterator[None]:
    """typer's help-panel words in Chinese while the block runs (a constant a later typer lacks is left alone)."""
    import typer.rich_utils as ru  # noqa: PLC0415  (only when help is drawn: not on the quiz's start path)

    saved = {name: getattr(ru, name) for name in _RICH_WORDS if hasattr(ru, name)}
    for name in saved:
        setattr(ru, name, _RICH_WORDS[name])
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(ru, name, value)


class _Chinese(ClickCommand):
    """What the quiz's group and commands share: the usage line, the help option and the help page in Chinese."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.options_metavar = "[选项]"
        for param in self.params:  # an argument's type is shown beside it; a path's type is made for its parameter
            if param.param_type_name == "argument" and isinstance(param.type, TyperPath):
                param.type.name = "路径"

    def format_usage(self, ctx: Context, formatter: HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, " ".join(self.collect_usage_pieces(ctx)), prefix="用法：")

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        with _rich_words():
            super().format_help(ctx, formatter)

    def get_help_option(self, ctx: Context) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.help = HELP
        return option


class Command(_Chinese, TyperCommand):
    """A ``verify quiz`` command (``@quiz_app.command(cls=Command)``)."""


class Group(_Chinese, TyperGroup):
    """``verify quiz`` itself (``typer.Typer(cls=Group)``): framework errors of its commands are shown in Chinese."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subcommand_metavar = "命令 [参数]..."

    def make_context(self, info_name: str | None, args: list[str], parent: Context | None = None,
                     **extra: Any) -> Context:
        with _errors_in_chinese():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: Context) -> Any:
        with _errors_in_chinese():
            return super().invoke(ctx)

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None and not ctx.resilient_parsing:
            raise UsageError(f"没有 {name} 这个命令{_nearest(name, self.list_commands(ctx))}。", ctx)
        return super().resolve_command(ctx, args)


@contextmanager
def _errors_in_chinese() -> Iterator[None]:
    """A usage error raised in the block is shown in Chinese and ends the command with its exit status."""
    try:
        yield
    except NoArgsIsHelpError:  # the help page, already drawn (in Chinese): the framework ends the command
        raise
    except UsageError as exc:
        show(exc)
        raise typer.Exit(exc.exit_code) from None


def nearest(name: str, known: Sequence[str], n: int = 3) -> list[str]:
    """The ``n`` entries of ``known`` closest to ``name``, letter case aside (``ddp`` finds ``DDP``), best first."""
    folded: dict[str, list[str]] = {}
    for k in known:
        folded.setdefault(k.casefold(), []).append(k)
    return [k for f in get_close_matches(name.casefold(), list(folded), n=n) for k in folded[f]][:n]


def _nearest(name: str, known: Sequence[str]) -> str:
    near = nearest(name, known)
    return f"，是不是想用 {'、'.join(near)}" if near else ""


def _hint(exc: UsageError) -> str:
    """Which parameter the error is about: ``--count / -n``, ``'进度文件'``; empty when the error names none."""
    hint: Any = getattr(exc, "param_hint", None)
    param = getattr(exc, "param", None)
    if hint is None and param is not None and exc.ctx is not None:
        hint = param.get_error_hint(exc.ctx)
    if isinstance(hint, (list, tuple)):
        return " / ".join(hint)
    return str(hint or "")


def _value(text: str) -> str:
    """The framework's "'x' is not a valid integer." in Chinese; any other text (the quiz's own) as it is."""
    m = _NOT_A.fullmatch(text.strip())
    return f"{m['value']} 不是{_TYPES.get(m['type'], m['type'])}。" if m else text


def message(exc: UsageError) -> str:
    """The error in Chinese, from its class and fields; the framework's words for anything not recognised."""
    if isinstance(exc, NoSuchOption):
        known = exc.possibilities or ([o for p in exc.ctx.command.get_params(exc.ctx) for o in p.opts]
                                      if exc.ctx is not None else [])
        return f"没有 {exc.option_name} 这个选项{_nearest(exc.option_name, known)}。"
    if isinstance(exc, MissingParameter):
        kind = "选项" if (exc.param_type or getattr(exc.param, "param_type_name", "")) == "option" else "参数"
        return f"缺少{kind} {_hint(exc)}。"
    if isinstance(exc, typer.BadParameter):
        hint = _hint(exc)
        return f"{hint} 的值不对：{_value(exc.message)}" if hint else _value(exc.message)
    if isinstance(exc, BadOptionUsage):
        if exc.message.endswith("does not take a value."):
            return f"{exc.option_name} 是开关，后面不带值。"
        if " requires " in exc.message:
            return f"{exc.option_name} 后面要跟一个值。"
    extra = re.fullmatch(r"Got unexpected extra argument(?:s|\(s\))? \((.*)\)", exc.message)
    if extra:
        return f"多出了参数：{extra[1]}。"
    return exc.format_message()


def show(exc: UsageError) -> None:
    """The usage line, where to find help and the error in a red panel, on stderr: the framework's layout, in Chinese."""
    from rich.console import Console  # noqa: PLC0415
    from rich.panel import Panel  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    console = Console(stderr=True)
    ctx = exc.ctx
    if ctx is not None:
        console.print(ctx.get_usage(), markup=False, highlight=False, soft_wrap=True)
        if ctx.command.get_help_option(ctx) is not None:
            console.print(f"运行 {ctx.command_path} {ctx.help_option_names[0]} 查看帮助。", style="dim", markup=False,
                          highlight=False, soft_wrap=True)
    console.print(Panel(Text(message(exc)), title="错误", title_align="left", border_style="red"))
