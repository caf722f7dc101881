"""Small question pages in the real format, for the quiz's tests and a tiny demo site."""

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
            "动态库里的注册什么时候发生？", "库被加载时，静态初始化运行。"),
    }
    for qid, text in pages.items():
        (qdir / f"{qid}.md").write_text(text, encoding="utf-8")
    return sorted(pages)
