"""numba-CUDA 手撕 problems: kernels judged in numba's CUDA simulator in the judge's child.

A solution must launch a kernel and return what a kernel wrote; an element no kernel wrote stays NaN; a
block's threads run one at a time in a fixed order, so a missing barrier gives the same wrong answer every
run and its known-wrong solution is named; an out-of-bounds read is NaN. The simulated GPU section counts
sectors, bank conflicts, idle lanes and out-of-bounds accesses from the child's address trace.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests._judge_shared import Shared
from verify import toolchain
from verify.judge import gpu_numba, judge, problem

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(toolchain.missing("numba") is not None, reason="needs the pinned numba")

REPO = Path(__file__).resolve().parent.parent
NUMBA = [p for p in problem.all_problems(REPO) if p.language == "numba"]
ROW_SUM = problem.find(REPO, "row-sum-numba")


def _judge(tmp_path: Path, source: str, p: problem.Problem = ROW_SUM, gpu: bool = False) -> judge.Report:
    path = tmp_path / "candidate.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return judge.judge(p, path, gpu=gpu)


#: row-sum candidates judged together in one child (tests/_judge_shared.py): none of them changes the child for the
#: ones after it
SHARED = Shared(ROW_SUM)
reports = SHARED.fixture()


def test_the_numba_problems_are_there():
    assert {"row-sum-numba", "transpose-numba", "scan-numba"} <= {p.id for p in NUMBA}


HONEST = SHARED.add("honest", (ROW_SUM.path / "solutions" / "tree.py").read_text(encoding="utf-8"))


def test_the_honest_solution_passes(reports):
    report = reports[HONEST]
    assert (report.verdict, report.passed) == ("pass", report.cases), report


NO_LAUNCH = SHARED.add("no_launch", """
    import numpy as np

    def row_sum(x):
        return x.sum(axis=1, dtype=np.float32)
""")


def test_no_kernel_launch_fails(reports):
    report = reports[NO_LAUNCH]
    assert report.verdict == "fail" and "没有启动任何核函数" in report.reason, report


NUMPY_ANSWER = SHARED.add("numpy_answer", """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def touch(y):
        pass

    def row_sum(x):
        y = np.empty(x.shape[0], dtype=np.float32)
        touch[1, 32](y)
        return x.sum(axis=1, dtype=np.float32)
""")


def test_numpy_answer_beside_a_kernel_that_writes_nothing_fails(reports):
    report = reports[NUMPY_ANSWER]
    assert report.verdict == "fail" and "不是核函数写下的" in report.reason, report


FIRST_ROW_ONLY = SHARED.add("first_row_only", """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def first_row_only(x, y):
        if cuda.threadIdx.x == 0:
            acc = np.float32(0.0)
            for c in range(x.shape[1]):
                acc += x[0, c]
            y[0] = acc

    def row_sum(x):
        y = np.empty(x.shape[0], dtype=np.float32)
        first_row_only[1, 32](x, y)
        return y
""")


def test_an_element_no_kernel_wrote_stays_nan_and_fails(reports):
    report = reports[FIRST_ROW_ONLY]
    assert report.verdict == "fail" and report.mismatches, report
    assert "NaN（没有写入" in report.mismatches[0].kind and report.mismatches[0].got == "nan", report


ONE_BEFORE = SHARED.add("one_before", """
    import numpy as np
    from numba import cuda

    @cuda.jit
    def one_before(x, y):
        row = cuda.blockIdx.x
        if cuda.threadIdx.x == 0:
            acc = x[row, -1]  # outside the row on a GPU
            for c in range(x.shape[1]):
                acc += x[row, c]
            y[row] = acc

    def row_sum(x):
        y = np.empty(x.shape[0], dtype=np.float32)
        one_before[x.shape[0], 32](x, y)
        return y
""")


def test_an_out_of_bounds_read_is_nan_not_a_crash(reports):
    """The simulator would raise IndexError; the judge's child reads NaN there, so the result shows it (negative
    indices included: a GPU does not wrap them)."""
    report = reports[ONE_BEFORE]
    assert (report.verdict, report.case) == ("fail", "一个元素 (1, 1)"), report
    assert report.mismatches[0].got == "nan", report


@pytest.mark.parametrize("p, mutant", [(p, sorted(p.mutants)[0]) for p in NUMBA], ids=lambda v: getattr(v, "id", v))
def test_a_mutant_judged_alone_fails_and_is_named(p, mutant):
    """One known bug per problem through the path a candidate's file takes (its bug named by running the known-wrong
    files in one more child); that every mutant fails and is named is each problem's claim (tests/test_claims.py)."""
    report = judge.judge(p, p.path / "mutants" / f"{mutant}.py")
    assert (report.verdict, report.mutant, report.hint) == ("fail", mutant, p.mutants[mutant]), report


def test_the_gpu_section_counts_the_out_of_bounds_reads_of_the_candidate_only():
    report = judge.judge(ROW_SUM, ROW_SUM.path / "mutants" / "no_boundary_check.py", gpu=True)
    (section,) = report.gpu
    assert section.source.startswith("模拟：numba ") and "没有在 GPU 上运行" in section.source
    rows = {r.name: r for r in section.rows}
    outside = rows["越界访问"]
    assert outside.reference == "0 次" and int(outside.candidate.split(" ")[0]) > 0, outside
    sectors = rows["全局内存：每次请求的扇区数"]
    assert sectors.candidate.startswith("平均 ") and sectors.reference.startswith("平均 "), sectors


def test_the_gpu_section_shows_the_bank_conflicts_of_an_unpadded_tile(tmp_path):
    """The same transpose with a (32, 32) tile: right answers, but each column read of the tile hits one bank 32
    times, where the reference's (32, 33) tile spreads it over 32 banks."""
    p = problem.find(REPO, "transpose-numba")
    unpadded = (p.path / "solutions" / "tiled.py").read_text(encoding="utf-8").replace("(TILE, TILE + 1)", "(TILE, TILE)")
    assert "(TILE, TILE)" in unpadded
    report = _judge(tmp_path, unpadded, p, gpu=True)
    assert report.verdict == "pass", report
    (section,) = report.gpu
    conflicts = {r.name: r for r in section.rows}["共享内存：bank 冲突度（最坏）"]
    assert conflicts.candidate.startswith("32（") and conflicts.reference.startswith("1（"), conflicts


def test_a_kernel_that_raises_mid_block_leaves_the_later_cases_right(tmp_path):
    """Thread 5 raises after the first barrier on one case, while the others wait there: that case is an error, and
    every later case (blocks of the same shape, on threads kept from block to block) still runs and passes."""
    source = (ROW_SUM.path / "solutions" / "tree.py").read_text(encoding="utf-8").replace(
        "    cuda.syncthreads()\n    step = THREADS // 2",
        "    cuda.syncthreads()\n    if x.shape[1] == 7 and tid == 5:\n        raise ValueError('boom')\n"
        "    step = THREADS // 2", 1)
    assert "boom" in source
    report = _judge(tmp_path, source)
    assert (report.verdict, report.case) == ("error", "列数 7：不到一个块，也不是 2 的幂"), report
    assert [m.got for m in report.mismatches] == ["tid=[5, 0, 0] ctaid=[0, 0, 0]: boom"], report  # as numba words it
    assert report.passed == report.cases - 1, report


def test_each_shared_array_of_a_kernel_is_its_own_in_the_gpu_section(tmp_path):
    """A second shared array, (32, 32), asked for on its own line after the padded tile: its column reads hit one
    bank 32 times. Were the two one array (the simulator keys them by the line that asks, and the section's access
    tracing must not stand in for that line), the reads would land in the padded tile and show no conflict."""
    p = problem.find(REPO, "transpose-numba")
    source = (p.path / "solutions" / "tiled.py").read_text(encoding="utf-8")
    two = (source.replace("    tx, ty = cuda.threadIdx.x", "    plain = cuda.shared.array((TILE, TILE), np.float32)\n"
                          "    tx, ty = cuda.threadIdx.x", 1)
           .replace("            tile[ty + k, tx] = x[row, col]", "            tile[ty + k, tx] = x[row, col]\n"
                    "            plain[ty + k, tx] = x[row, col]", 1)
           .replace("y[row, col] = tile[tx, ty + k]", "y[row, col] = plain[tx, ty + k]", 1))
    assert two.count("plain") == 3
    report = _judge(tmp_path, two, p, gpu=True)
    assert report.verdict == "pass", report
    (section,) = report.gpu
    conflicts = {r.name: r for r in section.rows}["共享内存：bank 冲突度（最坏）"]
    assert conflicts.candidate.startswith("32（") and conflicts.reference.startswith("1（"), conflicts


def _record(rows: list[tuple[object, ...]]) -> dict[str, object]:
    return {"rows": rows, "launches": 1, "outside": 0, "capped": False}


def test_sectors_lanes_and_bank_conflicts_from_a_trace():
    block = (0, 0, 0)
    coalesced = [("k0:global0", block, t, 0, 4 * t, 4, False) for t in range(32)]
    strided = [("k0:global1", block, t, 0, 4 * 32 * t, 4, False) for t in range(32)]
    half = [("k0:global2", block, t, 0, 4 * t, 4, True) for t in range(16)]
    column = [("k0:shared0", block, t, 0, 4 * 32 * t, 4, False) for t in range(32)]  # one bank, 32 words
    padded = [("k0:shared1", block, t, 0, 4 * 33 * t, 4, False) for t in range(32)]  # 32 banks
    n = gpu_numba.numbers(_record(coalesced + strided + half + column + padded))
    assert n is not None
    assert (n.requests, n.sectors_max, n.sectors_mean) == (3, 32, (4 + 32 + 2) / 3)
    assert (n.shared_requests, n.conflict_max) == (2, 32)
    assert n.idle_lanes == pytest.approx(16 / 96)
    only_padded = gpu_numba.numbers(_record(padded))
    assert only_padded is not None and only_padded.conflict_max == 1


@pytest.mark.parametrize("record", [
    {"rows": [("k0:global0", (0, 0), 0, 0, 0, 4, False)], "launches": 1, "outside": 0, "capped": False},
    {"rows": [("k0:global0", (0, 0, 0), 0, 0, 0, 3, False)], "launches": 1, "outside": 0, "capped": False},
    {"rows": [("k0:global0", (0, 0, 0), "x", 0, 0, 4, False)], "launches": 1, "outside": 0, "capped": False},
    {"rows": [], "launches": 1},
], ids=["block-of-two", "odd-size", "thread-not-a-number", "no-counts"])
def test_a_malformed_trace_gives_no_numbers(record):
    assert gpu_numba.numbers(record) is None
