"""``rotation.sort_key``: ``select_host``'s order (total descending, then row) packed into one int
so that ``rotation.steps`` compares keys at C speed; ``row_keys`` packs the same over arrays."""

from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim.scheduler.fastpath import rotation


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-10_000, 10_000), st.integers(0, rotation.ROW_SPAN - 1)), min_size=2, max_size=20))
def test_sort_key_orders_as_minus_total_then_row(pairs: list[tuple[int, int]]) -> None:
    assert sorted(pairs, key=lambda tr: rotation.sort_key(*tr)) == sorted(pairs, key=lambda tr: (-tr[0], tr[1]))
