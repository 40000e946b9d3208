"""``rotation.steps``' fast path for a layout whose rows each take one pod (``Layout.single``:
whole-node pods, NASA under ``pod`` and ``permit``): the searches that scan every row take the
live rows in key order instead of popping a heap. A/B against the heap (the same layout with
``single`` off) over generated layouts, and a layout with a row that takes two pods, which keeps
the heap."""

from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim.scheduler.fastpath import rotation


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[int, int, int, list[int], list[tuple[tuple[int, int], ...]], int]:
    n = draw(st.integers(1, 40))
    positions = sorted(draw(st.sets(st.integers(0, n - 1), min_size=0, max_size=n)))
    rows = draw(st.permutations(range(n)))  # the row at each search position (distinct)
    totals = [draw(st.integers(0, 3)) * 50 for _ in positions]  # few totals: ties, broken by row
    keys = [((-t, rows[p]),) for t, p in zip(totals, positions)]
    to_find = draw(st.integers(1, n))
    start = draw(st.integers(0, n - 1))
    searches = draw(st.integers(0, len(positions) + 3))  # more than the rows hold: the last find none
    return n, to_find, start, positions, keys, searches


@settings(max_examples=400, deadline=None)
@given(_layouts())
def test_single_layout_steps_equal_the_heaps(case: tuple) -> None:
    n, to_find, start, positions, keys, searches = case
    fast = rotation.Layout(positions, keys, kept=False)
    assert fast.single
    reference = rotation.Layout(positions, keys, kept=False)
    reference.single = False  # the heap path, which every layout took before
    assert list(rotation.steps(n, to_find, start, fast, searches)) == list(rotation.steps(n, to_find, start, reference, searches))


def test_a_row_that_takes_two_pods_is_not_single() -> None:
    layout = rotation.Layout([0, 3], [((-100, 0),), ((-100, 3), (-50, 3))], kept=False)
    assert not layout.single
    # the heap path: row 0 (least key), then row 3 twice, then none left
    assert [pos for _, _, pos in rotation.steps(4, 4, 0, layout, 4)] == [0, 3, 3, -1]
