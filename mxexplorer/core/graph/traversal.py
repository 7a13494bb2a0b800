"""Walking a graph's nodes: output counts, the checks MXNet would crash without
(references, cycles), and MXNet's node order."""
from __future__ import annotations

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.model import Entry, Node, file_error


def output_count(node: Node, row_hint: int | None) -> int:
    """Total outputs of a node (1 for variables)."""
    if node.is_variable:
        return 1
    total, _ = opinfo.outputs(node.op, node.attrs, row_hint)
    return total


def validate(nodes: list[Node], heads: list[Entry], row_hints: list[int] | None) -> None:
    """Refuse graphs MXNet would crash on: dangling or impossible references, cycles;
    and declared counts past what any real graph has, before anything is made of them."""
    n = len(nodes)
    for i, node in enumerate(nodes):
        if not node.is_variable:
            opinfo.check_declared(node.op, node.attrs, node.name, len(node.inputs),
                                  row_hints[i] if row_hints else None)
    counts = [output_count(node, row_hints[i] if row_hints else None)
              for i, node in enumerate(nodes)]

    def check(entry: Entry, where: str, what: str) -> None:
        src, index, _ = entry
        if not 0 <= src < n:
            raise file_error(f"{what} refers to node {src}, but the graph has {n} nodes "
                        f"(0 to {n - 1})", where)
        if not 0 <= index < counts[src]:
            prod = nodes[src]
            plural = "output" if counts[src] == 1 else "outputs"
            raise file_error(f"{what} asks for output {index} of node {src} {prod.name!r} "
                        f"({prod.op}), which has {counts[src]} {plural}", where)

    for i, node in enumerate(nodes):
        for k, entry in enumerate(node.inputs):
            check(entry, f"node {i} {node.name!r}", f"input {k}")
        deps = node.extra.get("control_deps", [])
        if isinstance(deps, list):
            for d in deps:
                if not isinstance(d, int) or not 0 <= d < n:
                    raise file_error(f"control dependency {d!r} is not a node index",
                                f"node {i} {node.name!r}")
    for k, entry in enumerate(heads):
        check(entry, "heads", f"head {k}")
    _check_acyclic(nodes)


def _check_acyclic(nodes: list[Node]) -> None:
    state = [0] * len(nodes)  # 0 new, 1 on stack, 2 done
    pred_lists = [_preds(n) for n in nodes]      # once: a 100,000-input add_n
    for start in range(len(nodes)):
        if state[start]:
            continue
        stack: list[tuple[int, int]] = [(start, 0)]
        state[start] = 1
        while stack:
            i, k = stack[-1]
            preds = pred_lists[i]
            if k < len(preds):
                stack[-1] = (i, k + 1)
                j = preds[k]
                if state[j] == 1:
                    cycle = [nodes[s].name for s, _ in stack[[s for s, _ in stack].index(j):]]
                    raise file_error("the graph has a cycle: " + " -> ".join(
                        repr(c) for c in cycle[:6]) + (" ..." if len(cycle) > 6 else ""),
                                f"node {j} {nodes[j].name!r}")
                if state[j] == 0:
                    state[j] = 1
                    stack.append((j, 0))
            else:
                state[i] = 2
                stack.pop()


def _preds(node: Node) -> list[int]:
    preds = [e[0] for e in node.inputs]
    deps = node.extra.get("control_deps")
    if isinstance(deps, list):
        preds.extend(d for d in deps if isinstance(d, int))
    return preds


def dfs_order(nodes: list[Node], heads: list[Entry]) -> list[int]:
    """Post-order DFS from the heads, the order of MXNet's ``DFSVisit``."""
    seen = [False] * len(nodes)
    order: list[int] = []
    pred_lists: dict[int, list[int]] = {}
    for head in heads:
        root = head[0]
        if seen[root]:
            continue
        seen[root] = True
        stack: list[tuple[int, int]] = [(root, 0)]
        while stack:
            i, k = stack[-1]
            preds = pred_lists.get(i)
            if preds is None:
                preds = pred_lists[i] = _preds(nodes[i])
            if k < len(preds):
                stack[-1] = (i, k + 1)
                j = preds[k]
                if not seen[j]:
                    seen[j] = True
                    stack.append((j, 0))
            else:
                order.append(i)
                stack.pop()
    return order
