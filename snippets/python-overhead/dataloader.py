"""DataLoader workers: separate processes, so pure-Python transforms run outside the GIL."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from snippets._workloads.overhead import epoch, make_loader, python_transform
from verify.claim import claim
from verify.timing import compare, ratio

Q = "python-overhead"


@claim(
    "dataloader.worker-processes", kind="measured",
    question=Q,
    statement="`num_workers=2` 时，样本由 {worker_pids} 个独立的 worker 进程产生（进程号都不是主进程的），主进程花在变换上的"
              " CPU 时间只剩串行时的 {main_cpu_share:pct}，可以专心喂模型。",
    needs=["multicore"],
    expect={"worker_pids": 2, "main_pid_made_items": False, "main_cpu_share": {"<=": 0.5}},
)
def _(ctx):
    main = os.getpid()
    cpu = {}
    pids = {}
    for workers in (0, 2):
        loader = make_loader(workers)
        start = time.process_time()
        out = epoch(loader)
        cpu[workers] = time.process_time() - start
        pids[workers] = sorted(set(out[:, 1].tolist()))
    return {
        "worker_pids": len(pids[2]),
        "main_pid_made_items": main in pids[2],
        "serial_pids_are_main": pids[0] == [main],
        "main_cpu_s": cpu,
        "main_cpu_share": cpu[2] / cpu[0],
    }


@claim(
    "dataloader.speedup",
    question=Q,
    statement="加速比的理想值是 min(workers, 空闲核数)，本机一共 {cores} 个核，所以最多是 {ideal}；同一时刻两个裸进程"
              "（`multiprocessing.Pool`）做同样的变换快 {speedup.pool_2:x}，是理想值的 {pool_vs_ideal:pct}，差的那部分来自"
              "此刻被别的进程占着的核，以及进程间的通信；这台机器上 2 个 worker 的 DataLoader 快 {speedup.workers_2:x}，是裸进程加速比的 {workers_vs_pool:pct}，"
              "DataLoader 每个 batch 还有自己的开销（共享内存、队列、collate），所以这个比值一般低于 1；同样的纯 Python 变换交给 2 个线程则是 {speedup.threads_2:x}，GIL 让它们"
              "轮流执行（纯 Python 的部分拿着 GIL）。",
    kind="perf",
    needs=["multicore"],
    # workers_vs_pool: the DataLoader runs the same transforms in as many processes as the pool and
    # adds its own work per batch (a shared-memory tensor, a queue, collation: dataloader.per-batch-cost),
    # yet keeps most of the pool's speedup (>= 0.6) for items that cost milliseconds. That it stays
    # below the pool is this machine's value in the sentence: 0.85 and 0.92 on two Xeons are too
    # close to 1 to check everywhere. threads_speedup: the GIL serialises pure-Python work on any machine.
    expect={"workers_vs_pool": {">=": 0.5}},
)
def _(ctx):
    cores = os.cpu_count() or 1
    serial, parallel = make_loader(0, length=32), make_loader(2, length=32)  # persistent workers: start-up is paid once
    items = list(range(len(serial.dataset)))
    threads = ThreadPoolExecutor(2)
    procs = multiprocessing.get_context("fork").Pool(2)  # what two bare processes manage right now
    try:
        t = compare({"workers_0": lambda: epoch(serial), "workers_2": lambda: epoch(parallel),
                     "pool_2": lambda: procs.map(python_transform, items, chunksize=4),
                     "threads_2": lambda: list(threads.map(python_transform, items))}, rounds=7, warmup=1)
    finally:
        procs.close()
        threads.shutdown()
    speedup = {k: ratio(t, "workers_0", k) for k in ("workers_2", "pool_2", "threads_2")}
    return {
        "cores": cores,
        "ideal": min(2, cores),
        "load_avg_1min": os.getloadavg()[0],
        "epoch_s": {k: v["median_s"] for k, v in t.items()},
        "spread": {k: v["spread"] for k, v in t.items()},
        "speedup": speedup,
        "efficiency_vs_ideal": speedup["workers_2"] / min(2, cores),
        "pool_vs_ideal": speedup["pool_2"] / min(2, cores),
        "workers_vs_pool": speedup["workers_2"] / speedup["pool_2"],
        "epoch_gap_to_pool": t["workers_2"]["median_s"] - t["pool_2"]["median_s"],
        "batches": len(parallel),
        "threads_vs_pool": speedup["threads_2"] / speedup["pool_2"],
        "threads_speedup": speedup["threads_2"],
    }


@claim(
    "dataloader.per-batch-cost",
    question=Q,
    statement="这份开销在变换几乎不花时间时最清楚：同样每批 {=4} 个样本，`num_workers=2` 时每个 batch 要先在"
              " worker 里拼进一块共享内存（主进程收到的 batch {batch_is_shared.workers_2:?在共享内存里|不在共享内存里}，共享策略是"
              " {sharing_strategy}），再经队列送回主进程，每批 {per_batch.workers_2:time}；在主进程里直接取只要"
              " {per_batch.workers_0:time}，多进程反而慢 {slowdown:x}。",
    kind="perf",
    needs=["multicore"],
    # Exact: a batch collated in a worker lives in shared memory, one collated in the main process
    # does not. Everywhere: moving a batch between processes (shared memory, a pickled handle sent
    # through a pipe, a queue thread) costs far more than indexing a cheap dataset in process.
    expect={"batch_is_shared": {"workers_0": False, "workers_2": True}, "slowdown": {">=": 2}},
)
def _(ctx):
    light = {w: make_loader(w, length=32, steps=0) for w in (0, 2)}  # persistent workers
    shared = {f"workers_{w}": bool(list(loader)[0].is_shared()) for w, loader in light.items()}
    t = compare({f"workers_{w}": (lambda loader=loader: epoch(loader)) for w, loader in light.items()},
                rounds=9, warmup=1)
    batches = len(light[0])
    per_batch = {k: {key: (v / batches if key.endswith("_s") else v) for key, v in s.items()} for k, s in t.items()}
    return {
        "batch_size": light[0].batch_size,
        "batches": batches,
        "batch_is_shared": shared,
        "sharing_strategy": torch.multiprocessing.get_sharing_strategy(),
        "per_batch": per_batch,
        "per_batch_us": {k: v["median_s"] * 1e6 for k, v in per_batch.items()},
        "extra_per_batch": per_batch["workers_2"]["median_s"] - per_batch["workers_0"]["median_s"],
        "slowdown": ratio(t, "workers_2", "workers_0"),
    }
