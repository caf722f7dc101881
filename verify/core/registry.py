"""Find every claim in ``snippets/`` by reading the source, never by importing it.

Reading with ``ast`` keeps listing claims, checking pages and building the quiz free of torch,
and lets the registry hash exactly the files a snippet depends on.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from verify.claim import KINDS
from verify.core import measuring
from verify.errors import ClaimError, Failure
from verify.core.needs import NEEDS
from verify.core.records import JsonObject

_FIELDS = {"question", "statement", "expect", "raises", "kind", "needs", "min_torch", "timeout"}


@dataclass(frozen=True)
class ClaimSpec:
    """A claim as declared in a snippet file."""

    id: str
    question: str
    statement: str
    kind: str
    snippet: str  # path relative to the project root, with forward slashes
    line: int
    expect: JsonObject = field(default_factory=dict)  # key -> expected value or matcher, as declared
    raises: tuple[str, str] | None = None
    needs: tuple[str, ...] = ()
    min_torch: str | None = None
    timeout: float | None = None
    #: the claim function's docstring: what it measures, in a few words, read where nothing has observed
    #: it (a GPU claim on a CPU build) instead of a sentence with holes; like the statement, not keyed
    pending: str = ""
    #: the model, shapes or library the claim ran on, where its sentence could be read wider (a docstring
    #: line ``范围：Mixtral 8x7B 的专家形状``); shown with the backend in the page's scope tag (verify.core.scope)
    scope: str = ""

    def expected_summary(self) -> JsonObject:
        if self.raises:
            return {"raises": list(self.raises)}
        return dict(self.expect)


@dataclass
class Registry:
    root: Path
    claims: dict[str, ClaimSpec]
    keys: dict[str, str]  # claim id -> the key of its measuring code (see verify.core.measuring)
    problems: list[Failure]
    #: snippet files that compile (themselves or through a module they import): see FileFacts.compiles
    compiles: frozenset[str] = frozenset()

    def key(self, claim_id: str) -> str:
        return self.keys[claim_id]

    def by_file(self) -> dict[str, list[ClaimSpec]]:
        out: dict[str, list[ClaimSpec]] = {}
        for spec in self.claims.values():
            out.setdefault(spec.snippet, []).append(spec)
        for specs in out.values():
            specs.sort(key=lambda s: s.line)
        return out


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments, so ``question=Q`` can be read statically."""
    consts: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return consts


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Pow: lambda a, b: a**b}


def _literal(node: ast.expr, consts: dict[str, Any]) -> Any:
    """A literal, a module constant, or arithmetic on them (``[[1, 2, 3]] * 4``, ``4096 * 1024``)."""
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_literal(node.left, consts), _literal(node.right, consts))
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e, consts) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict) and None not in node.keys:
        keys = [_literal(k, consts) for k in node.keys]  # type: ignore[arg-type]
        twice = sorted({str(k) for k in keys if keys.count(k) > 1})
        if twice:  # Python would keep the last silently: an expectation written twice checks only one of them
            raise ValueError(f"key(s) {twice} given twice in one dict (line {node.lineno})")
        return dict(zip(keys, (_literal(v, consts) for v in node.values)))
    return ast.literal_eval(node)


def _parse_claim(call: ast.Call, rel: str, consts: dict[str, Any], pending: str = "") -> ClaimSpec:
    where = f"{rel}:{call.lineno}"
    if len(call.args) != 1:
        raise ClaimError(f"{where}: @claim takes exactly one positional argument, the claim id")
    try:
        claim_id = _literal(call.args[0], consts)
        kwargs = {kw.arg: _literal(kw.value, consts) for kw in call.keywords if kw.arg}
    except (ValueError, TypeError) as exc:
        raise ClaimError(f"{where}: every @claim argument must be a literal or a module-level literal constant "
                         f"({exc})") from None
    if not isinstance(claim_id, str) or "." not in claim_id or " " in claim_id:
        raise ClaimError(f"{where}: claim id {claim_id!r} must look like 'topic.what' without spaces")
    unknown = set(kwargs) - _FIELDS
    if unknown:
        raise ClaimError(f"{where}: claim {claim_id}: unknown field(s) {sorted(unknown)}")
    for required in ("question", "statement"):
        if not isinstance(kwargs.get(required), str) or not kwargs[required].strip():
            raise ClaimError(f"{where}: claim {claim_id}: field '{required}' is required (a non-empty string)")
    raises = kwargs.get("raises")
    if raises is not None and (len(raises) != 2 or not all(isinstance(x, str) for x in raises)):
        raise ClaimError(f"{where}: claim {claim_id}: field 'raises' must be (type name, message fragment)")
    kind = kwargs.get("kind") or ("error" if raises else "fact")
    if kind not in KINDS:
        raise ClaimError(f"{where}: claim {claim_id}: kind {kind!r} is not one of {KINDS}")
    if kind == "error" and not raises:
        raise ClaimError(f"{where}: claim {claim_id}: kind 'error' needs raises=(type, fragment)")
    expect = kwargs.get("expect") or {}
    if not isinstance(expect, dict):
        raise ClaimError(f"{where}: claim {claim_id}: field 'expect' must be a dict")
    if kind != "error" and not expect:
        raise ClaimError(f"{where}: claim {claim_id}: a {kind} claim needs expect={{...}}")
    needs = tuple(kwargs.get("needs") or ())
    bad = [n for n in needs if n not in NEEDS]
    if bad:
        raise ClaimError(f"{where}: claim {claim_id}: unknown need(s) {bad}; known: {sorted(NEEDS)}")
    return ClaimSpec(
        id=claim_id,
        question=kwargs["question"],
        statement=kwargs["statement"].strip(),
        kind=kind,
        snippet=rel,
        line=call.lineno,
        expect=expect,
        raises=tuple(raises) if raises else None,
        needs=needs,
        min_torch=kwargs.get("min_torch"),
        timeout=kwargs.get("timeout"),
        pending=" ".join(_without_scope(pending).split()),
        scope=_scope_line(pending),
    )


_SCOPE = re.compile(r"^\s*范围[：:]\s*(.+?)\s*$", re.M)


def _scope_line(doc: str) -> str:
    """The ``范围：…`` line of a claim function's docstring (its declared scope), or ``""``."""
    found = _SCOPE.search(doc)
    return found.group(1)[:80] if found else ""


def _without_scope(doc: str) -> str:
    return _SCOPE.sub("", doc)


def _local_imports(tree: ast.Module, root: Path) -> list[Path]:
    """Project files (under verify/ or snippets/) that a module imports."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
    found: list[Path] = []
    for name in names:
        if not name.startswith(("verify", "snippets")):
            continue
        base = root.joinpath(*name.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                found.append(candidate)
    return found


def _referenced_files(tree: ast.Module, here: Path, itself: str) -> list[Path]:
    """Files beside the snippet that it names in a string literal: C++ sources, data, and the Python files it
    loads by path (``snippets/_sibling.py``: snippet folders are not packages, so no import statement names them)."""
    beside = {p.name for p in here.iterdir() if p.is_file() and p.name != itself}
    names = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return [here / name for name in sorted(names & beside)]


@dataclass(frozen=True)
class FileFacts:
    """What :func:`analyse` finds in one file: what its keys are made from, its claims, where its code is.

    :meth:`to_json` is its entry in the scan cache (``verify.storage.scan``).
    """

    sha: str  # of the file's bytes
    measure_sha: str  # of its measuring text (see verify.core.measuring); the bytes' hash for a file that is not Python
    measure: dict[str, str] = field(default_factory=dict)  # claim id -> hash of its part of the measuring text
    imports: tuple[str, ...] = ()  # project modules it imports, relative to the root
    named: tuple[str, ...] = ()  # files beside it that it names
    claims: tuple[ClaimSpec, ...] = ()  # by line
    problems: tuple[tuple[str, str], ...] = ()  # (claim id or "-", message)
    functions: tuple[tuple[int, int, int], ...] = ()  # decorated functions: (first decorator, def, last line)
    compiles: bool = False  # it names torch.compile, Dynamo or Inductor: its workers may start with them loaded

    def get(self, name: str, default: Any = None) -> Any:
        """A fact by name, for readers of the cache's former dict entries (``verify.quiz.claims``)."""
        return getattr(self, name, default)

    def to_json(self) -> JsonObject:
        return {"sha": self.sha, "measure_sha": self.measure_sha, "measure": dict(self.measure),
                "imports": list(self.imports), "named": list(self.named),
                "claims": [dataclasses.asdict(c) for c in self.claims],
                "problems": [list(p) for p in self.problems], "functions": [list(f) for f in self.functions],
                "compiles": self.compiles}

    @classmethod
    def from_json(cls, data: JsonObject) -> FileFacts:
        """An entry of the scan cache; ``KeyError``/``TypeError``/``ValueError`` when it is not one."""
        return cls(
            sha=str(data["sha"]), measure_sha=str(data["measure_sha"]), measure=dict(data["measure"]),
            imports=tuple(data["imports"]), named=tuple(data["named"]),
            claims=tuple(ClaimSpec(**dict(c, raises=tuple(c["raises"]) if c["raises"] else None,
                                          needs=tuple(c["needs"]))) for c in data["claims"]),
            problems=tuple((str(cid), str(message)) for cid, message in data["problems"]),
            functions=tuple((int(a), int(b), int(c)) for a, b, c in data["functions"]), compiles=bool(data["compiles"]))


class Facts(Protocol):
    """Per-file facts (:func:`analyse`), remembered by whoever holds them (``verify.storage.scan``)."""

    root: Path

    def get(self, path: Path) -> FileFacts: ...

    def save(self) -> None: ...


def analyse(path: Path, root: Path) -> FileFacts:
    """Content hash, project imports, files named beside it, and (for snippets) its claims."""
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if path.suffix != ".py":
        return FileFacts(sha, sha)
    rel = path.relative_to(root).as_posix()
    try:
        tree = ast.parse(data, filename=rel)
    except SyntaxError as exc:
        return FileFacts(sha, sha, problems=(("-", f"syntax error at line {exc.lineno}: {exc.msg}"),))
    text = data.decode()
    consts = _module_constants(tree)
    claims: list[ClaimSpec] = []
    problems: list[tuple[str, str]] = []
    functions: list[tuple[int, int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.decorator_list:  # where a claim's code is, for the page to show it without parsing again
            functions.append((min(d.lineno for d in node.decorator_list), node.lineno, node.end_lineno or node.lineno))
        for deco in node.decorator_list:
            call = measuring.claim_call(deco)
            if call is None:
                continue
            try:
                claims.append(_parse_claim(call, rel, consts, ast.get_docstring(node) or ""))
            except ClaimError as exc:
                problems.append(("-", str(exc)))
    claims.sort(key=lambda c: c.line)
    kinds = {c.id: c.kind for c in claims}
    return FileFacts(
        sha=sha,
        measure_sha=_sha(measuring.module_text(rel, text, tree)),
        measure={cid: _sha(t) for cid, t in measuring.claim_texts(text, tree, kinds).items()},
        imports=tuple(p.relative_to(root).as_posix() for p in _local_imports(tree, root)),
        named=tuple(p.relative_to(root).as_posix() for p in _referenced_files(tree, path.parent, path.name)),
        claims=tuple(claims), problems=tuple(problems), functions=tuple(functions),
        compiles=_compiles(tree))


_COMPILER = ("compile", "_dynamo", "_inductor")


def _compiles(tree: ast.Module) -> bool:
    """Whether the module's code (not its comments or docstrings) names ``torch.compile``, Dynamo or Inductor."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in _COMPILER and isinstance(node.value, ast.Name) \
                and node.value.id == "torch":
            return True
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(n.split(".")[:2] in (["torch", "_dynamo"], ["torch", "_inductor"]) for n in names):
            return True
    return False


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _depends(path: Path, facts: Facts, follow: Callable[[str], bool] | None,
             seen: dict[str, FileFacts]) -> dict[str, FileFacts]:
    """The facts of a file, the project modules it imports (transitively) and the files it names."""
    root = facts.root

    def get(rel: str) -> FileFacts:
        if rel not in seen:
            seen[rel] = facts.get(root / rel)
        return seen[rel]

    first = path.resolve().relative_to(root).as_posix()
    out: dict[str, FileFacts] = {first: get(first)}
    todo = [*out[first].imports, *out[first].named]
    while todo:
        rel = todo.pop()
        if rel in out or (follow and not follow(rel)):
            continue
        out[rel] = get(rel)
        todo += [*out[rel].imports, *out[rel].named]  # a data file a helper reads keys its claims too
    return out  # the caller saves the facts once: a save per file rewrote the scan cache 439 times in a cold scan


def _digest(parts: dict[str, str], prefix: str = "") -> str:
    digest = hashlib.sha256(prefix.encode())
    for rel in sorted(parts):
        digest.update(f"{rel}\0{parts[rel]}\0".encode())
    return digest.hexdigest()[:16]


def source_key(path: Path, facts: Facts, follow: Callable[[str], bool] | None = None) -> str:
    """The key of a whole file's measuring code, what it imports (transitively) and the files it names.

    What stored benchmark results are keyed by: a benchmark file counts whole, less comments and
    docstrings. ``follow`` (a path relative to the root -> bool) limits which imported modules count.
    """
    files = _depends(path, facts, follow, {})
    facts.save()
    return _digest({rel: e.measure_sha for rel, e in files.items()}, "measure\0")


def claim_keys(path: Path, facts: Facts, seen: dict[str, FileFacts] | None = None) -> dict[str, str]:
    """Claim id -> the key of its measuring code: its part of the snippet, what that imports and names.

    Imported Python modules count by their measuring text, files named beside the snippet (C++
    sources) by their bytes; see :mod:`verify.core.measuring`.
    """
    files = _depends(path, facts, None, {} if seen is None else seen)
    first = path.resolve().relative_to(facts.root).as_posix()
    rest = {rel: e.measure_sha for rel, e in files.items() if rel != first}
    return {cid: _digest({**rest, first: m}, "measure\0") for cid, m in files[first].measure.items()}


def load(facts: Facts, snippets_dir: str = "snippets") -> Registry:
    """Every claim under ``snippets/``; problems are collected instead of stopping at the first."""
    root = facts.root
    claims: dict[str, ClaimSpec] = {}
    keys: dict[str, str] = {}
    problems: list[Failure] = []
    seen: dict[str, FileFacts] = {}
    compiles: set[str] = set()
    for path in sorted((root / snippets_dir).rglob("*.py")):
        if path.name.startswith("_"):
            continue
        rel = path.relative_to(root).as_posix()
        entry = seen[rel] = facts.get(path)
        problems += [Failure(cid, rel, message, snippet=rel) for cid, message in entry.problems]
        for spec in entry.claims:
            if spec.id in claims:
                other = claims[spec.id]
                problems.append(Failure(spec.id, rel, f"duplicate claim id: declared at {other.snippet}:{other.line} "
                                        f"and {rel}:{spec.line}", snippet=rel))
                continue
            claims[spec.id] = spec
        if entry.claims:
            keys.update({cid: k for cid, k in claim_keys(path, facts, seen).items()
                         if claims.get(cid) is not None and claims[cid].snippet == rel})
            if any(f.compiles for f in _depends(path, facts, None, seen).values()):
                compiles.add(rel)
    facts.save()
    return Registry(root=root, claims=claims, keys=keys, problems=problems, compiles=frozenset(compiles))
