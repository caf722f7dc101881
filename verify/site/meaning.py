"""What each evidence mark means, in one line: the home page's legend and the ledger's legend read it."""

from __future__ import annotations

from verify.core import states

#: The legend's row for a mark that counts machines (``3 台机器已验证``), where the pages count them.
COUNTED = "counted"

#: The legend's one line per kind of evidence, by state key. A state without a line in MEANING is still in
#: the legend, explained by its label; a "他机" row of a kind shares its "here" row's line.
MEANING = {
    states.VERIFIED_HERE: "在构建本站的机器上运行过，观测值满足这句话。",
    states.VERIFIED_ELSEWHERE: "另一台机器的记录，代码与现在相同；点开句子可见机器和日期。",
    COUNTED: "N 台不同的机器运行过，观测值都满足这句话；点开句子可见每台机器。",
    "compiled-here": "为 GPU 架构编译，读 PTX、SASS 或资源用量；没有在 GPU 上运行。",
    "simulated-here": "在 Triton 解释器或 numba 的 CUDA 模拟器里运行，不是 GPU 上的结果。",
    "spec-here": "用 NVIDIA 公布的 GPU 规格做的算术，不是测量。",
    states.NEEDS_CUDA: "要在 GPU 上运行；这次构建没有 GPU，还没有观测值，不是失败。",
    states.FAILED: "运行了，观测值不满足这句话；展开可见观测值和代码。",
    states.STALE: "只有另一台机器的旧记录，这句话的代码在那之后改过。",
    states.NOT_APPLICABLE: "构建机缺少这句话声明的条件（例如 MKL），没有运行。",
    states.NOT_RUN: "构建机还没有运行它。",
    states.NEEDS_TOOL: "需要 GPU 工具链（Triton、nvcc、numba），构建机没有安装。",
}
