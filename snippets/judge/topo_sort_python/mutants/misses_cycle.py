from collections import deque


def topo_sort(n: int, edges: list[tuple[int, int]]) -> list[int]:
    indegree = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
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
    return order  # bug: never checks len(order) == n
