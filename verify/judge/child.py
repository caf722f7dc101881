"""The judge's child process: runs a candidate's solution on the cases it is given, and nothing else.

Run by path (``python -I child.py SPEC``), so it imports only the standard library and, for a PyTorch
problem, torch. Before the candidate's file is imported it installs, in this order:

- an import hook: an import statement in the candidate's file (or in code it ``exec``s) must name a
  module on the problem's list, else the run stops with the refused name; any other import from its
  frames (``__import__`` called by name, a C method loading its helper) may load only a part of a package
  already loaded, whose use the operator log then has to show;
- for a PyTorch problem, the forbidden Python calls replaced by a stub that records the call and raises,
  and a ``TorchDispatchMode`` that logs every ATen operator run below autograd, per case, and fills each
  new floating tensor from ``empty``/``empty_like``/``empty_strided`` with NaN (an element the solution
  never writes stays NaN).

It writes what happened to the result file: per case, the value or the exception, the operators logged,
and the inputs as they are after the call. It judges nothing: the parent computes the expected values,
compares, and reads this file as untrusted (``torch.load(weights_only=True)`` or JSON). Code that sets out to
rewrite this process from inside can forge the file; the isolation around it is what the report states.
"""

from __future__ import annotations

import builtins
import dis
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

CANDIDATE = "candidate_solution"
_IMPORT_NAME = dis.opmap["IMPORT_NAME"]
#: how many characters of a traceback or an error message travel back
TEXT_CAP = 4000


# --- values across the process boundary (shared with the parent) ------------------------------------

def encode_json(value: Any) -> Any:
    """A Python problem's value as JSON, tuples tagged so that they come back as tuples."""
    if isinstance(value, tuple):
        return {"__tuple__": [encode_json(v) for v in value]}
    if isinstance(value, list):
        return [encode_json(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[encode_json(k), encode_json(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {"__repr__": repr(value)[:200]}


def decode_json(value: Any) -> Any:
    if isinstance(value, list):
        return [decode_json(v) for v in value]
    if isinstance(value, dict):
        if "__tuple__" in value:
            return tuple(decode_json(v) for v in value["__tuple__"])
        if "__dict__" in value:
            return {decode_json(k): decode_json(v) for k, v in value["__dict__"]}
        return Unreadable(str(value.get("__repr__", "?")))
    return value


class Unreadable:
    """A value the child could not send as JSON (its ``repr``), never equal to an expected value."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.text}>"


#: the languages whose cases and results travel as JSON (the others as tensors)
JSON = ("python", "cpp")


def save(path: Path, data: Any, language: str) -> None:
    if language in JSON:
        path.write_text(json.dumps(encode_json(data)), encoding="utf-8")
    else:
        import torch  # noqa: PLC0415

        torch.save(data, path)


def load(path: Path, language: str) -> Any:
    """A file the other process wrote; a PyTorch file only as tensors and plain containers."""
    if language in JSON:
        return decode_json(json.loads(path.read_text(encoding="utf-8")))
    import torch  # noqa: PLC0415

    return torch.load(path, weights_only=True)


# --- the guards ----------------------------------------------------------------------------------

class Refused(ImportError):
    """An import the problem does not allow."""


def _from_candidate(frame: Any, path: str) -> bool:
    code = frame.f_code.co_filename
    return code == path or code == "<string>" or frame.f_globals.get("__name__") == CANDIDATE


def install_import_hook(allowed: set[str], path: str, refused: list[str]) -> None:
    real = builtins.__import__

    def guarded(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        frame = sys._getframe(1)
        if _from_candidate(frame, path):
            top = name.split(".")[0] if level == 0 else ""
            # an import statement is checked; a call that is not one (a C method importing its own helper
            # module, or __import__ called by name) may load only a part of a package already loaded
            statement = frame.f_code.co_code[frame.f_lasti] == _IMPORT_NAME
            if level or top not in allowed and (statement or top not in sys.modules):
                refused.append(name if level == 0 else "." * level + name)
                raise Refused(f"import {name} is not allowed here")
        return real(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded


def forbid_calls(names: list[str], called: list[str]) -> None:
    """Replace each dotted name (``torch.nn.functional.rms_norm``) with a stub that records and raises."""
    for dotted in names:
        parts = dotted.split(".")
        owner: Any = importlib.import_module(parts[0])
        for part in parts[1:-1]:  # torch.nn.functional is a module, torch.Tensor a class
            owner = getattr(owner, part, None)
        attr = parts[-1]

        def stub(*_args: Any, _name: str = dotted, **_kwargs: Any) -> Any:
            called.append(_name)
            raise RuntimeError(f"{_name} is forbidden in this problem")

        if owner is not None and hasattr(owner, attr):
            setattr(owner, attr, stub)


def dispatch_log() -> Any:
    """A TorchDispatchMode that logs operator names into ``.ops`` and fills new float tensors with NaN."""
    import torch  # noqa: PLC0415
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415

    aten = torch.ops.aten
    fresh = {aten.empty.memory_format, aten.empty_like.default, aten.empty_strided.default, aten.new_empty.default,
             aten.new_empty_strided.default}

    class Log(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # Else TorchDispatchMode wraps __torch_dispatch__ in torch._disable_dynamo, whose first call imports
            # torch._dynamo: 1.5 s of every judged run. The log is never traced: a compiled candidate's kernels
            # bypass it, and its required operators are then missing from the log.
            return False

        def __init__(self) -> None:
            super().__init__()
            self.ops: list[str] = []
            self.paused = 0  # while a kernel runs in Triton's interpreter: its copies are not the solution's

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if not self.paused:
                self.ops.append(str(func.overloadpacket))
            out = func(*args, **(kwargs or {}))
            if func in fresh and isinstance(out, torch.Tensor) and (out.is_floating_point() or out.is_complex()):
                out.fill_(float("nan"))
            return out

    return Log()


def _clone(value: Any) -> Any:
    import torch  # noqa: PLC0415

    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    return value


def _sendable(value: Any, language: str) -> Any:
    """What travels back: a tensor detached and contiguous, containers as lists, anything else by ``repr``."""
    if language == "python":
        return value
    import torch  # noqa: PLC0415

    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").clone().contiguous()
    if isinstance(value, (list, tuple)):
        return [_sendable(v, language) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {"__repr__": repr(value)[:200]}


def _error(exc: BaseException, path: str) -> dict[str, str]:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    where = "".join(traceback.format_list(frames[-3:]))
    return {"type": type(exc).__name__, "message": str(exc)[:TEXT_CAP], "where": where[-TEXT_CAP:]}


def _launches() -> Any:
    """The sibling module that runs kernel problems (loaded by path: this process imports no package of ours)."""
    where = Path(__file__).with_name("launches.py")
    module_spec = importlib.util.spec_from_file_location("judge_launches", where)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


# --- the run -------------------------------------------------------------------------------------

def _triton_report(spec: dict[str, Any]) -> int:
    """Each run's candidate called on the spec's one case with its kernels' launches recorded, not run, then each
    kernel compiled for the spec's targets; the numbers (JSON) to the run's result file."""
    kernels = _launches()
    recorder = kernels.triton_recorder(spec.get("tools", ""))
    import torch  # noqa: PLC0415,F401  (before the hook: torch's own imports are not the candidate's)

    forbid_calls(spec["forbidden_calls"], [])
    cases = load(Path(spec["cases"]), spec["language"])
    for run in spec["runs"]:
        recorder.seen.clear()
        ran = _run(spec, run["candidate"], cases, None, None, None)
        out = recorder.compile(spec["compile"], str(Path(run["result"]).parent))
        out["refused"] = ran["refused"]
        out["import_error"] = (ran["import_error"] or {}).get("message")
        out["case_error"] = next((c["error"]["message"] for c in ran["cases"] if "error" in c), None)
        Path(run["result"]).write_text(json.dumps(out), encoding="utf-8")
    return 0


def main(spec_path: str) -> int:
    """Run the spec's candidate file (or each of its ``runs``: the known-wrong solutions a report compares a
    failing case with) on its cases, each run's result to its own file."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    language = spec["language"]
    if spec.get("compile"):  # the compiled GPU section of a triton problem: verify.judge.gpu_triton
        return _triton_report(spec)
    cases = load(Path(spec["cases"]), language)
    called: list[str] = []
    log, kernels, watch = None, None, None
    if language != "python":
        import torch  # noqa: PLC0415,F401  (before the hook: torch's own imports are not the candidate's)

        forbid_calls(spec["forbidden_calls"], called)
        log = dispatch_log()
        if language in ("triton", "numba"):
            kernels = _launches()
            watch = kernels.Launches()
            kernels.install(language, spec.get("tools", ""), watch, log)
        log.__enter__()
    trace = _sim_report(spec, kernels)
    for run in spec["runs"]:
        called.clear()
        out = _run(spec, run["candidate"], cases, log, kernels, watch)
        out["called"] = list(called)
        save(Path(run["result"]), out, language)
        if trace is not None:
            save(Path(run["trace"]), trace.take(), language)
    if log is not None:
        log.__exit__(None, None, None)
    return 0


def _sim_report(spec: dict[str, Any], kernels: Any) -> Any:
    """The simulated-GPU report mode of a numba problem (the spec's ``trace`` is true): every element access of
    the kernels is recorded, and each run's record goes to its ``trace`` file for :mod:`verify.judge.gpu_numba`."""
    if kernels is None or spec["language"] != "numba" or not spec.get("trace"):
        return None
    return kernels.numba_trace()


def _run(spec: dict[str, Any], path: str, cases: Any, log: Any, kernels: Any, watch: Any) -> dict[str, Any]:
    language = spec["language"]
    out: dict[str, Any] = {"refused": [], "import_error": None, "cases": []}
    install_import_hook(set(spec["imports"]), path, out["refused"])
    try:
        module_spec = importlib.util.spec_from_file_location(CANDIDATE, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[CANDIDATE] = module
        module_spec.loader.exec_module(module)
        entry = getattr(module, spec["entry"])
    except BaseException as exc:  # noqa: BLE001  (a candidate's file may raise anything while it loads)
        out["import_error"] = _error(exc, path) | {"trace": traceback.format_exc()[-TEXT_CAP:]}
        entry = None
    for args in cases if entry is not None else []:
        given = _clone(args) if language != "python" else json.loads(json.dumps(encode_json(args)))
        call_args = given if language != "python" else decode_json(given)
        if language == "numba":
            call_args = kernels.to_numpy(call_args)
        if log is not None:
            log.ops = []
        if watch is not None:
            watch.reset()
        start = time.perf_counter()
        case: dict[str, Any] = {}
        value: Any = None
        try:
            value = entry(*call_args)
        except BaseException as exc:  # noqa: BLE001
            case["error"] = _error(exc, path)
        case["seconds"] = time.perf_counter() - start
        case["ops"] = sorted(set(log.ops)) if log is not None else []  # before the copies below are logged
        if language == "numba":
            value, call_args = kernels.to_torch(value), kernels.to_torch(call_args)
        if watch is not None:
            case["launches"] = watch.count
            case["kernel_wrote"] = "error" not in case and watch.wrote(value)
        if "error" not in case:
            case["value"] = _sendable(value, language)
        case["inputs_after"] = _sendable(list(call_args), language)
        out["cases"].append(case)
    builtins.__import__ = _REAL_IMPORT
    return out


_REAL_IMPORT = builtins.__import__

if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
