def topo_sort(n: int, edges: list[tuple[int, int]]) -> list[int]:
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        succ[u].append(v)
    seen = [False] * n  # bug: one flag, so a back edge looks like a finished node
    order: list[int] = []
    for root in range(n):
        if seen[root]:
            continue
        stack = [(root, 0)]
        seen[root] = True
        while stack:
            u, i = stack.pop()
            if i < len(succ[u]):
                stack.append((u, i + 1))
                v = succ[u][i]
                if not seen[v]:
                    seen[v] = True
                    stack.append((v, 0))
            else:
                order.append(u)
    return order[::-1]
