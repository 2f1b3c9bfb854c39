"""The preview fetchers are named as the bot matcher names them: each name of ``PREVIEW_FETCHERS`` is the name
the matcher gives at least one example string of the crawler list or of our own patterns (a typo, or an
upstream change of a pattern, would otherwise silently send that fetcher the 302 again)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from linksvc.links.bots import DATA_FILE, EXTRA, PACKAGE, bot_name
from linksvc.links.devices import classify
from linksvc.links.previews import PREVIEW_FETCHERS, is_preview_fetcher, merge_card, shows_card
from storage.link_previews import PreviewDefaults


def _examples() -> list[str]:
    listed = json.loads(resources.files(PACKAGE).joinpath(DATA_FILE).read_text(encoding="utf-8"))
    return [*(example for entry in listed for example in entry.get("instances", [])),
            *(example for _, _, example in EXTRA)]


def test_every_preview_fetcher_name_is_one_the_matcher_gives() -> None:
    given = {bot_name(example) for example in _examples()}
    assert given >= PREVIEW_FETCHERS, sorted(PREVIEW_FETCHERS - given)


def test_generic_names_and_people_never_get_the_preview() -> None:
    assert not PREVIEW_FETCHERS & {"bot", "crawler", "spider", "preview", "tool", "self-described",
                                   "compatible-only", "probe"}
    assert not is_preview_fetcher(classify("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"))
    iphone = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
              "Version/17.5 Mobile/15E148 Safari/604.1")
    assert not is_preview_fetcher(classify(iphone))
    assert is_preview_fetcher(classify("WhatsApp/2"))


_FIELD = st.one_of(st.none(), st.just(""), st.text(min_size=1, max_size=5))


@given(own=st.fixed_dictionaries({}, optional={"title": _FIELD, "description": _FIELD, "image_url": _FIELD}),
       defaults=st.one_of(st.none(), st.builds(PreviewDefaults, st.just("a"), _FIELD, _FIELD, _FIELD, _FIELD,
                                                st.just("2026-11-28T00:00:00Z"))))
def test_the_lane_reads_a_card_where_the_preview_page_makes_one(own: dict[str, Any],
                                                                 defaults: PreviewDefaults | None) -> None:
    # The resolver's lane answers a preview fetcher with the bots' 302 only when shows_card says no card: exactly
    # when the handler's merge_card makes none.
    assert shows_card(own, defaults) == (merge_card(own, defaults, "https://shop.example/p") is not None)
