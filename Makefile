# Entry points that do all set-up on a fresh clone:
#   make read    read and practise: the site built from committed evidence, served on 127.0.0.1, without
#                torch (its own small environment, .venv-read); the terminal quiz: .venv-read/bin/verify quiz
#   make serve   serve the site on 127.0.0.1 at once; this machine's claims and missing benchmarks run
#                behind the server and each page updates as its claims finish
#   make test    the whole test suite, including a strict site build and the browser tests
# Everything the project needs is installed into .venv; Debian packages (chromium, CJK fonts) by `make system-deps`.

PYTHON ?= python3
VENV   := .venv
READ_VENV := .venv-read
BIN    := $(VENV)/bin
TORCH  ?= torch==2.13.0
# Where pip takes torch from. Empty: PyPI, whose Linux x86-64 wheel is the CUDA build (several GB;
# CUDA claims then run where a GPU is present). On a machine without a GPU the CPU wheel is much
# smaller: make serve TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
HOST   ?= 127.0.0.1
PORT   ?= 8000
export NO_MKDOCS_2_WARNING := 1

.PHONY: read setup system-deps verify bench site serve test test-fast record-gpu gpu-dry-run clean

$(BIN)/verify: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH)"
	$(BIN)/pip install -q -e '.[run,test]'
	@touch $@

# A reader's environment: the MkDocs stack and the project's site and quiz code, no torch, no GPU toolchain.
$(READ_VENV)/bin/verify: pyproject.toml
	$(PYTHON) -m venv $(READ_VENV)
	$(READ_VENV)/bin/pip install -q -e .
	@touch $@

# Builds the site from the committed evidence (evidence/: 他机已验证, with each machine) and serves it; runs no
# claim. Benchmark plots need matplotlib (make serve's install): here their tables are shown without them.
read: $(READ_VENV)/bin/verify
	VERIFY_NO_RUN=1 $(READ_VENV)/bin/mkdocs serve --dev-addr $(HOST):$(PORT) --no-livereload

# The GPU toolchain (Triton, nvcc, numba; pinned in verify/toolchain.py) in a folder of its own, off the
# path of the CPU claims: the GPU pages' claims compile and simulate kernels with it, no GPU needed (about
# 1.4 GiB, 15 s from a local registry). Checked on every setup, installed when a pin is missing; where it
# cannot be installed, those claims show 需要 <tool> and everything else goes on.
setup: $(BIN)/verify
	@$(BIN)/python -m verify.toolchain install --optional

# Browser tests use Debian's chromium; screenshots need CJK fonts; the 手撕 judge runs a candidate's code under
# bubblewrap (no network, read-only root) where it is installed. Needs root (CI runs as root).
system-deps:
	@if ! command -v chromium >/dev/null || ! command -v bwrap >/dev/null || ! fc-list 2>/dev/null | grep -qi "noto.*cjk"; then \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-cjk bubblewrap; fi

verify: setup
	$(BIN)/verify run

bench: setup
	$(BIN)/verify bench run

# The strict, complete build (CI's): every claim verified here, then `mkdocs build --strict`. A
# benchmark never stops it: a failed or missed one is reported and its result stays marked stale.
site: verify
	$(BIN)/verify bench run --keep-going
	$(BIN)/mkdocs build --strict

# Serves at once (no strict build first): pages show committed evidence of other machines, labelled,
# or 本机验证中, until this machine's run reaches them; a claim that fails here shows 失败 and the
# terminal says how to report it (`verify report`). Saving a snippet re-runs only its claims.
serve: setup
	$(BIN)/verify serve --host $(HOST) --port $(PORT)

test: setup system-deps
	$(BIN)/python -m pytest -m "not bench" -q --durations=40
	$(BIN)/python -m pytest -m bench -q -p no:randomly --durations=15

test-fast: setup
	$(BIN)/python -m pytest -m "not bench and not browser and not slow" -q

# A GPU loan in one call: preflight, the CUDA claims, the GPU benchmarks, each under the plan's
# deadline; files to bring back under GPU_OUT. Needs only torch, pytest and pytest-benchmark.
GPU_OUT ?= .cache/gpu-loan
GPU_BUDGET ?= 420
record-gpu:
	$(PYTHON) -m verify.loan --out $(GPU_OUT) --budget $(GPU_BUDGET)

# The loan rehearsed here, without a GPU: every CUDA claim's code run on the CPU, the keys it
# returns and the torch names it uses checked, and the loan's plan with its time estimate.
# DRY_PYTHON=... rehearses under another interpreter (an older torch, say) with the checkout on its path.
DRY_PYTHON ?= $(BIN)/python
gpu-dry-run: setup
	PYTHONPATH=$(CURDIR) $(DRY_PYTHON) -m verify.running.gpuplan

clean:
	rm -rf site .cache
