"""Find every claim in ``snippets/`` by reading the source, never by importing it.

Reading with ``ast`` keeps listing claims, checking pages and building the quiz free of torch,
and lets the registry hash exactly the files a snippet depends on.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from verify.claim import KINDS
from verify.core import measuring
from verify.errors import ClaimError, Failure
from verify.core.needs import NEEDS

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
    expect: dict[str, Any] = field(default_factory=dict)
    raises: tuple[str, str] | None = None
    needs: tuple[str, ...] = ()
    min_torch: str | None = None
    timeout: float | None = None

    def expected_summary(self) -> dict[str, Any]:
        if self.raises:
            return {"raises": list(self.raises)}
        return dict(self.expect)


@dataclass
class Registry:
    root: Path
    claims: dict[str, ClaimSpec]
    keys: dict[str, str]  # claim id -> the key of its measuring code (see verify.core.measuring)
    problems: list[Failure]

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
        return {_literal(k, consts): _literal(v, consts) for k, v in zip(node.keys, node.values)}  # type: ignore[arg-type]
    return ast.literal_eval(node)


def _parse_claim(call: ast.Call, rel: str, consts: dict[str, Any]) -> ClaimSpec:
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
    )


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


def _referenced_files(tree: ast.Module, here: Path) -> list[Path]:
    """Files beside the snippet that it names in a string literal (C++ sources, data)."""
    beside = {p.name for p in here.iterdir() if p.is_file() and p.suffix != ".py"}
    names = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return [here / name for name in sorted(names & beside)]


class Facts(Protocol):
    """Per-file facts (:func:`analyse`), remembered by whoever holds them (``verify.storage.scan``)."""

    root: Path

    def get(self, path: Path) -> dict[str, Any]: ...

    def save(self) -> None: ...


def analyse(path: Path, root: Path) -> dict[str, Any]:
    """Content hash, project imports, files named beside it, and (for snippets) its claims."""
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    entry: dict[str, Any] = {"sha": sha, "measure_sha": sha, "measure": {}, "imports": [], "named": [],
                             "claims": [], "problems": [], "functions": []}
    if path.suffix != ".py":
        return entry
    rel = path.relative_to(root).as_posix()
    try:
        tree = ast.parse(data, filename=rel)
    except SyntaxError as exc:
        entry["problems"].append(["-", f"syntax error at line {exc.lineno}: {exc.msg}"])
        return entry
    text = data.decode()
    entry["measure_sha"] = _sha(measuring.module_text(rel, text, tree))
    entry["imports"] = [p.relative_to(root).as_posix() for p in _local_imports(tree, root)]
    entry["named"] = [p.relative_to(root).as_posix() for p in _referenced_files(tree, path.parent)]
    consts = _module_constants(tree)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.decorator_list:  # where a claim's code is, for the page to show it without parsing again
            entry["functions"].append([min(d.lineno for d in node.decorator_list), node.lineno, node.end_lineno])
        for deco in node.decorator_list:
            call = measuring.claim_call(deco)
            if call is None:
                continue
            try:
                entry["claims"].append(dataclasses.asdict(_parse_claim(call, rel, consts)))
            except ClaimError as exc:
                entry["problems"].append(["-", str(exc)])
    entry["claims"].sort(key=lambda c: c["line"])
    kinds = {c["id"]: c["kind"] for c in entry["claims"]}
    entry["measure"] = {cid: _sha(t) for cid, t in measuring.claim_texts(text, tree, kinds).items()}
    return entry


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _spec(d: dict[str, Any]) -> ClaimSpec:
    return ClaimSpec(**dict(d, raises=tuple(d["raises"]) if d["raises"] else None, needs=tuple(d["needs"])))


def _depends(path: Path, facts: Facts, follow: Callable[[str], bool] | None,
             seen: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The facts of a file, the project modules it imports (transitively) and the files it names."""
    root = facts.root

    def get(rel: str) -> dict[str, Any]:
        if rel not in seen:
            seen[rel] = facts.get(root / rel)
        return seen[rel]

    first = path.resolve().relative_to(root).as_posix()
    out: dict[str, dict[str, Any]] = {first: get(first)}
    todo = [*out[first]["imports"], *out[first]["named"]]
    while todo:
        rel = todo.pop()
        if rel in out or (follow and not follow(rel)):
            continue
        out[rel] = get(rel)
        todo += out[rel]["imports"]
    facts.save()
    return out


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
    return _digest({rel: e["measure_sha"] for rel, e in files.items()}, "measure\0")


def claim_keys(path: Path, facts: Facts, seen: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """Claim id -> the key of its measuring code: its part of the snippet, what that imports and names.

    Imported Python modules count by their measuring text, files named beside the snippet (C++
    sources) by their bytes; see :mod:`verify.core.measuring`.
    """
    files = _depends(path, facts, None, {} if seen is None else seen)
    first = path.resolve().relative_to(facts.root).as_posix()
    rest = {rel: e["measure_sha"] for rel, e in files.items() if rel != first}
    return {cid: _digest({**rest, first: m}, "measure\0") for cid, m in files[first]["measure"].items()}


def load(facts: Facts, snippets_dir: str = "snippets") -> Registry:
    """Every claim under ``snippets/``; problems are collected instead of stopping at the first."""
    root = facts.root
    claims: dict[str, ClaimSpec] = {}
    keys: dict[str, str] = {}
    problems: list[Failure] = []
    seen: dict[str, dict[str, Any]] = {}
    for path in sorted((root / snippets_dir).rglob("*.py")):
        if path.name.startswith("_"):
            continue
        rel = path.relative_to(root).as_posix()
        entry = seen[rel] = facts.get(path)
        problems += [Failure(cid, rel, message, snippet=rel) for cid, message in entry["problems"]]
        for data in entry["claims"]:
            spec = _spec(data)
            if spec.id in claims:
                other = claims[spec.id]
                problems.append(Failure(spec.id, rel, f"duplicate claim id: declared at {other.snippet}:{other.line} "
                                        f"and {rel}:{spec.line}", snippet=rel))
                continue
            claims[spec.id] = spec
        if entry["claims"]:
            keys.update({cid: k for cid, k in claim_keys(path, facts, seen).items()
                         if claims.get(cid) is not None and claims[cid].snippet == rel})
    facts.save()
    return Registry(root=root, claims=claims, keys=keys, problems=problems)
