"""The GitHub Actions workflow (``.github/workflows/site.yml``), checked offline.

Its schema (check-jsonschema's copy of the workflow schema) and zizmor's security audit, each
shown to reject a broken copy; and the commands its shard and site jobs run, run here on a copy
of the checkout: every shard writes its bundle, the bundles hold every claim once, the merge and
the strict build from the merged evidence pass.
"""

from __future__ import annotations

import fnmatch
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests._project import REPO, REPO_SETTINGS
from verify.storage import scan
from verify.core import states

WORKFLOW = REPO / ".github" / "workflows" / "site.yml"
BIN = Path(sys.executable).parent
# Run-steps of the shard and site jobs that install rather than do the job's work: not run here
# (this checkout's .venv stands in for `make setup`). A new installing step must be added here.
INSTALLING = re.compile(r"^make setup$|apt-get|pip install")
SKIPPED_RUN_STEPS = {"shard": ["make setup"], "site": ["make setup"]}
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
SHELL = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]  # what `shell: bash` runs on GitHub


def _load(path: Path = WORKFLOW) -> dict[str, Any]:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))  # YAML 1.2: `on` stays a key


def _edited(tmp_path: Path, edit: Any) -> Path:
    """A copy of the workflow with ``edit`` applied to its round-trip tree (comments kept)."""
    yaml = YAML()
    tree = yaml.load(WORKFLOW.read_text(encoding="utf-8"))
    edit(tree)
    out = io.StringIO()
    yaml.dump(tree, out)
    path = tmp_path / "site.yml"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def _tool(name: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = BIN / name
    assert exe.is_file(), f"{exe}: missing; install the test extras: pip install -e '.[test]'"
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, ZIZMOR_OFFLINE="1"))


def _schema(path: Path) -> subprocess.CompletedProcess[str]:
    return _tool("check-jsonschema", "--builtin-schema", "vendor.github-workflows", path)


def _zizmor(path: Path) -> tuple[int, list[str]]:
    proc = _tool("zizmor", "--offline", "--no-progress", "--no-config", "--format", "json", path)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, [finding["ident"] for finding in json.loads(proc.stdout)]


# --- 1. the schema --------------------------------------------------------------------------------


def test_workflow_matches_the_github_workflow_schema():
    proc = _schema(WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_check_rejects_a_job_without_runs_on(tmp_path):
    assert _schema(_edited(tmp_path, lambda tree: None)).returncode == 0  # the copy alone changes nothing
    proc = _schema(_edited(tmp_path, lambda tree: tree["jobs"]["deploy"].pop("runs-on")))
    assert proc.returncode != 0
    assert "runs-on" in proc.stdout + proc.stderr


# --- 2. zizmor's audit ----------------------------------------------------------------------------


def test_zizmor_finds_nothing():
    code, findings = _zizmor(WORKFLOW)
    assert (code, findings) == (0, [])


def _unpin_checkout(tree: Any) -> None:
    step = tree["jobs"]["shard"]["steps"][0]
    assert step["uses"].startswith("actions/checkout@")
    step["uses"] = "actions/checkout@v7"


def _expression_in_run(tree: Any) -> None:
    step = next(s for s in tree["jobs"]["site"]["steps"] if "merge" in s.get("run", ""))
    step["run"] = 'echo "${{ github.head_ref }}" && ' + step["run"]


@pytest.mark.parametrize(("edit", "ident"), [(_unpin_checkout, "unpinned-uses"),
                                             (_expression_in_run, "template-injection")])
def test_zizmor_reports_a_broken_copy(tmp_path, edit, ident):
    code, findings = _zizmor(_edited(tmp_path, edit))
    assert code != 0 and findings == [ident]


def _jobs_steps() -> list[tuple[str, dict[str, Any]]]:
    return [(name, step) for name, job in _load()["jobs"].items() for step in job.get("steps", [])]


def test_every_action_is_pinned_to_a_commit_with_its_tag_beside_it():
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = [step["uses"] for _, step in _jobs_steps() if "uses" in step]
    assert uses
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), ref
        assert re.search(re.escape(ref) + r" # v\d+(\.\d+)*\n", text), f"{ref}: no '# vX.Y.Z' tag comment"


def test_no_expression_inside_a_run_script():
    # zizmor's regular persona only flags contexts an attacker controls; here none goes inline at all.
    inline = [(job, step["run"]) for job, step in _jobs_steps() if EXPRESSION.search(step.get("run", ""))]
    assert inline == []


# --- 3. the shard and site jobs' commands, run here -----------------------------------------------


def _expand(value: Any, context: dict[str, str], where: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) not in context:
            raise AssertionError(f"{where}: the test does not know the expression ${{{{ {m.group(1)} }}}}")
        return context[m.group(1)]

    return EXPRESSION.sub(one, str(value))


def _copy_checkout(dest: Path) -> Path:
    """Tracked and untracked-not-ignored files, as a fresh clone with the working tree's bytes."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() or src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel, follow_symlinks=False)
    (dest / ".venv").symlink_to(REPO / ".venv")
    return dest


def _run_job(wf: dict[str, Any], name: str, root: Path, context: dict[str, str],
             extra_env: dict[str, str]) -> list[str]:
    """Run the job's run-steps in ``root``; returns the installing run-steps it skipped."""
    job = wf["jobs"][name]
    assert wf.get("defaults", {}).get("run", {}).get("shell") == "bash" and "defaults" not in job
    base = {k: v for k, v in os.environ.items() if not k.startswith("VERIFY_")}
    skipped = []
    for step in job["steps"]:
        if "uses" in step:
            continue
        script = step["run"]
        if INSTALLING.search(script):
            skipped.append(script.strip())
            continue
        unknown = set(step) - {"name", "env", "run"}
        assert not unknown, f"{name}: the test does not handle {sorted(unknown)} on the step {script!r}"
        env = dict(base)
        for scope in (wf.get("env", {}), job.get("env", {}), step.get("env", {})):
            env.update({k: _expand(v, context, f"{name}: env {k}") for k, v in scope.items()})
        env.update(extra_env)
        proc = subprocess.run([*SHELL, script], cwd=root, env=env, capture_output=True, text=True, timeout=3600)
        assert proc.returncode == 0, f"{name}: {script}\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return skipped


def _uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s.get("with", {}) for s in job["steps"] if s.get("uses", "").split("@")[0] == action]


@pytest.mark.slow
def test_the_shard_and_site_jobs_commands_pass_here(tmp_path):
    wf = _load()
    shard_job = wf["jobs"]["shard"]
    matrix = shard_job["strategy"]["matrix"]
    assert set(matrix) == {"shard"}, f"the test knows a matrix of shards only, not {sorted(matrix)}"
    shards = [str(v) for v in matrix["shard"]]
    # This checkout's content-keyed cache: what the rest of the suite verified is reused, as the
    # workflow's shards restore theirs.
    cache = {"VERIFY_CACHE_DIR": str(REPO_SETTINGS.cache_dir)}
    (upload,) = _uses(shard_job, "actions/upload-artifact")
    artifacts: dict[str, Path] = {}
    claims: Counter[str] = Counter()
    for index, shard in enumerate(shards):
        context = {"matrix.shard": shard, "strategy.job-total": str(len(shards)), "strategy.job-index": str(index)}
        root = _copy_checkout(tmp_path / f"shard-{shard}")
        assert _run_job(wf, "shard", root, context, cache) == SKIPPED_RUN_STEPS["shard"]
        bundle = root / _expand(upload["path"], context, "shard: upload path")
        assert bundle.is_file(), f"shard {shard}: no bundle at {upload['path']}"
        data = json.loads(bundle.read_text(encoding="utf-8"))
        assert data["shard"] == [int(shard), len(shards)]
        claims.update(data["claims"].keys())
        artifacts[_expand(upload["name"], context, "shard: artifact name")] = bundle
    assert claims and set(claims) == set(scan.load_registry(REPO_SETTINGS).claims)
    assert [cid for cid, n in claims.items() if n != 1] == []

    site_job = wf["jobs"]["site"]
    root = _copy_checkout(tmp_path / "site")
    (download,) = [w for w in _uses(site_job, "actions/download-artifact") if "pattern" in w]
    for name, bundle in artifacts.items():
        assert fnmatch.fnmatchcase(name, download["pattern"]), (name, download["pattern"])
        folder = root / download["path"] / ("" if download.get("merge-multiple") else name)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(bundle, folder / bundle.name)
    # No evidence cache in the site job (nor here): what the build shows comes from the merge.
    empty = {"VERIFY_CACHE_DIR": str(tmp_path / "site-cache")}
    assert _run_job(wf, "site", root, {}, empty) == SKIPPED_RUN_STEPS["site"]
    assert list((root / "evidence").glob("*.json")), "the merge wrote no evidence/<device>.json"
    (pages,) = _uses(site_job, "actions/upload-pages-artifact")
    ledger = json.loads((root / pages["path"] / "evidence.json").read_text(encoding="utf-8"))
    statuses = {row["id"]: row["status"] for row in ledger["claims"]}
    assert set(statuses) == set(claims)
    # verified here, of whatever kind (ran, compiled, simulated, from specs), or waiting for a GPU
    assert {cid: s for cid, s in statuses.items() if not states.verified_here(s) and s != "needs-cuda"} == {}
