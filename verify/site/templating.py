"""The Jinja2 environment of the fences' HTML, and every label that HTML shows.

Templates live in ``verify/site/templates/`` (shipped as package data). They are autoescaped:
a value is escaped unless it is a :class:`markupsafe.Markup` (Pygments output, a plot ``<img>``),
and an undefined name is an error, not an empty string. Jinja2 is imported on the first render,
so importing the fences costs nothing until a page uses one.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.core import evidence, states

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"

def state(key: str, live: str | None = None) -> states.State:
    """A claim status's row of :mod:`verify.core.states`, with its ``verify serve`` words under a live build.

    ``live``: ``""``, :data:`~verify.core.states.LIVE_RUNNING` or :data:`~verify.core.states.LIVE_STOPPED`;
    ``None``: the current session's (:func:`live_mode`).
    """
    return states.get(key).words(live_mode() if live is None else live)


def live_mode() -> str:
    """How this build shows a claim not run here: the current session's mode, else the settings' (``""``
    for a site build, :data:`~verify.core.states.LIVE_RUNNING` under ``verify serve``)."""
    from verify import settings as settings_mod  # noqa: PLC0415
    from verify.site import session  # noqa: PLC0415

    current = session.current()
    if current is not None:
        return current.live_mode
    return states.LIVE_RUNNING if settings_mod.for_site().live else ""

# Freshness of a stored benchmark result file -> (CSS modifier of .vf-badge, label).
BENCH_STATE: dict[str, tuple[str, str]] = {
    "current": ("ok", "结果与基准代码一致"),
    "stale": ("stale", "基准代码已改，结果已过期"),
    "missing": ("none", "该设备尚无结果"),
}

# Every user-visible word of the fences' HTML. Templates read it as ``L``; sentences that wrap
# markup around a value stay whole in their template.
LABELS: dict[str, Any] = {
    "bench_state": BENCH_STATE,
    "bad_value": "无法绑定",
    "input_title": "输入：snippet 被给定的值，不是测量结果",
    "unknown_claim": "未知论断",
    "broken_snippet": "snippet 无法载入",
    "unrenderable": "无法渲染",
    "no_results": "尚无结果",
    "needs_cuda": states.get(evidence.NEEDS_CUDA).label,
    "missing": "—",
    "values_head": ("观测项", "期望", "实际观测"),
    "scope_title": "这句话的证据在哪里得到：CPU 上运行、GPU 上运行、为 GPU 编译（未运行）、模拟器里运行，或按公布的规格计算；其后是它固定的模型或形状",
    "raises": "抛出 {0}，消息含 “{1}”",
    "source": "代码：",
    "output": "运行输出：",
    "prov": {"device": "设备", "torch": "torch", "python": "Python", "os": "系统", "threads": "线程",
             "commit": "提交", "date": "时间", "hash": "代码哈希", "duration": "耗时", "origin": "来源"},
    # A record verify merge took from a bundle, rather than one this build's runner made.
    "origin": "合并自 {0}（其提交 {1}，{2}）",
    "origin_history": {True: "在本仓库历史中", False: "不在本仓库历史中", None: "无法核对是否在本仓库历史中"},
    "origin_no_commit": "未写明",
    "count_item": "{0} {1} 条",
    "here": "构建机（{0}）",
    # A claim's one mark where more than one machine observed it the same way: 3 台机器已验证.
    "machines": "{0} 台机器{1}",
    "kind_word": {"verified": "已验证", "compiled": "已编译", "simulated": "已模拟", "spec": "按规格计算"},
    "machines_head": "各台机器：",
    # Statuses whose own words speak of the build machine, said of another machine's record.
    "elsewhere_label": {evidence.NEEDS_CUDA: "需要 CUDA，这台机器没有 GPU，未运行",
                        evidence.NOT_APPLICABLE: "这台机器不适用（缺少论断声明的条件）",
                        states.NEEDS_TOOL: "需要 GPU 工具链，这台机器未安装"},
    "evidence_summary": "本题共 {0} 条论断：",
    "evidence_open": "（展开看每条的机器与观测值）",
    "ledger_head": ("论断 id · 题目 · 代码哈希", "内容", "构建机", "其他机器", "观测值"),
    "pages_head": ("题目页", "论断", "来自运行的数值", "手写的测量值"),
    "topics": {"pytorch-internals": "PyTorch 内部机制", "cuda-gpu": "CUDA 与 GPU", "training-memory": "训练显存",
               "distributed": "分布式训练", "serving": "推理与服务", "model-architecture": "模型结构",
               "quantization": "量化", "cpp-systems": "C++ 与系统"},
    "filter_text": "按 id、题目或内容筛选",
    "filter": "筛选",
    "question": "题目",
    "all_questions": "全部题目",
    "state": "状态",
    "all_states": "全部状态",
    "bench_head": ("变体", "规模", "中位数/次", "离散 IQR/中位数", "轮数 × 次", "达到", "占该机上限"),
    "bench_here": "构建机（构建本站的机器）测得",
    "obs_more": "另有 {0} 项，见论断所在页面",
    "fraction_hidden": "占比只在每次调用搬运的字节不少于测内存带宽上限那次拷贝的一半时给出：更小的数据可能在缓存里，"
                       "与内存带宽相比没有意义（—）。",
    "bench_elsewhere": "另一台机器测得，不是构建机的结果",
    "target": "目标：{0}",
    "target_met": "目标达到",
    "target_missed": "目标未达到",
    "compare_head": ("组", "基准", "A", "B", "B / A", "判定"),
    "copy_limit": "拷贝带宽 {0:.3g} GB/s",
    "matmul_limit": "matmul {0} {1:.4g} GFLOP/s",
    "limits": "同次测得的上限：",
    "cores": "{0} 核 · torch 线程 {1}",
}




@functools.cache
def environment() -> jinja2.Environment:
    """The one environment: templates are compiled on first use and kept (no re-stat per render)."""
    import jinja2  # noqa: PLC0415

    from verify import settings as settings_mod  # noqa: PLC0415

    class Bytecode(jinja2.FileSystemBytecodeCache):
        """Keeps what it can: a cache that cannot be written, or was deleted while serving, costs a compile."""

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass

    # Compiled templates kept in the project cache (Jinja checks each against its source's mtime):
    # a warm build does not compile them again.
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        bytecode_cache=Bytecode(str(settings_mod.for_site().cache_dir / "jinja")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.globals["L"] = LABELS
    env.globals["S"] = state  # a status's words and tone: S(status).label, in this build's live mode
    env.globals["STATES"] = lambda: [state(k) for k in states.STATES]
    return env


@functools.cache
def render_version() -> str:
    """A hash of every template and of the code that makes fence HTML (``verify/site`` and ``verify/core``:
    labels, formats, matchers' descriptions): part of any cached rendering's key."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted([*TEMPLATES.glob("*.html"), *(package / "site").glob("*.py"), *(package / "core").glob("*.py")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def render(name: str, **context: Any) -> str:
    """``templates/<name>`` rendered with ``context`` (and the labels as ``L``), as a plain ``str``."""
    return str(environment().get_template(name).render(**context))
