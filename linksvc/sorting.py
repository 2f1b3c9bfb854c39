"""The ``sort`` parameter of the admin API's paged lists (issue 36): a key the list names, with a ``-`` before it
for the other way round (``-clicks``: most first; ``code``: A first), as in JSON:API's ``sort``. Each list takes
its own keys (its query model lists them, so an unknown key is a 400 naming the allowed ones) and its default."""

from __future__ import annotations


def order_of(sort: str) -> tuple[str, bool]:
    """The key ``sort`` names and whether it is descending (written ``-key``)."""
    return (sort[1:], True) if sort.startswith("-") else (sort, False)
