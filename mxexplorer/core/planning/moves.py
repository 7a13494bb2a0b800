"""The moves of a local search over kept sets: near (one stage node moved by up to
three places, dropped, added; pairs) and wide (farther, and two at once)."""
from __future__ import annotations

from typing import Iterable, Mapping


def near_moves(kept: list[int], order: list[int], index: Mapping[int, int]
                ) -> list[tuple[int, ...]]:
    kept_set = set(kept)
    moves: list[tuple[int, ...]] = []
    for k, node in enumerate(kept):
        at = index.get(node)
        if at is None:
            continue
        for step in (-1, 1, -2, 2, -3, 3):
            j = at + step
            if 0 <= j < len(order) and order[j] not in kept_set:
                moves.append(tuple(sorted(kept[:k] + [order[j]] + kept[k + 1:])))
        moves.append(tuple(kept[:k] + kept[k + 1:]))
    for node in order:
        if node not in kept_set:
            moves.append(tuple(sorted(kept + [node])))
    for k, node in enumerate(order[:-1]):
        pair = {node, order[k + 1]}
        if not pair & kept_set:
            moves.append(tuple(sorted(kept + sorted(pair))))
        elif pair <= kept_set:
            moves.append(tuple(n for n in kept if n not in pair))
    return moves


def wide_moves(kept: list[int], order: list[int], index: Mapping[int, int]
                ) -> list[tuple[int, ...]]:
    kept_set = set(kept)
    at = [index.get(n) for n in kept]
    moves: list[tuple[int, ...]] = []

    def put(removed: Iterable[int], added: Iterable[int]) -> None:
        new = (kept_set - set(removed)) | set(added)
        moves.append(tuple(sorted(new)))

    for k, node in enumerate(kept):
        a = at[k]
        if a is None:
            continue
        for step in (4, -4, 5, -5, 6, -6, 8, -8):
            j = a + step
            if 0 <= j < len(order) and order[j] not in kept_set:
                put([node], [order[j]])
    for k in range(len(kept) - 1):
        a, b = at[k], at[k + 1]
        if a is None or b is None:
            continue
        for step in (-1, 1, -2, 2):
            ja, jb = a + step, b + step
            if 0 <= ja < len(order) and 0 <= jb < len(order):
                put([kept[k], kept[k + 1]], [order[ja], order[jb]])
        for step in (-1, 1, -2, 2):   # move one, drop its neighbour
            ja = a + step
            if 0 <= ja < len(order) and order[ja] not in kept_set:
                put([kept[k], kept[k + 1]], [order[ja]])
            jb = b + step
            if 0 <= jb < len(order) and order[jb] not in kept_set:
                put([kept[k], kept[k + 1]], [order[jb]])
    return moves
