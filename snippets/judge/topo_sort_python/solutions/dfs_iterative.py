def topo_sort(n: int, edges: list[tuple[int, int]]) -> list[int]:
    succ: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        succ[u].append(v)
    state = [0] * n  # 0 unseen, 1 on the stack, 2 done
    order: list[int] = []
    for root in range(n):
        if state[root]:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            u, i = stack.pop()
            if i < len(succ[u]):
                stack.append((u, i + 1))
                v = succ[u][i]
                if state[v] == 1:
                    raise ValueError("cycle")
                if state[v] == 0:
                    state[v] = 1
                    stack.append((v, 0))
            else:
                state[u] = 2
                order.append(u)
    return order[::-1]
