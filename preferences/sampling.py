"""Which pairs of reports PrefNugget compares (pure: no ORM).

Per topic the reports are sorted by run id. The report at index i of n takes the other n-1 starting
after it (`others = r[i+1:] + r[:i]`), a stride of max(1, (n-1) // 4), a phase of i % gcd(stride, n-1),
and partners `others[phase::stride][:4]`. Each unordered pair is emitted once, the first time it is
seen, with the sampling report as passage 1 (the reference's defaults: no pivots, four others, no
duplicates). n = 10 gives 25 pairs; n = 57 gives 218.
"""

from collections.abc import Sequence
from math import gcd

PARTNERS = 4  # the reference's num_others


def report_pairs(run_ids: Sequence[str], *, partners: int = PARTNERS) -> list[tuple[str, str]]:
    """The (passage 1, passage 2) run ids of one topic's compared pairs, in the reference's order."""
    ordered = sorted(run_ids)
    seen: set[tuple[str, str]] = set()
    pairs: list[tuple[str, str]] = []
    for index, run_id in enumerate(ordered):
        for other in _partners(ordered, index, partners):
            if (run_id, other) in seen:
                continue
            seen.update({(run_id, other), (other, run_id)})
            pairs.append((run_id, other))
    return pairs


def _partners(ordered: list[str], index: int, partners: int) -> list[str]:
    others = ordered[index + 1 :] + ordered[:index]
    if not others:
        return []
    stride = max(1, len(others) // partners)
    phase = index % gcd(stride, len(others))
    return others[phase::stride][:partners]
