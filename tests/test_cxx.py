"""The one g++ builder (verify.cxx): its key, its cache, its errors, and two builds of one key at once."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from verify import cxx

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

MAIN = b'#include "greet.h"\n#include <cstdio>\nint main() { std::printf("%d\\n", answer()); }\n'
HEADER = b"inline int answer() { return 42; }\n"


def _sources(header: bytes = HEADER) -> dict[str, bytes | Path]:
    return {"main.cpp": MAIN, "greet.h": header}


class Counting:
    """A runner that counts the g++ commands it runs."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], folder: Path, timeout: float) -> cxx.Ran:
        self.calls.append(argv)
        return cxx.run_plain(argv, folder, timeout)


def _never(argv: list[str], folder: Path, timeout: float) -> cxx.Ran:
    raise AssertionError(f"g++ ran for a build the cache holds: {argv}")


def test_the_key_follows_every_source_every_flag_and_the_compiler():
    files = {"main.cpp": MAIN, "greet.h": HEADER}
    base = cxx.key(files, [["-O1", "main.cpp"]], "g++ 12.2.0")
    assert cxx.key(dict(files), [["-O1", "main.cpp"]], "g++ 12.2.0") == base
    assert cxx.key({**files, "greet.h": HEADER + b"\n"}, [["-O1", "main.cpp"]], "g++ 12.2.0") != base
    assert cxx.key({**files, "other.h": HEADER}, [["-O1", "main.cpp"]], "g++ 12.2.0") != base
    assert cxx.key(files, [["-O2", "main.cpp"]], "g++ 12.2.0") != base
    assert cxx.key(files, [["-O1", "main.cpp"]], "g++ 13.1.0") != base
    renamed = {"main.cpp": MAIN, "hello.h": HEADER}
    assert cxx.key(renamed, [["-O1", "main.cpp"]], "g++ 12.2.0") != base


def test_a_build_runs_and_the_same_inputs_hit_the_cache_without_g_plus_plus(tmp_path):
    counting = Counting()
    prog = cxx.build(_sources(), cxx.ASAN_UBSAN, cache=tmp_path, runner=counting)
    assert len(counting.calls) == 1 and "-fsanitize=address,undefined" in counting.calls[0]
    assert "-std=c++17" in counting.calls[0] and "-Wextra" in counting.calls[0]
    assert subprocess.run([str(prog)], capture_output=True, text=True, check=True).stdout == "42\n"
    assert cxx.build(_sources(), cxx.ASAN_UBSAN, cache=tmp_path, runner=_never) == prog
    assert [p.name for p in tmp_path.iterdir()] == [prog.parent.name]  # no temporary folder left behind


def test_a_changed_header_flag_or_compiler_builds_again(tmp_path):
    first = cxx.build(_sources(), cache=tmp_path)
    counting = Counting()
    changed = cxx.build(_sources(b"inline int answer() { return 7; }\n"), cache=tmp_path, runner=counting)
    assert changed != first and len(counting.calls) == 1
    assert subprocess.run([str(changed)], capture_output=True, text=True, check=True).stdout == "7\n"
    assert cxx.build(_sources(), ["-O2"], cache=tmp_path, runner=counting) != first
    newer = cxx.build(_sources(), cache=tmp_path, runner=counting, version="g++ (other) 99.0.0")
    assert newer != first and len(counting.calls) == 3
    assert (first.parent / cxx.READY).read_text(encoding="utf-8").strip() == cxx.compiler_version()


def test_the_sanitizer_presets_are_the_documented_flags():
    assert cxx.ASAN_UBSAN == ("-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                              "-fno-sanitize-recover=undefined", "-g", "-O1")
    assert cxx.TSAN == ("-fsanitize=thread", "-g", "-O1")
    assert cxx.STD == ("-std=c++17", "-Wall", "-Wextra")


def test_a_compile_error_carries_g_plus_plus_messages_capped_and_publishes_nothing(tmp_path):
    broken = {"main.cpp": b"int main() { return undeclared_name" + b" + undeclared_name" * 2000 + b"; }\n"}
    with pytest.raises(cxx.BuildError) as err:
        cxx.build(broken, cache=tmp_path)
    assert "undeclared_name" in str(err.value) and err.value.returncode != 0
    assert len(err.value.output) <= cxx.ERROR_CAP
    assert list(tmp_path.iterdir()) == []


def test_a_build_past_its_timeout_is_stopped(tmp_path):
    def slow(argv: list[str], folder: Path, timeout: float) -> cxx.Ran:
        return cxx.run_plain(["sleep", "30"], folder, timeout)

    with pytest.raises(cxx.BuildError) as err:
        cxx.build(_sources(), cache=tmp_path, runner=slow, timeout=0.5)
    assert err.value.timed_out and "没有编译完" in str(err.value)


def test_two_builds_of_one_key_at_once_publish_one_whole_folder(tmp_path):
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(cxx.build(_sources(), cache=tmp_path)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and results[0] == results[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [results[0].parent.name]
    assert subprocess.run([str(results[0])], capture_output=True, text=True, check=True).stdout == "42\n"


def test_a_source_name_with_a_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="plain"):
        cxx.build({"../main.cpp": MAIN}, cache=tmp_path)


def test_steps_build_objects_and_programs_in_one_folder(tmp_path):
    folder = cxx.build_steps(_sources(), [["-std=c++17", "-c", "main.cpp"], ["main.o", "-o", "prog"]], cache=tmp_path)
    assert (folder / "main.o").is_file() and (folder / "prog").is_file()


def test_an_outcome_keeps_a_refused_compile_and_runs_g_plus_plus_once(tmp_path):
    refused = {"bad.cpp": b"struct S { virtual S(); };\n"}
    counting = Counting()
    ran = cxx.outcome(refused, ["-std=c++17", "-fsyntax-only", "bad.cpp"], cache=tmp_path, runner=counting)
    assert ran.returncode != 0 and "constructors cannot be declared" in ran.output and len(counting.calls) == 1
    again = cxx.outcome(refused, ["-std=c++17", "-fsyntax-only", "bad.cpp"], cache=tmp_path, runner=_never)
    assert again == ran
    fine = cxx.outcome(_sources(), ["-std=c++17", "-fsyntax-only", "main.cpp"], cache=tmp_path)
    assert (fine.returncode, fine.output) == (0, "")
    # the same command as a build is a different key: there it is an error
    with pytest.raises(cxx.BuildError):
        cxx.build_steps(refused, [["-std=c++17", "-fsyntax-only", "bad.cpp"]], cache=tmp_path)


def test_an_outcome_past_its_timeout_raises_and_keeps_nothing(tmp_path):
    def slow(argv: list[str], folder: Path, timeout: float) -> cxx.Ran:
        return cxx.run_plain(["sleep", "30"], folder, timeout)

    with pytest.raises(cxx.BuildError) as err:
        cxx.outcome(_sources(), ["main.cpp"], cache=tmp_path, runner=slow, timeout=0.5)
    assert err.value.timed_out and list(tmp_path.iterdir()) == []
