"""Reference for topo-sort-python: Kahn's algorithm; ``check`` accepts any valid order."""

from collections import deque


def reference(n, edges):
    indegree = [0] * n
    out = [[] for _ in range(n)]
    for u, v in edges:
        out[u].append(v)
        indegree[v] += 1
    ready = deque(i for i in range(n) if indegree[i] == 0)
    order = []
    while ready:
        u = ready.popleft()
        order.append(u)
        for v in out[u]:
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    if len(order) != n:
        raise ValueError("graph has a cycle")
    return order


def check(args, got):
    """(kind, detail) for each way ``got`` is not a topological order of the graph in ``args``."""
    n, edges = args
    if not isinstance(got, list) or not all(type(x) is int for x in got):
        return [("返回的不是整数列表", repr(got)[:120])]
    if sorted(got) != list(range(n)):
        return [("不是 0..n-1 的一个排列", f"长度 {len(got)}，应为 {n}")]
    place = {x: i for i, x in enumerate(got)}
    broken = [(u, v) for u, v in edges if place[u] > place[v]]
    return [("边的方向被违反", f"边 {u}→{v}：{v} 排在了 {u} 前面") for u, v in broken[:5]]
