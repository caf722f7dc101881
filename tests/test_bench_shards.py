"""Two shards against one run: the wall time of a cold verification split in two.

Target (issue: shards): with N shards the wall time of a cold verification is at most
1.3x (total / N) plus the start-up of one shard (the command and its first worker, one claim that
does nothing but import torch: every shard pays it once). Here N = 2 on this one machine: each shard is a
process with one worker (``VERIFY_JOBS=1``), the share of the machine one of two CI runners would
have, and "total" is one unsharded cold run with one worker, the same work on one such share. The
project is synthetic so that the benchmark stays short: ten snippet files that import torch (the
start-up every worker pays) with claims that spin the CPU for different lengths. Durations are
recorded from the unsharded run's bundle first (``verify durations``), as a maintainer would, so
the split is the one ``snippets/durations.json`` gives. Every run starts from an empty cache.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests._project import MKDOCS_YML, cold_cache, question_page, start_verify, write

pytestmark = pytest.mark.bench
Q = "shardbench"
# loops of pure-Python arithmetic per claim, per file: uneven on purpose
WORK = [[9, 3], [7], [6, 2, 1], [5, 5], [4], [3, 3, 3], [2], [8, 1], [1, 1], [6]]
UNIT = 1_500_000


def _project(root: Path) -> Path:
    files = {"mkdocs.yml": MKDOCS_YML, "docs/index.md": "# 首页\n"}
    fences = []
    for f, loops in enumerate(WORK):
        lines = ["import torch", "from verify.claim import claim", "", f'Q = "{Q}"', ""]
        for i, n in enumerate(loops):
            cid = f"{Q}.f{f}-{i}"
            fences.append(f"```claim\n{cid}\n```\n")
            lines += [f'@claim("{cid}", question=Q, statement="第 {f} 个文件。", expect={{"ok": True}})',
                      "def _(ctx):", f"    total = sum(range({n * UNIT}))",
                      "    return {'ok': total > 0 and torch.ones(1).item() == 1.0}", "", ""]
        files[f"snippets/{Q}/f{f}.py"] = "\n".join(lines)
    files[f"docs/questions/{Q}.md"] = question_page("\n".join(fences), qid=Q)
    return write(root, files)


def _one_claim(root: Path) -> Path:
    """A project of one claim that only imports torch."""
    files = {"mkdocs.yml": MKDOCS_YML, "docs/index.md": "# 首页\n",
             f"snippets/{Q}/one.py": "\n".join(["import torch", "from verify.claim import claim", "", f'Q = "{Q}"', "",
                                                f'@claim("{Q}.one", question=Q, statement="一个。", expect={{"ok": True}})',
                                                "def _(ctx):", "    return {'ok': torch.ones(1).item() == 1.0}", ""]),
             f"docs/questions/{Q}.md": question_page(f"```claim\n{Q}.one\n```\n", qid=Q)}
    return write(root, files)


def _timed(root: Path, cache: Path, *args: str) -> float:
    """Wall seconds of one ``verify`` command, from its start to its exit."""
    began = time.perf_counter()
    proc = start_verify(root, cache, *args)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-3000:]
    return time.perf_counter() - began


@pytest.mark.benchmark(group="project-speed")
def test_two_shards_take_at_most_1_3x_half_the_total_plus_a_start_up(benchmark, tmp_path):
    root = _project(tmp_path / "repo")
    total = _timed(root, cold_cache(tmp_path / "whole"), "run", "--bundle", str(tmp_path / "whole.json"))
    _timed(root, tmp_path / "whole", "durations", str(tmp_path / "whole.json"))
    # the start-up of one shard: what a shard pays before its share of the work, whatever the share
    # is: the command, and a worker (one import of torch, then forks: verify.running.zygote) running
    # one claim that does nothing else
    startup = _timed(_one_claim(tmp_path / "one"), cold_cache(tmp_path / "one-cache"), "run")
    rounds = iter(range(100))
    shard_s: list[float] = []

    def two_shards() -> None:
        r = next(rounds)
        caches = [cold_cache(tmp_path / f"r{r}-s{k}") for k in (1, 2)]
        with ThreadPoolExecutor(2) as pool:  # each shard's own wall time, both started together
            shard_s[:] = pool.map(lambda k: _timed(root, caches[k - 1], "run", "--shard", f"{k}/2", "--bundle",
                                                   str(tmp_path / f"r{r}-s{k}.json")), (1, 2))

    benchmark.pedantic(two_shards, rounds=1, iterations=1)
    wall = benchmark.stats.stats.max
    bound = 1.3 * total / 2 + startup
    mean = sum(shard_s) / 2
    benchmark.extra_info.update(variant="两个分片中较长的一个", total_s=round(total, 2), wall_s=round(wall, 2), bound_s=round(bound, 2),
                                startup_s=round(startup, 2), shard_s=[round(x, 2) for x in shard_s],
                                balance=round(max(shard_s) / mean, 3), ratio_to_half_total=round(wall / (total / 2), 3))
    assert wall <= bound, (f"two shards took {wall:.1f}s; the bound is 1.3 x {total:.1f}s / 2 + {startup:.1f}s "
                           f"= {bound:.1f}s")
