"""Small question pages in the real format, for the quiz's tests (not shipped in the library).

Besides three short pages there is a copy of the repeat-vs-expand page's key points (as they stood
when the scoring rules were written), with the ``contradicts`` proposed for them, and three answers
to it: a good one, one with every fact inverted, and a bare keyword list (the quiz pre-selects no
mark for any of them: the candidate's marks alone give the rating). ``SNIPPET`` holds one claim
per sample page (a fact, a performance relation, an error), so a tiny site built from them has
drills of every kind (it is written into a test's own ``snippets/``: the checkout's registry never
sees it).
"""

from __future__ import annotations

from pathlib import Path

PAGE = """---
id: {qid}
title: {title}
sources:
  - {{company: 示例公司, round: 一面}}
difficulty: {difficulty}
tags: [{tags}]
key_points:
{key_points}
follow_ups:
  - q: {fu_q}
    a: {fu_a}
---

# {title}

## 普通回答

{ordinary}

## 更好的回答

{better}

```claim
{qid}.demo
```

!!! warning "常见说法不准确"
    这里是一条纠正：常见说法只说对了一半。

## 考察点

见 front matter。

## 追问

见 front matter。

## 证据

```evidence
{qid}
```
"""

def page(qid: str, title: str, difficulty: int, tags: str, key_points: str, fu_q: str, fu_a: str,
         ordinary: str = "一句话的普通回答。", better: str = "更好的回答，写清楚为什么。") -> str:
    return PAGE.format(qid=qid, title=title, difficulty=difficulty, tags=tags, key_points=key_points,
                       fu_q=fu_q, fu_a=fu_a, ordinary=ordinary, better=better)


def write_sample_docs(docs_dir: Path) -> list[str]:
    """Write three valid question pages under ``docs_dir/questions``; return their ids."""
    qdir = Path(docs_dir) / "questions"
    qdir.mkdir(parents=True, exist_ok=True)
    pages = {
        "expand-demo": page(
            "expand-demo", "expand 和 repeat 的区别", 2, "tensor, memory",
            "  - point: expand 只改 stride，不拷贝数据\n"
            "    keywords: [stride, 不拷贝]\n"
            "    synonyms: {stride: [步长], 不拷贝: [零拷贝, 共享内存]}\n"
            "  - point: repeat 会复制出新内存\n"
            "    keywords: [repeat, 复制]\n"
            "    synonyms: {复制: [拷贝, copy]}",
            "对 expand 的结果原地写会怎样？", "add_ 报 RuntimeError；索引赋值会写到共享的元素上。",
            ordinary="expand 不拷贝，repeat 拷贝。",
            better="expand 把扩展维的 **stride 设为 0**，和原张量共用存储；repeat 分配新内存并复制。"),
        "compile-demo": page(
            "compile-demo", "torch.compile 为什么能加速", 3, "compile, fusion",
            "  - point: Dynamo 把 Python 代码捕获成 FX 图\n"
            "    keywords: [dynamo, 计算图]\n"
            "    synonyms: {计算图: [FX 图, graph]}\n"
            "  - point: Inductor 融合算子，减少访存\n"
            "    keywords: [融合, 访存]\n"
            "    synonyms: {融合: [fusion, fuse], 访存: [内存带宽, 读写内存]}",
            "什么会导致 graph break？", "数据相关的控制流、调用不支持的 Python 函数等。"),
        "dispatch-demo": page(
            "dispatch-demo", "算子注册为什么只要一个宏", 4, "dispatcher, cpp",
            "  - point: 宏展开成全局静态对象，构造函数在 main 之前注册\n"
            "    keywords: [静态, 构造函数]\n"
            "    synonyms: {静态: [static], 构造函数: [constructor]}",
            "动态库里的注册什么时候发生？", "库被加载时，静态初始化运行。",
            better="转置只交换 shape 和 stride，不搬数据：\n\n```claim\ndispatch-demo.size\n```"),
    }
    for qid, text in pages.items():
        (qdir / f"{qid}.md").write_text(text, encoding="utf-8")
    return sorted(pages)


# The key points of docs/questions/repeat-vs-expand.md when the scoring was tuned, each with the
# statements proposed as contradicting it.
REPEAT_EXPAND_KEY_POINTS = """\
  - point: expand 只改元数据：被扩展的维 stride 为 0，和原张量共用存储，不拷贝数据
    keywords: [stride, "0", 共享, 不拷贝]
    synonyms: {stride: [步长, 步幅], 共享: [同一块内存, 同一存储, data_ptr], 不拷贝: [零拷贝, 不复制, 不分配]}
    contradicts: [expand 会拷贝, expand 会复制, expand 分配新内存, expand 会分配, expand 的 stride 不变]
  - point: repeat 真正拷贝，得到连续的新张量，内存按倍数增长
    keywords: [拷贝, 连续, 倍数]
    synonyms: {拷贝: [复制, copy, 新内存], 连续: [contiguous], 倍数: [按倍, 线性增长]}
    contradicts: [repeat 不拷贝, repeat 不复制, repeat 只改 stride, repeat 共享, repeat 是 view, repeat 不分配]
  - point: 写入 expand 结果时报不报错，看被写的那个张量有没有内部重叠（大小大于 1 的维 stride 为 0）：TensorIterator 对输出做 assert_no_internal_overlap，所以 add_ 和 CPU 张量上的 y[:, 0] = 5 报错；y[0, 0] = 100、y[0] = 行 不重叠，写穿到原张量；fill_(标量)、zero_ 不做这项检查，照样写穿
    keywords: [重叠, 报错, 写穿, fill_]
    synonyms: {重叠: [内部重叠, internal overlap, assert_no_internal_overlap, 同一内存, 同一地址], 报错: [RuntimeError, 异常], 写穿: [一起变, 改到原张量, 别名, 共享元素], fill_: [zero_, 不检查, 豁免]}
    contradicts: [不会报错, 都不报错, 不会写穿, 写入 都报错, 原地 都报错, 不影响原张量]
  - point: view 要求 stride 兼容（不只是连续）；reshape 能 view 就 view，否则拷贝；contiguous 对连续张量是空操作
    keywords: [view, reshape, contiguous, stride]
    synonyms: {view: [视图], reshape: [变形], contiguous: [连续化, 连续]}
    contradicts: [view 要求 contiguous, view 要求 连续, view 必须 连续, view 必须 contiguous, reshape 总是 拷贝, reshape 一定 拷贝, contiguous 总是 拷贝]
  - point: 复杂度：expand 是 O(1)，repeat 是 O(n)，并用测量说明
    keywords: [O(1), O(n)]
    synonyms: {O(1): [常数时间, 与大小无关], O(n): [线性, 随大小增长]}
    contradicts: [expand 是 O(n), repeat 是 O(1), expand 线性, repeat 常数时间]"""

GOOD_ANSWER = """\
PyTorch 的张量是一块存储加上 shape、stride、offset 这些元数据。expand 只改元数据：被扩展的那一维 stride 设为 0，结果和原张量共享同一块存储，data_ptr 相同，不拷贝数据，所以它是 O(1) 的，和目标大小无关。
repeat 则真正拷贝：分配新内存，把数据复制若干份，得到一个连续（contiguous）的新张量，内存按倍数增长，耗时是 O(n)，随大小增长。
往 expand 的结果里写要小心：报不报错取决于被写的张量有没有内部重叠，也就是大小大于 1 的维 stride 为 0。add_ 会报 RuntimeError，y[:, 0] = 5 在 CPU 上也报错；y[0, 0] = 100 只写一个元素，不重叠，会写穿到原张量，所有行一起变；fill_ 和 zero_ 不做重叠检查，同样写穿。
view 要求新形状能用现有 stride 表达，而不只是要求连续；reshape 能 view 就 view，否则拷贝；对已经 contiguous 的张量调用 contiguous 是空操作。"""

INVERTED_ANSWER = """\
expand 会拷贝数据，分配一块新内存，stride 和原来一样；repeat 不拷贝，只改 stride，和原张量共享存储。
对 expand 的结果原地写不会报错，add_ 和 y[:, 0] = 5 都能正常执行，也不会写穿到原张量。
view 要求张量必须 contiguous，reshape 总是拷贝。复杂度上 expand 是 O(n)，repeat 是 O(1)。"""

KEYWORD_LIST = "stride 0 共享 不拷贝 拷贝 连续 倍数 重叠 报错 写穿 fill_ view reshape contiguous O(1) O(n)"

ANSWERS = {"good": GOOD_ANSWER, "inverted": INVERTED_ANSWER, "keywords": KEYWORD_LIST}


def write_interview_page(docs_dir: Path) -> str:
    """Write ``questions/repeat-vs-expand.md`` with the frozen key points above; return its id."""
    qdir = Path(docs_dir) / "questions"
    qdir.mkdir(parents=True, exist_ok=True)
    text = page("repeat-vs-expand", "torch.repeat 和 torch.expand 的区别", 2, "tensor, stride",
                REPEAT_EXPAND_KEY_POINTS, "对 expand 的结果做 add_ 会怎样？", "报 RuntimeError：内部重叠。",
                ordinary="expand 不拷贝数据，repeat 拷贝数据。下面带标记的句子都来自真正执行过的代码，点开句子能看到观测值。",
                better="### expand\n\nexpand 只改 stride。\n\n### repeat\n\nrepeat 拷贝数据。")
    (qdir / "repeat-vs-expand.md").write_text(text, encoding="utf-8")
    return "repeat-vs-expand"


# One claim per sample page (fact, perf, error, fact), and a second fact on dispatch-demo that the 判断题 ask
# as true (the id's hash picks that), so the sample has a true 判断题 now that timing claims are not asked.
SNIPPET = """\
import torch

from verify.claim import claim
from verify.timing import compare, ratio


@claim("expand-demo.demo", question="expand-demo", statement="`x.expand(4, 3)` 的 stride 是 {stride}。",
       expect={"stride": [0, 1]})
def _(ctx):
    x = torch.tensor([[1, 2, 3]])
    y = x.expand(4, 3)
    return {"stride": y.stride()}


@claim("compile-demo.demo", question="compile-demo", kind="perf",
       statement="{=2000 个元素}相加，`torch.add` 比 Python 列表循环快 {speedup:x}。", expect={"speedup": {">=": 2}})
def _(ctx):
    a, b = torch.ones(2000), torch.ones(2000)
    la, lb = a.tolist(), b.tolist()
    t = compare({"python_loop": lambda: [x + y for x, y in zip(la, lb)], "torch_add": lambda: torch.add(a, b)},
                rounds=5, warmup=1)
    return {"speedup": ratio(t, "python_loop", "torch_add")}


@claim("dispatch-demo.demo", question="dispatch-demo", statement="转置后的张量调用 `view(12)` 报错。",
       raises=("RuntimeError", "view size is not compatible"))
def _(ctx):
    torch.ones(3, 4).t().view(12)


@claim("dispatch-demo.size", question="dispatch-demo", statement="`torch.ones(3, 4).t()` 的形状是 {shape}。",
       expect={"shape": [4, 3]})
def _(ctx):
    return {"shape": list(torch.ones(3, 4).t().shape)}


@claim("repeat-vs-expand.demo", question="repeat-vs-expand", statement="`x.repeat(4, 1)` 是 contiguous 的：{contiguous}。",
       expect={"contiguous": True})
def _(ctx):
    x = torch.tensor([[1, 2, 3]])
    return {"contiguous": x.repeat(4, 1).is_contiguous()}
"""


def write_sample_snippets(root: Path) -> Path:
    """Write ``snippets/samples/demo.py`` (the claims of the sample pages) under ``root``; return it."""
    path = Path(root) / "snippets" / "samples" / "demo.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SNIPPET, encoding="utf-8")
    return path
