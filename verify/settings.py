"""The project's settings: which checkout, where its cache is, and every environment variable honoured.

Built once per entry point and passed down: the site hook builds it from MkDocs'
``config_file_path``, the CLI from ``--root`` (default: the nearest ``mkdocs.yml`` upwards from
the working directory), pytest from its root. The root is never worked out from where the
``verify`` package is installed: one environment may serve several checkouts.

This is the only module of the project that reads environment variables (:data:`ENV_VARS`).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verify.errors import ClaimError

CONFIG_FILE = "mkdocs.yml"

# Every environment variable the project honours, with what it does (listed in the README too).
ENV_VARS: dict[str, str] = {
    "VERIFY_CACHE_DIR": "the project's cache folder (default: .cache in the checkout)",
    "VERIFY_DEVICE": "cpu: run claims and benchmarks on the CPU even where a GPU is present",
    "VERIFY_JOBS": "parallel workers for ordinary claims (default: up to 4, one per core)",
    "VERIFY_BENCH": "off (default), auto or force: whether a site build runs missing or stale benchmarks first",
    "VERIFY_NO_RUN": "1: a site build runs no claim and renders what the cache holds",
    "VERIFY_LIVE": "1 (set by verify serve for its server): builds show this machine's runs as they finish",
    "VERIFY_LIVE_DIR": "set by verify serve: the folder of the stamp its runs touch (default: live/ in the cache)",
    "VERIFY_GPU_TOOLS": "the folder of the pinned GPU toolchain: Triton, nvcc, numba (default: .venv/gputools)",
    "VERIFY_WORKER_MEMORY": "memory limit of one claim worker, e.g. 4GiB or 512MiB; 0 turns it off (default 4GiB)",
    "CUDA_VISIBLE_DEVICES": "which GPUs torch sees; part of the machine's fingerprint",
    "XDG_DATA_HOME": "where the terminal quiz keeps its progress (default: ~/.local/share)",
}

BENCH_MODES = ("off", "auto", "force")
DEFAULT_WORKER_MEMORY = 4 * 2**30
_SIZE_UNITS = {"": 1, "B": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "K": 2**10, "M": 2**20, "G": 2**30}


def parse_size(text: str, name: str) -> int:
    """``4GiB``, ``512MiB``, ``0`` -> bytes; :class:`SettingsError` naming the variable otherwise."""
    value = text.strip().upper().replace(" ", "")
    number = value.rstrip("KMGIB")
    unit = value[len(number):]
    if not number.isdigit() or unit not in _SIZE_UNITS:
        raise SettingsError(f"{name}={text!r}: expected a size such as 4GiB or 512MiB, or 0 for no limit")
    return int(number) * _SIZE_UNITS[unit]


class SettingsError(ClaimError):
    """No checkout could be found, or an environment variable has a value that means nothing."""


def user_data_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share``: where per-user data (quiz progress) lives."""
    value = (os.environ if environ is None else environ).get("XDG_DATA_HOME")
    return Path(value) if value else Path.home() / ".local" / "share"


def find_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds ``mkdocs.yml``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
    raise SettingsError(f"no {CONFIG_FILE} in {start} or any folder above it: run this inside a checkout "
                        f"or pass --root")


class _Under:
    """A read-only attribute: the folder ``name`` under another attribute (``root`` or ``cache_dir``)."""

    def __init__(self, base: str, name: str):
        self.base, self.name = base, name

    def __get__(self, obj: Any, owner: type | None = None) -> Path:
        return Path(getattr(obj, self.base)) / self.name


@dataclass(frozen=True)
class Settings:
    """Everything that depends on the checkout and the environment, decided once.

    Attributes:
        root: the checkout (the folder of ``mkdocs.yml``).
        cache_dir: evidence, probe, compiler and render caches.
        device: ``"cpu"`` to keep torch off a GPU; ``""`` lets torch decide.
        jobs: parallel workers for ordinary claims; ``None``: automatic.
        bench_mode: ``off``, ``auto`` or ``force`` (see :mod:`verify.bench.run`).
        run_claims: whether a site build may run claims that the cache lacks.
        live: a build of ``verify serve``'s server: claims run behind it (:mod:`verify.running.live`).
        live_folder: where ``verify serve`` and its server meet (:attr:`live_dir`); ``None``: in the cache.
        worker_memory: bytes one claim worker may allocate (its data segment); 0: no limit.
        cuda_visible: ``CUDA_VISIBLE_DEVICES`` as set when the settings were made.
        environ: the environment the settings were read from; child processes start from it.
    """

    root: Path
    cache_dir: Path
    device: str = ""
    jobs: int | None = None
    bench_mode: str = "off"
    run_claims: bool = True
    live: bool = False
    live_folder: Path | None = None
    cuda_visible: str = ""
    worker_memory: int = DEFAULT_WORKER_MEMORY
    environ: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def for_root(cls, root: Path, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings for the checkout at ``root``, reading ``environ`` (default: this process's)."""
        env = dict(os.environ if environ is None else environ)
        root = Path(root).resolve()
        if not root.is_dir():
            raise SettingsError(f"{root} is not a folder: pass the checkout (the folder of {CONFIG_FILE}) as --root")
        device = env.get("VERIFY_DEVICE", "").strip().lower()
        if device not in ("", "cpu", "cuda"):
            raise SettingsError(f"VERIFY_DEVICE={device!r}: expected cpu or cuda (or unset)")
        bench_mode = env.get("VERIFY_BENCH", "off").strip().lower() or "off"
        if bench_mode not in BENCH_MODES:
            raise SettingsError(f"VERIFY_BENCH={bench_mode!r}: expected one of {', '.join(BENCH_MODES)}")
        jobs_text = env.get("VERIFY_JOBS", "").strip()
        if jobs_text and not (jobs_text.isdigit() and int(jobs_text) > 0):
            raise SettingsError(f"VERIFY_JOBS={jobs_text!r}: expected a positive whole number")
        cache = env.get("VERIFY_CACHE_DIR")
        return cls(
            root=root,
            cache_dir=Path(cache).resolve() if cache else root / ".cache",
            device="" if device == "cuda" else device,
            jobs=int(jobs_text) if jobs_text else None,
            bench_mode=bench_mode,
            run_claims=env.get("VERIFY_NO_RUN", "").strip().lower() not in ("1", "true", "yes"),
            live=env.get("VERIFY_LIVE", "").strip().lower() in ("1", "true", "yes"),
            live_folder=Path(env["VERIFY_LIVE_DIR"]).resolve() if env.get("VERIFY_LIVE_DIR") else None,
            cuda_visible=env.get("CUDA_VISIBLE_DEVICES", ""),
            worker_memory=parse_size(env.get("VERIFY_WORKER_MEMORY", "") or str(DEFAULT_WORKER_MEMORY),
                                     "VERIFY_WORKER_MEMORY"),
            environ=env,
        )

    @classmethod
    def discover(cls, start: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings for the checkout holding ``start`` (default: the working directory)."""
        return cls.for_root(find_root(start or Path.cwd()), environ)

    @classmethod
    def for_command(cls, root: Path | None = None) -> Settings:
        """A command's settings: of its ``--root``, else of the checkout around the working directory."""
        return cls.for_root(root) if root else cls.discover()

    @classmethod
    def for_config(cls, config_file_path: str | Path) -> Settings:
        """Settings for the checkout whose ``mkdocs.yml`` this is (the site hook's entry point)."""
        return cls.for_root(Path(config_file_path).resolve().parent)

    # Folders of the checkout and the cache, as attributes (see :class:`_Under`).
    docs_dir = _Under("root", "docs")
    snippets_dir = _Under("root", "snippets")
    evidence_dir = _Under("root", "evidence")  # evidence recorded on other machines, committed
    bench_dir = _Under("root", "benchmarks")  # benchmark results per device, committed
    tmp_dir = _Under("cache_dir", "tmp")
    render_dir = _Under("cache_dir", "render")  # fence HTML and highlighted code; a build prunes what it did not use

    @property
    def live_dir(self) -> Path:
        """Where ``verify serve`` and its server meet: the stamp its runs touch, which the server watches.

        ``verify serve`` makes a folder of its own outside the cache (``VERIFY_LIVE_DIR``), so that a
        cache that cannot be written, or is deleted while serving, does not cut the server off.
        """
        return self.live_folder if self.live_folder is not None else self.cache_dir / "live"

    @property
    def live_stamp(self) -> Path:
        """Touched by ``verify serve`` each time claims have finished behind the server, which watches it."""
        return self.live_dir / "stamp"

    @property
    def live_stopped(self) -> Path:
        """Written by ``verify serve`` (one line: why) while this machine cannot run its claims; removed
        when they run again. The server's pages then say 未能在本机验证 instead of 构建机验证中."""
        return self.live_dir / "stopped"

    def child_environ(self, **extra: str) -> dict[str, str]:
        """The environment for a child process of ours: this one's, with ``extra`` on top."""
        env = dict(self.environ)
        env.update(extra)
        return env


# --- the site's settings ------------------------------------------------------------------------
# Markdown fences are called by the Markdown layer with no MkDocs config in reach. The site hook
# (MkDocs) installs the settings of the config being built; without it (Zensical ignores hooks)
# the fences find the checkout from the working directory, where both tools are started.

_site: Settings | None = None


def use_for_site(settings: Settings) -> None:
    global _site
    _site = settings


def for_site() -> Settings:
    """The settings of the site being built."""
    global _site
    if _site is None:
        _site = Settings.discover()
    return _site


# --- the site's configuration: mkdocs.yml -------------------------------------------------------
# Read here once for everything that needs what the site declares: its address and its Markdown.
# mkdocs.yml names Python objects with ``!!python/name:`` tags, which ``yaml.safe_load`` refuses and
# MkDocs' own loader imports at once; here they stay names (:class:`PythonName`) until the Markdown
# is built, so reading the site's address imports nothing of the site.


@dataclass(frozen=True)
class PythonName:
    """A ``!!python/name:module.attr`` value (or, with ``call``, ``!!python/object/apply:``), imported on use."""

    name: str
    call: bool = False
    args: tuple[Any, ...] = ()
    kwds: tuple[tuple[str, Any], ...] = ()

    def load(self) -> Any:
        import importlib  # noqa: PLC0415

        module, _, attr = self.name.rpartition(".")
        obj = getattr(importlib.import_module(module or "builtins"), attr)
        return obj(*resolve(self.args), **resolve(dict(self.kwds))) if self.call else obj


def resolve(value: Any) -> Any:
    """``value`` with every :class:`PythonName` in it imported (lists, tuples and dicts walked)."""
    if isinstance(value, PythonName):
        return value.load()
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(v) for v in value)
    return value


@dataclass(frozen=True)
class SiteConfig:
    """What ``mkdocs.yml`` declares that the project reads itself.

    Attributes:
        site_url: the site's address ending in ``/``, or None when it names none.
        extensions: the ``markdown_extensions`` it declares, in order.
        extension_configs: extension -> its options, Python names left as :class:`PythonName`.
        digest: of the two above: what a cache of rendered Markdown depends on.
    """

    site_url: str | None = None
    extensions: tuple[str, ...] = ()
    extension_configs: Mapping[str, Any] = field(default_factory=dict, compare=False)
    digest: str = ""

    def markdown(self) -> tuple[list[str], dict[str, Any]]:
        """(extensions, extension_configs) as MkDocs hands them to Python-Markdown: its built-in
        extensions first (``toc``, ``tables``, ``fenced_code``), every Python name imported."""
        try:
            from mkdocs.config.defaults import MkDocsConfig  # noqa: PLC0415  (only where Markdown is built)

            builtins = list(getattr(MkDocsConfig.markdown_extensions, "builtins", []))
        except ImportError:  # Zensical without MkDocs: the declared list alone
            builtins = []
        return list(dict.fromkeys([*builtins, *self.extensions])), resolve(dict(self.extension_configs))


def site_config(root: Path) -> SiteConfig:
    """The ``mkdocs.yml`` of the checkout at ``root``, read once while the file is unchanged; an empty
    :class:`SiteConfig` when there is none. Raises SettingsError when it is not YAML or its
    ``markdown_extensions`` are not a list of names and one-key mappings (as MkDocs requires)."""
    path = Path(root) / CONFIG_FILE
    try:
        st = path.stat()
    except OSError:
        return SiteConfig()
    return _site_config(path, st.st_mtime_ns, st.st_size, st.st_ino)


@functools.lru_cache(maxsize=8)
def _site_config(path: Path, _mtime_ns: int, _size: int, _inode: int) -> SiteConfig:
    import json  # noqa: PLC0415

    import yaml  # noqa: PLC0415  (not on the terminal's start path)

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_config_loader())  # noqa: S506  (a safe loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SettingsError(f"{path}: not readable as YAML ({exc})".replace("\n", " ")) from exc
    data = data if isinstance(data, dict) else {}
    names: list[str] = []
    configs: dict[str, Any] = {}
    declared = data.get("markdown_extensions") or []
    for item in declared.items() if isinstance(declared, dict) else declared:
        name, options = (item, None) if isinstance(item, str) else _one_key(item, path)
        names.append(name)
        if options:
            if not isinstance(options, dict):
                raise SettingsError(f"{path}: markdown_extensions: the options of {name!r} are not a mapping")
            configs[name] = options
    url = data.get("site_url")
    site_url = str(url).rstrip("/") + "/" if url else None
    digest = hashlib.sha256(json.dumps([site_url, names, configs], sort_keys=True, default=repr).encode()).hexdigest()
    return SiteConfig(site_url, tuple(names), configs, digest[:16])


def _one_key(item: Any, path: Path) -> tuple[str, Any]:
    if isinstance(item, tuple):  # an entry of a mapping of extensions
        return item
    if isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item)), str):
        return next(iter(item.items()))
    raise SettingsError(f"{path}: markdown_extensions: {item!r} is neither a name nor a one-key mapping")


@functools.cache
def _config_loader() -> type:
    """PyYAML's safe loader, plus what mkdocs.yml may hold: Python names kept as names, ``!ENV``
    read from the environment, MkDocs' other tags (``!relative``) taken as their plain value."""
    import yaml  # noqa: PLC0415

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    def plain(loader: Any, node: Any) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_mapping(node, deep=True)

    def name(loader: Any, suffix: str, node: Any) -> PythonName:
        return PythonName(suffix)

    def apply(loader: Any, suffix: str, node: Any) -> PythonName:
        value = plain(loader, node)
        args, kwds = (value, {}) if isinstance(value, list) else (value.get("args", []), value.get("kwds", {})) \
            if isinstance(value, dict) else ([], {})
        return PythonName(suffix, True, tuple(args), tuple(sorted(kwds.items())))

    def env(loader: Any, node: Any) -> Any:
        names = plain(loader, node)
        names = names if isinstance(names, list) else [names]
        for n in names[:-1] if len(names) > 1 else names:
            if os.environ.get(str(n)) is not None:
                return yaml.safe_load(os.environ[str(n)])
        return names[-1] if len(names) > 1 else None

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", name)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/object/apply:", apply)
    Loader.add_constructor("!ENV", env)
    Loader.add_multi_constructor("!", lambda loader, _suffix, node: plain(loader, node))
    return Loader
