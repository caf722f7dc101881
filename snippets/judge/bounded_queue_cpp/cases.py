"""Cases for bounded-queue-cpp: (kind, capacity, producers, consumers, n), see driver.cpp. Named cases first
(one thread, a full queue, an empty one, capacity 1), then thread counts and capacities drawn from the seed."""

import random


def cases(seed):
    rng = random.Random(seed)
    out = [
        ("单线程：先进先出", ("fifo", 4, 0, 0, 0)),
        ("满了 push 要阻塞，pop 一个之后才返回", ("full", 3, 0, 0, 0)),
        ("空了 pop 要阻塞，push 之后才返回", ("empty", 2, 0, 0, 0)),
        ("容量 1，两个生产者两个消费者", ("threads", 1, 2, 2, 300)),
        ("一个生产者一个消费者", ("threads", 4, 1, 1, 1000)),
    ]
    for k in range(4):
        out.append((f"随机线程数 #{k}", ("threads", rng.randint(1, 8), rng.randint(1, 4), rng.randint(1, 4),
                                     rng.randint(100, 500))))
    return out
