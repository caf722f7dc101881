"""The project's one g++ builder: a program built once per source, flags and compiler, kept in the cache.

:func:`build` copies the sources into a fresh folder under ``<cache>/cxx/``, runs g++ there and publishes
the folder under its key with ``os.replace``: a reader sees a whole build or none, and of two processes
building the same key at once, the second finds the first one's folder and drops its own. The key is
the SHA-256 of the sources' names and bytes, the flags (every g++ command line) and the compiler's
version line (``g++ --version``): a changed header, flag or compiler builds again; the same inputs reuse
the folder without running g++.

:func:`build_steps` runs several g++ commands in one folder (objects, dumps, more than one program) under
one key; :func:`build` is its one-program case and returns the executable. A compile error raises
:class:`BuildError` with g++'s messages (capped). :func:`outcome` is for a command that is meant to fail (a
file the compiler must refuse, a link that must not resolve): it returns how g++ ended, kept under its own key
like a build. Code that compiles untrusted source passes a ``runner`` (the judge runs g++ under its sandbox's
limits: :mod:`verify.judge.cpp`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: the language level and warnings every build gets
STD = ("-std=c++17", "-Wall", "-Wextra")
#: AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer; a UB report stops the program
ASAN_UBSAN = ("-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined", "-g",
              "-O1")
TSAN = ("-fsanitize=thread", "-g", "-O1")
#: characters of g++'s messages an error carries
ERROR_CAP = 4000
COMPILER = "g++"
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".C")
READY = ".built"  # written last in a build folder: the folder is whole
OUTCOME = "outcome.json"  # what outcome() keeps: the exit status and the messages
#: characters of g++'s messages outcome() keeps
OUTCOME_CAP = 20000


class BuildError(RuntimeError):
    """g++ refused the sources (or ran out of time): ``output`` holds its messages, capped."""

    def __init__(self, message: str, output: str = "", returncode: int = 1, timed_out: bool = False):
        super().__init__(message)
        self.output, self.returncode, self.timed_out = output, returncode, timed_out


@dataclass(frozen=True)
class Ran:
    """How one g++ command ended."""

    returncode: int
    output: str
    timed_out: bool = False


#: runs ``argv`` in ``folder`` within ``timeout`` seconds
Runner = Callable[[list[str], Path, float], Ran]


def run_plain(argv: list[str], folder: Path, timeout: float) -> Ran:
    """The default runner: g++ as a child in its own process group, killed as a group past ``timeout``."""
    proc = subprocess.Popen(argv, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return Ran(proc.returncode, out.decode("utf-8", "replace"))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return Ran(proc.returncode, out.decode("utf-8", "replace"), timed_out=True)


@functools.cache
def compiler_version(compiler: str = COMPILER) -> str:
    """The first line of ``g++ --version`` (``g++ (Debian 12.2.0-14) 12.2.0``): part of every key."""
    done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.splitlines()[0].strip()


def cache_root() -> Path:
    """``cxx/`` in the project's cache folder (``VERIFY_CACHE_DIR``, else ``.cache`` in the checkout)."""
    from verify.settings import Settings  # noqa: PLC0415

    return Settings.for_root(Path(__file__).resolve().parent.parent).cache_dir / "cxx"


Sources = Mapping[str, bytes | Path] | Sequence[Path]


def _read(sources: Sources) -> dict[str, bytes]:
    """Each source by the name it gets in the build folder: a path keeps its own name."""
    items = sources.items() if isinstance(sources, Mapping) else ((Path(p).name, Path(p)) for p in sources)
    out: dict[str, bytes] = {}
    for name, src in items:
        if "/" in name or name in ("", ".", "..") or name.startswith(".") or name in out:
            raise ValueError(f"a source's name must be one plain, unique file name: {name!r}")
        out[name] = src if isinstance(src, bytes) else Path(src).read_bytes()
    return out


def key(sources: Mapping[str, bytes], steps: Sequence[Sequence[str]], version: str, kept: str = "") -> str:
    """What a build depends on: the sources' names and bytes, every g++ command line, the compiler (and for
    :func:`outcome`, that its result is what is kept)."""
    files = sorted((n, hashlib.sha256(b).hexdigest()) for n, b in sources.items())
    what = {"files": files, "steps": [list(s) for s in steps], "compiler": version} | ({"kept": kept} if kept else {})
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]


def build_steps(sources: Sources, steps: Sequence[Sequence[str]], *, cache: Path | None = None,
                runner: Runner | None = None, timeout: float = 300.0, version: str | None = None) -> Path:
    """The folder where each step (g++'s arguments, run in the folder holding the sources) has run, built
    once per key. A step that fails raises :class:`BuildError` and publishes nothing."""
    return _publish(_read(sources), steps, cache, runner, timeout, version, keep=False)


def outcome(sources: Sources, step: Sequence[str], *, cache: Path | None = None, runner: Runner | None = None,
            timeout: float = 300.0, version: str | None = None) -> Ran:
    """How one g++ command that may fail ended (its exit status and messages, up to :data:`OUTCOME_CAP`
    characters), run once per key: a compile error is the result here, not an exception. A command past
    ``timeout`` still raises :class:`BuildError` (nothing is kept)."""
    folder = _publish(_read(sources), [step], cache, runner, timeout, version, keep=True)
    kept = json.loads((folder / OUTCOME).read_text(encoding="utf-8"))
    return Ran(kept["returncode"], kept["output"])


def _publish(files: dict[str, bytes], steps: Sequence[Sequence[str]], cache: Path | None, runner: Runner | None,
             timeout: float, version: str | None, keep: bool) -> Path:
    version = version if version is not None else compiler_version()
    base = cache if cache is not None else cache_root()
    final = base / key(files, steps, version, OUTCOME if keep else "")
    if (final / READY).is_file():
        return final
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="tmp-", dir=base))
    try:
        for name, data in files.items():
            (work / name).write_bytes(data)
        for step in steps:
            ran = (runner or run_plain)([COMPILER, *step], work, timeout)
            if ran.timed_out or (ran.returncode != 0 and not keep):
                what = f"超过 {timeout:g} 秒没有编译完" if ran.timed_out else f"g++ 失败（退出码 {ran.returncode}）"
                raise BuildError(f"{what}：\n{ran.output[:ERROR_CAP]}", ran.output[:ERROR_CAP], ran.returncode,
                                 ran.timed_out)
            if keep:
                kept = {"returncode": ran.returncode, "output": ran.output[:OUTCOME_CAP]}
                (work / OUTCOME).write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
        (work / READY).write_text(version + "\n", encoding="utf-8")
        try:
            os.replace(work, final)
        except OSError:  # another process published this key first (a folder replaces only an empty one)
            if not (final / READY).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def build(sources: Sources, flags: Sequence[str] = (), *, name: str = "prog", link: Sequence[str] = (),
          std: Sequence[str] = STD, cache: Path | None = None, runner: Runner | None = None, timeout: float = 300.0,
          version: str | None = None) -> Path:
    """The executable ``name`` built from ``sources`` (the ``.cpp`` ones compiled, in order, the others beside
    them for ``#include``) with ``std`` and ``flags``; ``link``: arguments after the sources (``-lc10``)."""
    files = _read(sources)
    units = [n for n in files if n.endswith(SOURCE_SUFFIXES)]
    if not units:
        raise ValueError("no .cpp among the sources")
    step = [*std, *flags, *units, "-o", name, *link]
    return build_steps(files, [step], cache=cache, runner=runner, timeout=timeout, version=version) / name
