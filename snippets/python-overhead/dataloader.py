"""DataLoader workers: separate processes, so pure-Python transforms run outside the GIL."""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ThreadPoolExecutor

from snippets._workloads.overhead import epoch, make_loader, python_transform
from verify.claim import claim
from verify.timing import compare, ratio

Q = "python-overhead"


@claim(
    "dataloader.worker-processes",
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
    statement="加速比的理想值是 min(workers, 空闲核数)，本机一共 {cores} 个核，所以最多是 {ideal}；实测 2 个 worker 进程快"
              " {speedup.workers_2:x}，同一时刻两个裸进程（`multiprocessing.Pool`）快 {speedup.pool_2:x}，DataLoader 的加速比"
              "是裸进程的 {workers_vs_pool:pct}；同样的纯 Python 变换交给 2 个线程则是 {speedup.threads_2:x}，GIL 让它们轮流执行，"
              "几乎没有加速。",
    kind="perf",
    needs=["multicore"],
    expect={"workers_vs_pool": {">=": 0.6}, "threads_speedup": {"<=": 1.5}},
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
                     "threads_2": lambda: list(threads.map(python_transform, items))}, rounds=5, warmup=1)
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
        "workers_vs_pool": speedup["workers_2"] / speedup["pool_2"],
        "threads_vs_pool": speedup["threads_2"] / speedup["pool_2"],
        "threads_speedup": speedup["threads_2"],
    }
