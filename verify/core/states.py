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
from dataclasses import dataclass, field
from typing import Any

#: the CSS tones a state may take (docs/assets/verify.css styles .vf-<tone>)
TONES = ("ok", "stale", "cuda", "none", "fail")


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
    #: for a kind of passing evidence: which current, passing records it names (record -> bool);
    #: a record none of them names is plain ran-here or recorded-elsewhere evidence
    rule: Callable[[Any], bool] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.tone not in TONES:
            raise ValueError(f"state {self.key}: tone {self.tone!r} is not one of {', '.join(TONES)}")
        if self.ran not in ("here", "elsewhere", ""):
            raise ValueError(f"state {self.key}: ran must be 'here', 'elsewhere' or ''")


STATES: dict[str, State] = {}


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


VERIFIED_HERE = register(State("verified-here", "已验证（构建本站的机器上运行）", "本机已验证", "ok", True, "here", "green")).key
VERIFIED_ELSEWHERE = register(State("verified-elsewhere", "已验证（记录自另一台机器）", "他机已验证", "ok", True,
                                    "elsewhere", "green")).key
STALE = register(State("stale", "记录已过期", "已过期", "stale", False, "", "yellow")).key
NEEDS_CUDA = register(State("needs-cuda", "需要 CUDA，本机未运行", "需 CUDA", "cuda", False, "", "yellow")).key
NOT_APPLICABLE = register(State("not-applicable", "本机不适用（缺少论断声明的条件）", "本机不适用", "none", False, "",
                                "yellow")).key
NOT_RUN = register(State("not-run", "未运行", "未运行", "none", False, "", "yellow", live_label="本机验证中")).key
FAILED = register(State("failed", "失败", "失败", "fail", False, "", "red")).key
