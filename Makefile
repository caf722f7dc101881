# Two entry points do all set-up on a fresh clone:
#   make serve   verify every claim, run the benchmarks that are missing or stale, build, serve on 127.0.0.1
#   make test    the whole test suite, including a strict site build and the browser tests
# Everything the project needs is installed into .venv; Debian packages (chromium, CJK fonts) by `make system-deps`.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
TORCH  ?= torch==2.13.0
HOST   ?= 127.0.0.1
PORT   ?= 8000
export NO_MKDOCS_2_WARNING := 1

.PHONY: setup system-deps verify bench site serve test test-fast record-gpu clean

$(BIN)/verify: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

setup: $(BIN)/verify

# Browser tests use Debian's chromium; screenshots need CJK fonts. Needs root (CI runs as root).
system-deps:
	@if ! command -v chromium >/dev/null || ! fc-list 2>/dev/null | grep -qi "noto.*cjk"; then \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium fonts-noto-cjk; fi

verify: setup
	$(BIN)/verify run

bench: setup
	$(BIN)/verify bench run

site: verify bench
	$(BIN)/mkdocs build --strict

# `make site` refuses a failing site (strict build) before the server starts. The server itself runs
# without strict mode: a snippet saved with a failing claim then rebuilds, and the page shows 失败
# with its message (the terminal names the claim), where a strict rebuild would abort and MkDocs
# would hold every request until the claim is fixed. Saving a snippet re-runs only its claims.
serve: site
	$(BIN)/mkdocs serve --no-strict --dev-addr $(HOST):$(PORT)

test: setup system-deps
	$(BIN)/python -m pytest -m "not bench" -q
	$(BIN)/python -m pytest -m bench -q -p no:randomly

test-fast: setup
	$(BIN)/python -m pytest -m "not bench and not browser and not slow" -q

# On a GPU machine (no network needed once the environment exists): run every claim there and
# write evidence/<device>.json and benchmarks/<device>.json to commit.
record-gpu:
	$(PYTHON) -m verify.running.record
	$(PYTHON) -m verify.cli bench run --force

clean:
	rm -rf site .cache
