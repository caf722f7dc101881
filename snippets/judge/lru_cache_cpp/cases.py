"""Cases for lru-cache-cpp: (capacity, ops), each op ("put", key, value) or ("get", key); named cases first,
then random ones drawn from the seed, then one large enough that a linear search per operation runs out of time."""

import random


def _gets(*keys):
    return [("get", k) for k in keys]


def _ops(rng, n, keys):
    return [("put", rng.randrange(keys), rng.randrange(1000)) if rng.random() < 0.5 else ("get", rng.randrange(keys))
            for _ in range(n)]


def cases(seed):
    rng = random.Random(seed)
    put = [("put", k, 100 + k) for k in range(1, 6)]
    out = [
        ("容量 0：put 之后 get 仍是 -1", (0, [("put", 1, 1), ("get", 1), ("put", 2, 2), ("get", 2)])),
        ("满了淘汰最久未用的", (2, [*put[:3], *_gets(1, 2, 3)])),
        ("满了时 put 已有的 key：不淘汰别人", (2, [*put[:2], ("put", 2, 20), *_gets(1, 2)])),
        ("get 命中算一次使用", (3, [*put[:3], ("get", 1), *put[3:5], *_gets(1, 2, 3, 4, 5)])),
        ("put 已有的 key 算一次使用并更新值", (3, [*put[:3], ("put", 1, 10), *put[3:5], *_gets(1, 2, 3, 4, 5)])),
        ("容量 1", (1, [("put", 1, 1), ("put", 2, 2), *_gets(1, 2), ("put", 2, 3), *_gets(2)])),
        ("负数的 key 和值", (2, [("put", -1, -5), ("put", 0, 0), *_gets(-1, 0, 7)])),
    ]
    for k in range(8):
        capacity = rng.randint(1, 6)
        out.append((f"随机操作 #{k}", (capacity, _ops(rng, rng.randint(20, 80), 2 * capacity + 2))))
    out.append(("20 万次操作，容量 5 万（要求 O(1)）", (50_000, _ops(rng, 200_000, 100_000))))
    return out
