"""C++ candidates against the judge: built with sanitizers by the project's g++ builder, compiled and run in the
judge's sandbox. A compile error is the candidate's error (exit 2); a compile that never ends is stopped; a
sanitizer's report fails the case it happened in and quotes its first line; a file outside the work folder is
not there for the program inside bwrap."""

from __future__ import annotations

import shutil
import textwrap
import time
from pathlib import Path

import pytest

from verify.judge import cpp, judge, problem, sandbox

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

REPO = Path(__file__).resolve().parent.parent
LRU = problem.find(REPO, "lru-cache-cpp")
HONEST = (LRU.path / "solutions" / "list_map.h").read_text(encoding="utf-8")
CPP_PROBLEMS = [p for p in problem.all_problems(REPO) if p.language == "cpp"]


def _judge(tmp_path: Path, source: str, p: problem.Problem = LRU) -> judge.Report:
    path = tmp_path / "candidate.h"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return judge.judge(p, path)


def _patched(old: str, new: str) -> str:
    assert old in HONEST
    return HONEST.replace(old, new, 1)


def test_the_honest_solution_passes(tmp_path):
    report = _judge(tmp_path, HONEST)
    assert (report.verdict, report.passed, report.exit_code) == ("pass", report.cases, 0), report


def test_a_compile_error_is_the_candidates_error_with_g_plus_plus_message(tmp_path):
    report = _judge(tmp_path, _patched("return -1;", "return -1"))
    assert (report.verdict, report.exit_code) == ("error", 2), report
    assert "编译错误" in report.reason and "error: expected" in report.reason, report
    assert "solution.h:" in report.detail, report


def test_including_dev_zero_is_stopped(tmp_path):
    start = time.perf_counter()
    report = _judge(tmp_path, '#include "/dev/zero"\n' + HONEST)
    assert (report.verdict, report.exit_code) == ("error", 2), report
    assert time.perf_counter() - start < cpp.COMPILE_TIMEOUT_S, report


def test_a_compile_that_never_ends_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(cpp, "COMPILE_TIMEOUT_S", 3.0)
    slow = """
        template <int K> constexpr long spin() {
            long s = K;
            for (long i = 0; i < 100000; ++i)
                for (long j = 0; j < 100; ++j) s += (i ^ j) & 7;
            return s;
        }
        template <int K> struct Slow { static_assert(spin<K>() > 0); static constexpr int v = Slow<K - 1>::v + 1; };
        template <> struct Slow<0> { static constexpr int v = 0; };
        constexpr int forever = Slow<500>::v;
    """
    start = time.perf_counter()
    report = _judge(tmp_path, textwrap.dedent(slow) + HONEST)
    assert time.perf_counter() - start < 20, report
    assert (report.verdict, report.exit_code) == ("error", 2) and "编译超时" in report.reason, report


def test_an_out_of_bounds_read_fails_its_case_quoting_the_sanitizer(tmp_path):
    report = _judge(tmp_path, _patched("        return it->second->second;",
                                       "        int* spill = new int[1];\n        int v = spill[1];\n"
                                       "        delete[] spill;\n        return v + it->second->second;"))
    assert (report.verdict, report.exit_code) == ("fail", 1), report
    assert report.case == "满了淘汰最久未用的", report  # the first case with a get that hits
    assert report.reason.startswith("sanitizer 报告了错误：solution.h:"), report
    assert "runtime error: load of address" in report.reason, report  # UBSan's object-size check is first
    assert report.mismatches[0].kind.endswith("UndefinedBehaviorSanitizer: load of address N with insufficient "
                                              "space for an object of type 'int'"), report


def test_a_use_after_free_fails_quoting_address_sanitizer_and_is_named(tmp_path):
    report = judge.judge(LRU, LRU.path / "mutants" / "use_after_free.h")
    assert (report.verdict, report.exit_code, report.mutant) == ("fail", 1, "use_after_free"), report
    assert report.reason.startswith("sanitizer 报告了错误：ERROR: AddressSanitizer: heap-use-after-free"), report
    assert "freed by thread T0 here" in report.detail, report


def test_a_leak_is_found_after_the_case_that_lost_the_memory(tmp_path):
    report = _judge(tmp_path, _patched("        order_.emplace_front(key, value);",
                                       "        new int(value);\n        order_.emplace_front(key, value);"))
    assert (report.verdict, report.case) == ("fail", "满了淘汰最久未用的"), report
    assert "LeakSanitizer: detected memory leaks" in report.reason, report


def test_a_case_that_never_ends_fails_in_that_case(tmp_path):
    report = _judge(tmp_path, _patched("        if (it == where_.end()) return -1;",
                                       "        while (it == where_.end()) {}"))
    assert (report.verdict, report.exit_code) == ("fail", 1), report
    assert report.case == "容量 0：put 之后 get 仍是 -1" and report.reason.startswith("超时"), report


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap")
def test_a_file_outside_the_work_folder_is_not_there_inside_bwrap(tmp_path):
    secret = tmp_path / "secret" / "answer.txt"
    secret.parent.mkdir()
    secret.write_text("42\n", encoding="utf-8")
    assert secret.read_text(encoding="utf-8") == "42\n"  # readable here, outside the sandbox
    peek = f"""
        #include <cstdlib>
        #include <fstream>
        static const int peeked = [] {{
            std::ifstream f("{secret}");
            if (f) std::_Exit(42);
            return 0;
        }}();
    """
    report = _judge(tmp_path / "secret", textwrap.dedent(peek) + HONEST)
    assert (report.verdict, report.passed) == ("pass", report.cases), report


def test_a_program_that_read_the_file_would_have_failed(tmp_path):
    """The check above can fail: a program that exits 42 in its first case is an error in that case."""
    report = _judge(tmp_path, _patched("    explicit LRUCache(int capacity) : capacity_(capacity) {}",
                                       "    explicit LRUCache(int capacity) : capacity_(capacity) { std::exit(42); }"))
    assert (report.verdict, report.case, report.reason) == ("error", "容量 0：put 之后 get 仍是 -1",
                                                            "程序以退出码 42 结束"), report


@pytest.mark.parametrize("line, kind", [
    ("==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6030 at pc 0x55",
     "AddressSanitizer: heap-use-after-free"),
    ("==12==ERROR: AddressSanitizer: attempting double-free on 0x6030 in thread T0:",
     "AddressSanitizer: attempting double-free"),
    ("==7==ERROR: LeakSanitizer: detected memory leaks", "LeakSanitizer: detected memory leaks"),
    ("WARNING: ThreadSanitizer: data race (pid=31)", "ThreadSanitizer: data race"),
    ("solution.h:12:9: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'",
     "UndefinedBehaviorSanitizer: signed integer overflow"),
])
def test_a_sanitizers_first_line_and_kind(line, kind):
    found = cpp.sanitizer_line(f"some output\n{line}\nmore\n")
    assert found is not None and found[1] == kind and "==" not in found[0][:2]
    assert cpp.sanitizer_line("nothing to report\n") is None


def test_the_cases_travel_as_tokens():
    assert cpp.encode(("put", 1, -2)) == ["3", "put", "1", "-2"]
    assert cpp.encode([[1, 2], []]) == ["2", "2", "1", "2", "0"]
    with pytest.raises(ValueError):
        cpp.encode("two words")


def test_the_compiler_runs_in_the_sandbox_with_its_limits(tmp_path, monkeypatch):
    seen: list[dict] = []
    real = sandbox.run

    def spy(spec, work, candidate_dir, timeout_s, inner=None, memory=sandbox.MEMORY, env=None):
        seen.append({"inner": inner, "memory": memory, "timeout": timeout_s})
        return real(spec, work, candidate_dir, timeout_s, inner=inner, memory=memory, env=env)

    monkeypatch.setattr(sandbox, "run", spy)
    _judge(tmp_path, HONEST + "\n// a fresh build: " + str(tmp_path) + "\n")
    compile_run, program_run = seen
    assert compile_run["inner"][0] == "g++" and compile_run["memory"] == cpp.COMPILE_MEMORY
    assert compile_run["timeout"] == cpp.COMPILE_TIMEOUT_S
    assert program_run["memory"] is None and program_run["timeout"] == LRU.timeout_s




# Each known bug of the later C++ problems fails first on the case planned for it, in a way no other bug of its
# problem fails there: that is what lets the judge name it (two use-after-frees of shared-ptr-cpp come on
# different cases; a data race, a deadlock and a wrong result of bounded-queue-cpp differ in kind).
PLANNED = [
    ("shared-ptr-cpp", "copy_assign_leaks", "拷贝赋值给唯一的持有者：它原来的对象要释放",
     "sanitizer 报告了错误：ERROR: LeakSanitizer: detected memory leaks"),
    ("shared-ptr-cpp", "self_assign_frees", "自赋值，计数为 1", "sanitizer 报告了错误：ERROR: AddressSanitizer: heap-use-after-free"),
    ("shared-ptr-cpp", "move_keeps_source", "移动构造：源变空，计数不变",
     "sanitizer 报告了错误：ERROR: AddressSanitizer: heap-use-after-free"),
    ("bounded-queue-cpp", "lock_released_early", "满了 push 要阻塞，pop 一个之后才返回",
     "sanitizer 报告了错误：WARNING: ThreadSanitizer: data race"),
    ("bounded-queue-cpp", "pop_forgets_notify", "满了 push 要阻塞，pop 一个之后才返回", "超时"),
    ("bounded-queue-cpp", "push_ignores_capacity", "满了 push 要阻塞，pop 一个之后才返回", "输出不对"),
    ("lfu-cache-cpp", "put_existing_no_bump", "put 已有的 key 也算一次使用", "输出不对"),
    ("lfu-cache-cpp", "tie_evicts_most_recent", "次数相同时淘汰最久未用的", "输出不对"),
    ("lfu-cache-cpp", "min_freq_not_reset", "新 key 进来之后最少次数回到 1", "输出不对"),
]


@pytest.mark.parametrize("pid, mutant, case, reason", PLANNED, ids=[f"{p}:{m}" for p, m, _, _ in PLANNED])
def test_each_known_bug_fails_first_on_its_own_case_and_is_named(pid, mutant, case, reason):
    p = problem.find(REPO, pid)
    report = judge.judge(p, p.path / "mutants" / f"{mutant}.h")
    assert (report.verdict, report.case, report.mutant) == ("fail", case, mutant), report
    assert report.reason.startswith(reason), report


def test_the_queue_is_built_with_thread_sanitizer_and_the_others_with_address_sanitizer():
    assert "-fsanitize=thread" in cpp.flags(problem.find(REPO, "bounded-queue-cpp"))
    for pid in ("shared-ptr-cpp", "lfu-cache-cpp"):
        assert "-fsanitize=address,undefined" in cpp.flags(problem.find(REPO, pid))
