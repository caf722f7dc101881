"""Predict-the-output drills, made from claims: the code, one observed value to predict, the evidence;
and how a prediction is checked.

A fact claim asks for one value the candidate can predict from the code (a stride, a shape, a
bool, a small count, a byte count, an op order); an error claim asks which exception it raises; a
performance claim asks which variant is faster on the machine that measured it, and by about how
much. The answer is never written by hand: it is the value the run observed, shown with the device
and torch it was observed on and the sentence of the page it backs. Values that depend on timing,
long strings, big lists and dicts are never asked.

A drill shows only what the answer can be read from: the claim's body without its harness (no
``def _(ctx):``, no ``ctx.observe``, no ``device=ctx.device``, no ``# noqa``), with the imports and
short constants of its module that it reads written above it, its expressions as the source writes
them (``7e9``, not ``7000000000.0``). A claim whose code reads anything else (a helper of its module,
a name imported from the project) or whose asked value reads the machine (``os.cpu_count()``,
thread counts, clocks, process ids) has no drill; :func:`make_or_reason` and
:func:`context_or_reason` say why.

A prediction is checked exactly after normalising how it is written: ``(0, 1)`` and ``[0, 1]`` are
the same answer, as are ``True`` and ``true``, ``4.0`` and ``4``, ``96 字节`` and ``96``; case,
spaces and quotes do not matter. A performance drill is right when it names the faster variant and
the factor is within the drill's tolerance (a factor of :data:`TOLERANCE` either way), or says
「差不多」 where the two are within :data:`SAME` of each other. The browser quiz
(``docs/assets/quiz/quiz-core.js``) applies the same normalisation to the strings listed in a
drill's ``accept``.
"""

from __future__ import annotations

import ast
import builtins
import logging
import math
import re
import symtable
import sys
import textwrap
import unicodedata
from collections.abc import Mapping
from typing import Any

from verify.core import binding, states
from verify.core.registry import ClaimSpec
from verify.quiz.schema import Drill

log = logging.getLogger("verify.quiz.drills")

TOLERANCE = 2.0  # a perf answer within a factor of 2 of the measured one counts as "about"
SAME = 1.25  # measured within 25%: "about the same" is the right answer

_QUOTES = re.compile("[\"'`“”‘’「」『』]")
_SPACE = re.compile(r"\s+")
_UNIT = re.compile(r"(?<=\d)(?:字节|bytes?|个|次|倍|x)$")
_TRUE = {"true", "是", "对", "真", "yes", "会"}
_FALSE = {"false", "否", "错", "假", "no", "不是", "不会"}


def normalize(text: str) -> str:
    """One way to write a value: what ``canonical`` produces for the observed one."""
    t = unicodedata.normalize("NFKC", str(text)).lower().strip()
    t = _QUOTES.sub("", t)
    t = t.replace("、", ",").replace("→", ",").replace("->", ",").replace("【", "[").replace("】", "]")
    t = t.replace("(", "[").replace(")", "]")
    t = _SPACE.sub("", t).rstrip("。.")
    t = re.sub(r",+\]", "]", t)
    t = re.sub(r"(?<![0-9a-z_.])(\d+)\.0+(?![0-9.])", r"\1", t)
    t = _UNIT.sub("", t)
    if t in _TRUE:
        return "true"
    if t in _FALSE:
        return "false"
    return t


def display(value: Any) -> str:
    """The observed value as a reader writes it: ``(0, 1)``, ``True``, ``aten::mm``."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(display(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def accepted(value: Any) -> list[str]:
    """The normalised answers that equal ``value`` (an integer also with thousands separators)."""
    out = [normalize(display(value))]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer() and abs(value) >= 1000:
        out.append(normalize(f"{int(value):,}"))
    return out


def exception_type(text: str) -> str:
    """``RuntimeError`` from ``RuntimeError: …`` or ``torch.OutOfMemoryError``; lower case."""
    head = unicodedata.normalize("NFKC", text).strip().split(":", 1)[0].strip()
    return head.split(".")[-1].strip().lower()


def check(drill: Drill, answer: Any) -> bool:
    """Whether ``answer`` (text; for a perf drill ``{"faster": label or "same", "factor": number}``) is right."""
    if drill.format == "exception":
        return exception_type(str(answer)) == exception_type(drill.answer)
    if drill.format == "faster":
        return check_faster(drill, answer)
    given = normalize(str(answer))
    if drill.accept and drill.accept[0].startswith("[") and not given.startswith("["):
        given = f"[{given}]"
    return given in drill.accept


def factor(text: Any) -> float | None:
    """A positive number from ``3``, ``3.5 倍``, ``x3``, ``约 20``; None when there is none."""
    m = re.search(r"\d+(?:\.\d+)?", unicodedata.normalize("NFKC", str(text)).replace(",", ""))
    if not m:
        return None
    value = float(m.group(0))
    return value if value > 0 else None


def check_faster(drill: Drill, answer: Any) -> bool:
    picked = answer.get("faster") if isinstance(answer, dict) else None
    if picked == "same":
        return bool(drill.same)
    if picked != drill.faster or drill.factor is None:
        return False
    given = factor(answer.get("factor"))
    return given is not None and abs(math.log(given / drill.factor)) <= math.log(drill.tolerance or TOLERANCE)


# --- making drills ------------------------------------------------------------------------

DRILL_PREFIX = "drill:"
_SKIP_KEYS = ("torch", "device", "device_key", "date", "pid", "ptr", "path", "time", "spread", "seconds")
_SKIP_SUFFIXES = ("_s", "_ms", "_us", "_ns", "_mib", "_pid", "_ptr", "_path")
_TIMED_SPECS = ("time", "pct", "x")


def drill_id(claim_id: str) -> str:
    return DRILL_PREFIX + claim_id


def with_context(module_text: str, source: str) -> str | None:
    """The claim's code as a drill shows it: with the module's constants it reads written above it
    (``HEADS, DH = 4, 64``) and the imports of the standard library, torch, numpy or the project's
    timer it reads (``import torch``); None when it reads anything else of its module that a drill would not show
    (a function, a class, a name imported from the project, a long table), since then the answer
    cannot be read from the code. The reason is logged at debug level (:func:`context_or_reason`)."""
    made = context_or_reason(module_text, source)
    if made.startswith(_LEFT_OUT):
        log.debug("verify: %s", made)
        return None
    return made


_LEFT_OUT = "left out: "
_KNOWN_MODULES = frozenset({"torch", "numpy", *sys.stdlib_module_names})
# the project's timer, shown as imported: a performance drill asks what ``compare`` measured
_HARNESS_MODULES = frozenset({"verify.timing"})


def _module_names(tree: ast.Module) -> tuple[dict[str, ast.stmt], dict[str, str | None]]:
    """(name -> the short statement that binds it, name -> an import line for it or None when it is
    imported from outside the standard library, torch and numpy) at the top of a module."""
    constants: dict[str, ast.stmt] = {}
    imports: dict[str, str | None] = {}
    for n in tree.body:
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        constants[name.id] = n
        elif isinstance(n, ast.Import):
            for a in n.names:
                known = a.name.split(".")[0] in _KNOWN_MODULES
                imports[a.asname or a.name.split(".")[0]] = ast.unparse(ast.Import(names=[a])) if known else None
        elif isinstance(n, ast.ImportFrom):
            known = n.level == 0 and ((n.module or "").split(".")[0] in _KNOWN_MODULES or n.module in _HARNESS_MODULES)
            for a in n.names:
                imports[a.asname or a.name] = ast.unparse(ast.ImportFrom(module=n.module, names=[a], level=0)) if known else None
    return constants, imports


def context_or_reason(module_text: str, source: str) -> str:
    """:func:`with_context`'s code, or ``left out: <why>``."""
    try:
        tree = ast.parse(module_text)
        ast.parse(body_of(source))
    except SyntaxError:
        return _LEFT_OUT + "does not parse"
    helpers = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               and n.name != "_"}
    constants, imports = _module_names(tree)
    free = set(free_names(body_of(source)))
    if free & helpers:
        return _LEFT_OUT + "calls a function of its module: " + ", ".join(sorted(free & helpers))
    hidden = sorted(u for u in free if u in imports and imports[u] is None)
    if hidden:
        return _LEFT_OUT + "reads a name imported from the project: " + ", ".join(hidden)
    needed = sorted({id(constants[u]): constants[u] for u in free if u in constants}.values(), key=lambda n: n.lineno)
    lines = module_text.splitlines()
    head = ["\n".join(lines[n.lineno - 1:n.end_lineno]) for n in needed if n.end_lineno and n.end_lineno - n.lineno < 4]
    if len(head) != len(needed):
        return _LEFT_OUT + "reads a long constant"  # a table: not worth a drill
    head = _import_lines({imports[u] or "" for u in free if imports.get(u)}) + head
    return "\n".join([*head, "", source] if head else [source])


def _import_lines(lines: set[str]) -> list[str]:
    """``import`` lines first, then ``from`` lines, one per module: ``from torch import nn, optim``."""
    plain = sorted(i for i in lines if not i.startswith("from "))
    by_module: dict[str, list[str]] = {}
    for i in sorted(lines - set(plain)):
        module, name = i[len("from "):].split(" import ", 1)
        by_module.setdefault(module, []).append(name)
    return plain + [f"from {m} import {', '.join(names)}" for m, names in sorted(by_module.items())]


def body_of(source: str) -> str:
    """The claim's function without its decorator (which states the answer) and without comment lines."""
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
    head = [line for line in lines[:start] if not line.startswith((" ", "@", ")", "#"))
            and ("=" in line or line.startswith(("import ", "from ")))]
    return "\n".join([*head, *(line for line in lines[start:] if not line.strip().startswith("#"))]).strip("\n")


# --- what a drill shows ---------------------------------------------------------------------

_DEVICE_ARG = re.compile(r",\s*device=ctx\.device\b|\bdevice=ctx\.device,\s*|(?<=\()device=ctx\.device(?=\))|\.to\(ctx\.device\)")
_NOQA = re.compile(r"[ \t]*#[ \t]*noqa\b[^\n]*")
# what an answer that depends on the machine reads: its cores, threads, clocks, process ids, device names
MACHINE = ("cpu_count", "num_threads", "get_num_threads", "perf_counter", "monotonic", "process_time", "time",
           "getpid", "getloadavg", "get_device_name", "get_device_properties", "device_count", "sched_getaffinity",
           "compare", "ratio")


def _is_observe(node: ast.stmt) -> bool:
    call = node.value if isinstance(node, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "observe"
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "ctx")


def shown_or_reason(body: str) -> tuple[str | None, str]:
    """The claim's code without the harness (``def _(ctx):``, ``ctx.observe(...)``, ``device=ctx.device``,
    ``.to(ctx.device)``, ``# noqa``), its body dedented: (code, "") or (None, why)."""
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return None, "does not parse"
    lines = body.splitlines()
    drop = {i for n in ast.walk(tree) if isinstance(n, ast.stmt) and _is_observe(n)
            for i in range(n.lineno - 1, (n.end_lineno or n.lineno))}
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_"), None)
    if fn is not None:
        drop.add(fn.lineno - 1)
    head = [line for i, line in enumerate(lines[:fn.lineno - 1] if fn else []) if i not in drop]
    rest = [line for i, line in enumerate(lines) if i not in drop and (fn is None or i >= fn.lineno)]
    text = "\n".join([*head, *([""] if head else []), *textwrap.dedent("\n".join(rest)).splitlines()])
    text = _NOQA.sub("", _DEVICE_ARG.sub("", text)).strip("\n")
    text = re.sub(r"\n{3,}", "\n\n", text)
    try:
        shown = ast.parse(text)
    except SyntaxError:
        return None, "does not parse without its harness"
    if any(isinstance(n, ast.Name) and n.id == "ctx" for n in ast.walk(shown)):
        return None, "reads the harness (ctx) in a way a drill cannot leave out"
    return text, ""


def free_names(code: str) -> list[str]:
    """Names ``code`` reads that it neither defines nor imports and that are not builtins."""
    top = symtable.symtable(code, "<drill>", "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()
               or s.is_parameter()}
    read: set[str] = set()
    tables = [top]
    while tables:
        t = tables.pop()
        tables += t.get_children()
        read |= {s.get_name() for s in t.get_symbols() if s.is_referenced() and (t is top or s.is_global())}
    return sorted(read - defined - set(dir(builtins)))


def _reads(node: ast.AST) -> set[str]:
    """The names and attributes an expression reads."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))}


def machine_reads(expr: ast.expr | None, code: str) -> list[str]:
    """What the asked expression reads, directly or through the variables it reads, that differs by
    machine (:data:`MACHINE`); with no expression, what the whole code reads."""
    tree = ast.parse(code)
    if expr is None:
        return sorted(_reads(tree) & set(MACHINE))
    assigned: dict[str, list[ast.AST]] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                for target in ast.walk(t):
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(n.value)
    seen: set[str] = set()
    todo = _reads(expr)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for value in assigned.get(name, []):
            todo |= _reads(value) - seen
    return sorted(seen & set(MACHINE))


def segment(code: str, node: ast.expr) -> str:
    """An expression as the code writes it (``7e9``, ``0xFFFF``), on one line."""
    text = ast.get_source_segment(code, node) or ast.unparse(node)
    return re.sub(r"\s*\n\s*", " ", text)


def expressions(code: str) -> dict[str, ast.expr]:
    """Observed key -> the expression that computes it: ``return {"k": expr}``, ``ctx.observe(k=expr)``, ``d["k"] = expr``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    out: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out.setdefault(k.value, v)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "observe":
            for kw in node.keywords:
                if kw.arg:
                    out.setdefault(kw.arg, kw.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            sl = node.targets[0].slice
            if isinstance(sl, ast.Constant) and isinstance(sl.value, str):
                out.setdefault(sl.value, node.value)
    return out


def _scalars(value: Any) -> list[Any] | None:
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            inner = _scalars(v)
            if inner is None:
                return None
            out += inner
        return out
    return [value] if isinstance(value, (bool, int, float, str)) else None


def drillable(value: Any, exact: bool) -> int:
    """How good a value is to predict (0: not at all): short, and the same on every machine when ``exact``."""
    if isinstance(value, bool):
        return 5
    if isinstance(value, float) and not value.is_integer():
        return 0
    if isinstance(value, (int, float)):
        return 12 if abs(value) <= (2**27 if exact else 64) else 0
    if isinstance(value, str):
        return 8 if 0 < len(value) <= 40 and "\n" not in value and "/" not in value else 0
    if isinstance(value, (list, tuple)):
        flat = _scalars(value)
        if flat is None or len(flat) > 12 or (value and len(value) > 8):
            return 0
        if all(isinstance(v, str) for v in flat):
            return 10 if flat and all(len(v) <= 30 for v in flat) else 0
        if any(isinstance(v, float) and not v.is_integer() for v in flat):
            return 0
        return 15
    return 0


def _given(value: Any, code: str) -> bool:
    """Whether the code spells the value out (``expand(4, 3)`` for a shape of (4, 3), ``zeros(1, 128)``
    for a ``shape[1]`` of 128): nothing to predict. A small number (under 10) is everywhere in code."""
    if isinstance(value, str):
        return len(value) > 3 and value in code
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) >= 10 and re.search(rf"(?<![\w.]){value}(?![\w.])", code.replace("_", "")) is not None
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        return False
    return normalize(display(value)).strip("[]") in normalize(code).replace("[", "").replace("]", "")


def choose_key(spec: ClaimSpec, observed: Mapping[str, Any], exprs: dict[str, ast.expr], code: str = "") -> str | None:
    """The observed key to ask for: exactly expected ones first, then ones the sentence shows."""
    shown = {k: s for k, s in binding.keys(spec.statement)}
    best: tuple[int, str] | None = None
    for key, value in observed.items():
        low = key.lower()
        if low in _SKIP_KEYS or low.endswith(_SKIP_SUFFIXES) or shown.get(key) in _TIMED_SPECS:
            continue
        exp = spec.expect.get(key, None)
        exact = key in spec.expect and not (isinstance(exp, dict) and len(exp) == 1)
        quality = drillable(value, exact)
        if not quality or not (exact or key in shown) or isinstance(exprs.get(key), ast.Constant):
            continue
        if _given(value, code):
            continue
        score = quality + (100 if exact else 0) + (40 if key in shown else 0) + (20 if key in exprs else 0)
        if best is None or score > best[0]:
            best = (score, key)
    return best[1] if best else None


_TIME_NAMES = ("median_s", "min_s")
_TIME_SUFFIXES = ("_s", "_ms", "_us", "_ns")


def _names(node: ast.expr, consts: bool) -> list[str]:
    """String constants (``consts``) or variable names inside one side of a ratio, in source order."""
    subs = sorted((n for n in ast.walk(node) if isinstance(n, (ast.expr, ast.stmt))), key=lambda n: (n.lineno, n.col_offset))
    if consts:
        return [n.value for n in subs if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return [n.id for n in subs if isinstance(n, ast.Name)]


def _is_time(node: ast.expr) -> bool:
    return any(n in _TIME_NAMES or n.endswith(_TIME_SUFFIXES) for c in (True, False) for n in _names(node, c))


def _label(node: ast.expr, consts: bool) -> str | None:
    """A variant's name inside one side of a time ratio: ``t["eager"]["median_s"]`` -> eager, ``cold_s`` -> cold."""
    for name in _names(node, consts):
        if name in _TIME_NAMES or name in ("t", "r", "times", "timings", "float", "round", "min", "max"):
            continue
        for suffix in _TIME_SUFFIXES:
            name = name[: -len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name
        return name[2:] if name.startswith("t_") and len(name) > 2 else name
    return None


def ratio_labels(node: ast.expr) -> tuple[str, str] | None:
    """(slower, faster) when ``node`` is ``ratio(t, slow, fast)`` or ``t[slow]... / t[fast]...``, maybe rounded."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round" and node.args:
        return ratio_labels(node.args[0])
    if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "ratio":
        names = [a.value for a in node.args[1:3] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        return (names[0], names[1]) if len(names) == 2 else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_time(node.left) and _is_time(node.right):
        for consts in (True, False):
            a, b = _label(node.left, consts), _label(node.right, consts)
            if a and b and a != b:
                return a, b
        return None
    return None


def _faster_text(slower: str, faster: str, factor: float) -> str:
    if factor < SAME:
        return f"两者差不多：`{slower}` 的耗时是 `{faster}` 的 {factor:.2f} 倍"
    return f"`{faster}` 更快：`{slower}` 的耗时是它的 {binding.format_value(factor, 'x')}"


def _perf(spec: ClaimSpec, observed: Mapping[str, Any], exprs: dict[str, ast.expr], code: str) -> Drill | None:
    """Which is faster, by how much: a ratio the claim checks, whose two variants the code names."""
    shown = dict(binding.keys(spec.statement))
    ranked = sorted(spec.expect, key=lambda k: (shown.get(k) != "x", k not in shown))
    for key in ranked:
        value = observed.get(key)
        labels = ratio_labels(exprs[key]) if key in exprs else None
        if labels is None or isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            continue
        slow, fast = labels
        faster, factor = (fast, value) if value >= 1 else (slow, 1 / value)
        return Drill(format="faster", key=key, answer=value, options=(slow, fast), faster=faster,
                     factor=round(factor, 4), tolerance=TOLERANCE, same=factor < SAME, accept=(),
                     expr=segment(code, exprs[key]), code=code,
                     answer_text=_faster_text(slow if faster == fast else fast, faster, factor))
    return None


def _value(spec: ClaimSpec, observed: Mapping[str, Any], exprs: dict[str, ast.expr], code: str) -> Drill | None:
    key = choose_key(spec, observed, exprs, code)
    if key is None:
        return None
    value = observed[key]
    expr = segment(code, exprs[key]) if key in exprs else ""
    return Drill(format="value", key=key, answer=value, accept=tuple(accepted(value)), answer_text=display(value),
                 expr=expr if len(expr) <= 80 else "", code=code)


def _how(made: Mapping[str, Any]) -> str:
    """How the answer was obtained, for evidence made without a GPU (verify.core.states.gpu_side)."""
    targets, tools, gpus = ("、".join(part) for part in states.made_with(dict(made)))
    kind = made.get("kind")
    if kind == "compiled":
        return f"用 {tools} 把这段代码编译给 {targets}，"
    if kind == "simulated":
        return f"在 {tools} 里运行这段代码（模拟，不是 GPU），"
    if kind == "spec":
        return f"按公布的规格（{gpus}）计算，"
    return "运行这段代码，"


def prompt(drill: Drill, device: str, made: Mapping[str, Any] | None = None) -> str:
    """The question a drill asks, in Chinese; ``made``: the note of evidence made without a GPU, if it is such."""
    if drill.format == "exception":
        return "运行这段代码会抛出异常吗？会的话，写出异常类型（例如 ValueError）。"
    if drill.format == "faster" and drill.options:
        a, b = drill.options
        return (f"在测量它的机器（{device}）上，`{a}` 和 `{b}` 哪个更快？慢的一方耗时大约是快的一方的几倍？"
                "（相差不到 25% 算差不多）")
    what = f"`{drill.expr}`" if drill.expr else f"返回值里的 `{drill.key}`"
    value = drill.answer
    if isinstance(value, bool):
        hint = "（True 还是 False）"
    elif isinstance(value, (list, tuple)):
        hint = "（写成元组或列表，如 (a, b)）"
    elif isinstance(value, (int, float)):
        hint = "（字节数，一个整数）" if "byte" in drill.key.lower() else "（一个整数）"
    else:
        hint = "（一段文字，不用加引号）"
    return f"{_how(made or {})}{what} 是什么？{hint}"


def make(spec: ClaimSpec, code: str, observed: Mapping[str, Any]) -> Drill | None:
    """The drill part that depends on the claim and its observation (no provenance, no page), or None
    (the reason logged at debug level, :func:`make_or_reason`)."""
    made = make_or_reason(spec, code, observed)
    if isinstance(made, str):
        log.debug("verify: no drill for %s: %s", spec.id, made)
        return None
    return made


def make_or_reason(spec: ClaimSpec, code: str, observed: Mapping[str, Any]) -> Drill | str:
    """:func:`make`'s drill, or why there is none: a drill is kept only where the answer can be read
    from what it shows (no name it reads is defined elsewhere) and is the same on every machine."""
    raw = body_of(code)
    body, why = shown_or_reason(raw)
    if body is None:
        return why
    hidden = free_names(body)
    if hidden:
        return "reads names it does not show: " + ", ".join(hidden)
    exprs = expressions(body)
    observed = {k: v for k, v in observed.items() if k in exprs or k not in expressions(raw)}  # not ctx.observe'd
    if spec.kind == "error":
        raised = observed.get("exception")
        if not isinstance(raised, str) or ":" not in raised:
            return "no exception observed"
        kind = raised.split(":", 1)[0].strip()
        return Drill(format="exception", key="exception", answer=kind, accept=(exception_type(kind),),
                     answer_text=raised if len(raised) <= 300 else raised[:300] + " …", expr="", code=body)
    drill = _perf(spec, observed, exprs, body) if spec.kind == "perf" else None
    drill = drill or _value(spec, observed, exprs, body)
    if drill is None:
        return "no value worth asking"
    machine = machine_reads(exprs.get(drill.key), body) if drill.format == "value" else []
    if machine:
        return "its answer depends on the machine: reads " + ", ".join(machine)
    return drill
