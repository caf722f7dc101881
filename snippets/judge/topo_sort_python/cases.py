"""Cases for topo-sort-python: named edge cases, then random graphs drawn from the seed. The three-node cycle comes
before the self-loop: a DFS without a gray state fails first on it, and a self-loop left out fails only on the
self-loop, so each is told apart."""

import random


def _dag(rng, n, m):
    perm = list(range(n))
    rng.shuffle(perm)
    edges = []
    for _ in range(m):
        a, b = sorted(rng.sample(range(n), 2))
        edges.append((perm[a], perm[b]))
    return edges


def cases(seed):
    rng = random.Random(seed)
    chain = [(i, i + 1) for i in range(1999)]
    out = [
        ("空图 n=0", (0, [])),
        ("单点无边", (1, [])),
        ("三点环", (4, [(0, 1), (1, 2), (2, 3), (3, 1)])),
        ("自环", (3, [(0, 1), (1, 1)])),
        ("重复边", (3, [(0, 1), (0, 1), (1, 2)])),
        ("不连通", (6, [(5, 4), (3, 2)])),
        ("菱形", (4, [(0, 1), (0, 2), (1, 3), (2, 3)])),
        ("长链 2000 点（递归过深）", (2000, chain[::-1])),
        ("长链尾部成环", (2000, chain + [(1999, 1000)])),
    ]
    for k in range(6):
        n = rng.randint(2, 60)
        edges = _dag(rng, n, rng.randint(0, 3 * n))
        if k % 2 and edges:
            u, v = rng.choice(edges)
            edges.append((v, u))  # a back edge: a cycle
        out.append((f"随机图 #{k}", (n, edges)))
    return out
