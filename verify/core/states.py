"""What a reader is told about a claim's evidence, as data: one row per state.

Every face reads this table: the page's badges, markers and bound values (their words and their
CSS tone), the ledger's filter, the evidence lists' counts, the quiz (which values it may quote as
observed), and the terminal's colours. A new kind of evidence (compiled for a GPU architecture,
run in a simulator, computed from published specs) is a new row here plus the rule in
:func:`verify.core.evidence.status_of` that gives it; the templates and the CSS need nothing new,
since a row picks one of the CSS tones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

#: the CSS tones a state may take (docs/assets/verify.css styles .vf-<tone>)
TONES = ("ok", "derived", "stale", "cuda", "none", "fail")


@dataclass(frozen=True)
class State:
    key: str  # what pages, evidence.json and tests carry (data-status)
    label: str  # the full words: a badge, a marker's title, the ledger's filter, the counts
    mark: str  # the short word after a sentence
    tone: str  # one of TONES
    observed: bool  # its values are shown as observed (no note beside a bound value; the quiz quotes them)
    ran: str  # where its evidence was made: "here" (the build machine), "elsewhere", "" (nowhere yet)
    colour: str  # the terminal's colour for it
    live_label: str = ""  # under verify serve, where it differs (a claim about to run here)
    #: under verify serve while this machine cannot run claims (its cache cannot be written), where it differs
    stopped_label: str = ""
    #: the words before what a claim measures where nothing has observed it (``GPU 上待测：…``); "" for the label
    waiting: str = ""
    #: for a kind of passing evidence: which current, passing records it names (record -> bool);
    #: a record none of them names is plain ran-here or recorded-elsewhere evidence
    rule: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)
    #: words after the short mark taken from the record itself (`` · sm_90a · ptxas 13.0``)
    detail: Callable[[Any], str] | None = field(default=None, compare=False, repr=False)

    def words(self, live: str) -> State:
        """This row as a build in ``live`` mode shows it: ``""`` (a site build), :data:`LIVE_RUNNING` or
        :data:`LIVE_STOPPED` (``verify serve``, whose runner runs this machine's claims, or cannot)."""
        text = self.stopped_label if live == LIVE_STOPPED else self.live_label if live else ""
        return replace(self, label=text, mark=text) if text else self

    def mark_of(self, record: Any) -> str:
        """The short word after a sentence, with the record's own details where the state has them."""
        return self.mark + (self.detail(record) if self.detail is not None and record is not None else "")

    def __post_init__(self) -> None:
        if self.tone not in TONES:
            raise ValueError(f"state {self.key}: tone {self.tone!r} is not one of {', '.join(TONES)}")
        if self.ran not in ("here", "elsewhere", ""):
            raise ValueError(f"state {self.key}: ran must be 'here', 'elsewhere' or ''")


STATES: dict[str, State] = {}

#: How a ``verify serve`` build shows a claim that has not run here: its runner is running this
#: machine's claims (构建机验证中), or cannot (未能在本机验证: the cache cannot be written).
LIVE_RUNNING = "running"
LIVE_STOPPED = "stopped"


def register(state: State) -> State:
    """Add a state (or replace the one with its key); the order of registration is the order shown."""
    STATES[state.key] = state
    return state


def of_pass(record: Any, here: bool) -> str:
    """The state of a current, passing record: the first kind whose rule names it, else plain evidence."""
    ran = "here" if here else "elsewhere"
    for row in STATES.values():
        if row.rule is not None and row.ran == ran and row.rule(record):
            return row.key
    return VERIFIED_HERE if here else VERIFIED_ELSEWHERE


def observed(key: str) -> bool:
    """Whether a record in this state is shown with its values (verified evidence of some kind)."""
    return get(key).observed


def verified_here(key: str) -> bool:
    """Whether a record in this state is evidence made on the build machine, with its values."""
    row = get(key)
    return row.ran == "here" and row.observed


def get(key: str) -> State:
    try:
        return STATES[key]
    except KeyError:
        raise KeyError(f"no state {key!r} (known: {', '.join(STATES)})") from None


VERIFIED_HERE = register(State("verified-here", "已验证（构建本站的机器上运行）", "构建机已验证", "ok", True, "here", "green")).key
VERIFIED_ELSEWHERE = register(State("verified-elsewhere", "已验证（记录自另一台机器）", "他机已验证", "ok", True,
                                    "elsewhere", "green")).key
STALE = register(State("stale", "记录已过期", "已过期", "stale", False, "", "yellow")).key
NEEDS_CUDA = register(State("needs-cuda", "需要 CUDA，构建机上未运行", "需 CUDA", "cuda", False, "", "yellow",
                            waiting="GPU 上待测")).key
NOT_APPLICABLE = register(State("not-applicable", "构建机不适用（缺少论断声明的条件）", "构建机不适用", "none", False, "",
                                "yellow")).key
NOT_RUN = register(State("not-run", "未运行", "未运行", "none", False, "", "yellow", live_label="构建机验证中",
                         stopped_label="未能在本机验证")).key
FAILED = register(State("failed", "失败", "失败", "fail", False, "", "red")).key


# --- evidence made without a GPU about a GPU (verify.toolchain; snippets/_gpu) ------------------------
# A claim's helper writes what it did into the observation ``evidence``: its kind, the GPU
# architectures it compiled for, the tools and their versions, the GPU whose published specs it used.

#: observation keys that say how the evidence was made (the helper's note, the specs' documents), not what was seen
HOW_KEYS = ("evidence", "sources")


def measured(observed: dict[str, Any]) -> dict[str, Any]:
    """The observed values without the keys that say how they were obtained (shown with the provenance)."""
    return {k: v for k, v in observed.items() if k not in HOW_KEYS}


def made_with(note: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """A note's targets, tools with their versions (``nvcc 13.0.88``) and GPUs, as a reader reads them."""
    return ([str(t) for t in note.get("targets") or ()], [f"{t} {v}" for t, v in (note.get("tools") or {}).items()],
            [str(g) for g in note.get("gpus") or ()])


def how_made(record: Any) -> list[tuple[str, str]]:
    """(label, text) of a GPU-side record's making, for its provenance: target and tools, the specs' documents."""
    note = gpu_side(record)
    out = []
    if note:
        targets, tools, gpus = ("、".join(part) for part in made_with(note))
        words = {"compiled": f"为 {targets or '—'} 编译（{tools}），读 PTX / SASS / 资源用量，未在 GPU 上运行",
                 "simulated": f"在 {tools} 里运行，未在 GPU 上运行",
                 "spec": "用公布的规格计算：" + gpus}
        out.append(("得来", words.get(str(note.get("kind")), str(note.get("kind")))))
    sources = (getattr(record, "observed", None) or {}).get("sources")
    if isinstance(sources, dict) and sources:
        out.append(("规格出处", "；".join(f"{k}：{v}" for k, v in sources.items())))
    return out


def gpu_side(record: Any) -> dict[str, Any]:
    """The observation's ``evidence`` object (empty for a claim that ran ordinary code)."""
    note = (getattr(record, "observed", None) or {}).get("evidence")
    return note if isinstance(note, dict) else {}


def _kind_is(kind: str) -> Callable[[Any], bool]:
    return lambda record: gpu_side(record).get("kind") == kind


def _detail(record: Any) -> str:
    """`` · sm_90a · nvcc 13.0.88`` after the mark; a spec claim's products (the title and provenance say the rest)."""
    note = gpu_side(record)
    targets, tools, gpus = made_with(note)
    parts = targets + tools
    if note.get("kind") == "spec":
        parts = [g for g in gpus if not g.startswith("compute capability")][:3]
    return "".join(f" · {p}" for p in parts)


def _needed_tools(record: Any) -> str:
    from verify import toolchain  # noqa: PLC0415

    return " " + " / ".join(n for n in getattr(record, "needs", ()) if n in toolchain.TOOLS)


for _where, _label, _mark in (("here", "（在构建本站的机器上）", ""), ("elsewhere", "（记录自另一台机器）", "他机")):
    register(State(f"compiled-{_where}", "已编译：为 GPU 架构编译，事实读自 PTX、SASS 或资源用量，没有在 GPU 上运行" + _label,
                   _mark + "已编译", "derived", True, _where, "cyan", rule=_kind_is("compiled"), detail=_detail))
    register(State(f"simulated-{_where}", "已模拟：在 Triton 解释器或 numba 的 CUDA 模拟器里运行，不是 GPU 上的结果" + _label,
                   _mark + "已模拟", "derived", True, _where, "cyan", rule=_kind_is("simulated"), detail=_detail))
    register(State(f"spec-{_where}", "按规格计算：用 NVIDIA 公布的 GPU 规格做的算术，不是测量" + _label,
                   _mark + "按规格计算", "derived", True, _where, "cyan", rule=_kind_is("spec"), detail=_detail))
NEEDS_TOOL = register(State("needs-tool", "需要 GPU 工具链，构建机未安装（make setup 安装）", "需要", "none", False, "",
                            "yellow", detail=_needed_tools)).key
