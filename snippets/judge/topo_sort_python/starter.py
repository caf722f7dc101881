def topo_sort(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """0..n-1 in an order where every edge u -> v has u first; ValueError when the graph has a cycle."""
    raise NotImplementedError
