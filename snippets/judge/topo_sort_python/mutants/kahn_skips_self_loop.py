from collections import deque


def topo_sort(n: int, edges: list[tuple[int, int]]) -> list[int]:
    indegree = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        if u == v:
            continue  # bug: a self-loop u→u is a cycle by itself, not an edge to leave out
        succ[u].append(v)
        indegree[v] += 1
    ready = deque(i for i in range(n) if indegree[i] == 0)
    order = []
    while ready:
        u = ready.popleft()
        order.append(u)
        for v in succ[u]:
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    if len(order) != n:
        raise ValueError("cycle")
    return order
