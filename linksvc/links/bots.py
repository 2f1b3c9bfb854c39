"""Which bot sent a click: the User-Agent against the crawler-user-agents list and a few patterns of our own.

The list is the ``crawler-user-agents`` package (about 1,500 regular expressions, each with example
strings), read once at import from the package's own data file. Its patterns are matched as upstream
matches them: case-sensitively, on the original string. Matched case-insensitively they would take many
more people for bots (the Airsonic player for the "Sonic" crawler, phones named "FEVER" for the "Fever" feed
reader: 156 instead of 88 of the 37,762 distinct people's strings of fake-useragent and Matomo's
device-detector fixtures, before the exceptions below).

One alternation of all the patterns costs far more than the resolver's budget, so the matcher works in two
steps. At start-up each pattern is reduced, by walking the parse tree Python's ``re`` builds of it, to a
small set of literals at least one of which every match must contain ("[wW]get" to "wget" or "Wget",
"Spider[\\s\\S]*spider\\.com" to "spider.com"). One Aho-Corasick automaton (``ahocorasick_rs``, in Rust)
over all those literals scans the string once; only the patterns that own a literal found are run, a
pattern that is itself a plain literal (most are) needs no run at all, and a pattern whose matches are
short is tried only where such a match could hold the literal found. A string with no hit, as nearly
every person's is, costs that one scan (about 1.5 µs).

Decisions:

- A pattern that Python's ``re`` does not compile (a later release may ship one) is skipped with a warning
  at start-up; the test suite compiles every pattern and fails on it, so an upgrade shows it.
- A few upstream patterns also match real people's browsers or phones; each is replaced by the narrowest
  form that still matches all of upstream's own examples (``NARROWED``; reasons in docs/decisions.md).
- Our own patterns add the link-preview fetchers the package lacks (``EXTRA``) and, last of all, the
  generic words that mark a crawler no list knows yet (``GENERIC``: "...bot", "crawler", "spider",
  "preview").
- The bot's name is the literal through which its pattern was found, lower-case and without a trailing
  version ("googlebot", "facebookexternalhit", "ahrefsbot" of "Ahrefs(Bot|SiteAudit)"), or for a pattern
  that is a web address the product token of its first example that carries the site's name
  ("yandex.com/bots" names "yandexbot"). Names come from a fixed set, so whatever a client sends, the set of
  names (and of cached Device objects) stays bounded. When several patterns match, one that names a
  product wins over one that is a web address, then upstream's order, then ours; a generic word names the
  bot only when nothing else does.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any, NamedTuple

import ahocorasick_rs

log = logging.getLogger(__name__)

PACKAGE = "crawleruseragents"
DATA_FILE = "crawler-user-agents.json"

NARROWED: dict[str, str] = {
    # upstream pattern: our narrower form (each still matches all of upstream's examples)
    "AP3A\\.240617\\.008": "AP3A\\.240617\\.008.*\\) NV/1",
    "Sogou": "Sogou(?!MSE|MobileBrowser|Search)",
    "Viber": "Viber(?!/)",
    "Sonic": "(?<!View)Sonic(?![\\s);])",
    "Butterfly": "Butterfly/",
    "Fever": "Fever/",
    "Expanse": "Expanse(?![);]| Build/)",
    "008\\/": "(?<![0-9A-Za-z])008/",
}
"""Upstream patterns that also match people's browsers, and the narrower form used instead."""

EXTRA: tuple[tuple[str, str, str], ...] = (
    # (pattern, name, an example); reasons in docs/decisions.md
    ("Bluesky Cardyb/", "bluesky cardyb", "Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)"),
    ("^http\\.rb/", "http.rb", "http.rb/5.2.0 (GoToSocial/0.16.0; +https://social.example/)"),
    ("^Misskey/", "misskey", "Misskey/2024.8.0 (https://misskey.example)"),
    ("^Pleroma ", "pleroma", "Pleroma 2.6.2; https://pleroma.example <admin@pleroma.example>"),
    ("^Akkoma ", "akkoma", "Akkoma 3.13.2; https://akkoma.example <admin@akkoma.example>"),
)
"""Link-preview fetchers the package does not match, each with its name and an example."""

GENERIC: tuple[tuple[str, str, str], ...] = (
    ("[a-z](?<![Cc]u)[Bb]ot(?![A-Za-z0-9_])", "bot", "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)"),
    ("[Cc]rawler", "crawler", "SomeCrawler/1.0"),
    ("[Ss]pider(?! ?[0-9])", "spider", "Mozilla/5.0 (compatible; ExampleSpider/2.0)"),
    ("[Pp]review", "preview", "LinkPreview/1.5 (http://linkpreview.net)"),
    ("[Ff]etcher|[Ss]canner|[Mm]onitor|[Cc]hecker|[Rr]obot(?!ic)|[Vv]alidator|[Ii]ndexer|[Aa]naly[sz]er|[Ee]xtractor"
     "|[Hh]eadless|[Pp]rerender|[Aa]rchiver|[Ss]craper|[Hh]arvester|[Ss]itemap|SEO|[Hh]ealth ?[Cc]heck",
     "tool", "Mozilla/5.0 (compatible; SiteScanner/2.1)"),
    ("\\+https?://|\\+www\\.", "self-described", "Acme/1.0 (+https://acme.example/about)"),
    ("^Mozilla/5\\.0 \\(compatible; [^;)]+(; \\+?https?://[^)]*)?\\)\\s*$", "compatible-only",
     "Mozilla/5.0 (compatible; Qwertz/1.0)"),
    ("\\$\\{", "probe", "${jndi:ldap://x.example/a}"),
)
"""Words that mark a crawler no list knows yet (a word ending in "bot", except the Cubot phone brand; "Spider"
but not the "Spider 8" tablet; the tools' words: scanner, monitor, checker, validator...), a "+http" address
(the crawlers' convention for "about this bot"), a bare "Mozilla/5.0 (compatible; Name/1.0)" that names no
system, and a template-injection probe ("${jndi:..."); they name a bot only when no listed pattern does. On
Matomo's fixtures these add about 150 of its bots and 11 of its 36,923 non-bot strings (podcast players that
give a "+http" address, phones named "Seoul" before "SEO" was made case-sensitive: none now)."""

_MAX_SET = 16
"""Most strings one literal set may hold (a pattern's character classes multiply them)."""

_MAX_WIDTH = 64
"""Patterns whose matches are at most this long are tried only next to the literals found."""

_FEW_HITS = 8
"""Beyond this many literals found in one string, each pattern found runs once over the whole string
instead of once per place (a string made of one literal repeated costs a few scans, not hundreds of tries)."""


class _Candidate(NamedTuple):
    """One pattern, as reached through one of its literals; candidates sort in the order they are tried."""

    rank: int  # 0: a product's name, 1: from a web address, 2: a generic word; lower wins, then the order given
    pattern: int  # its place in the order given
    name: str


class BotMatcher:
    """All the patterns behind one Aho-Corasick prefilter; ``name`` answers a string's bot name or None."""

    def __init__(self, entries: Iterable[tuple[str, str | None, str | None, bool]]) -> None:
        """``entries`` are (pattern, fixed name or None to derive one, first example or None, generic), in
        order; a generic pattern names a bot only when no other does."""
        self.sources: list[str] = []
        self.skipped: list[str] = []
        self._regexes: list[re.Pattern[str] | None] = []  # None: the pattern is exactly its literals
        self._widths: list[int | None] = []  # the longest match, if short: then only tried near a literal
        self._chains: list[tuple[frozenset[str], ...]] = []  # literals every match holds, in this order
        literals: dict[str, list[_Candidate]] = {}
        always: list[_Candidate] = []
        for source, fixed, example, generic in entries:
            cover, plain, chain, width = _analyse(source)
            try:
                regex = None if plain else re.compile(source)
            except re.error as error:
                log.warning("bot pattern %r does not compile and is skipped: %s", source, error)
                self.skipped.append(source)
                continue
            index = len(self.sources)
            self.sources.append(source)
            self._regexes.append(regex)
            self._widths.append(width)
            self._chains.append(chain)
            for literal in sorted(cover or ()):
                rank, name = _name(literal, example)
                literals.setdefault(literal, []).append(_Candidate(2 if generic else rank, index, fixed or name))
            if cover is None:
                rank, name = _name(source, example)
                always.append(_Candidate(2 if generic else rank, index, fixed or name))
        self._keys = list(literals)
        self._owners = [tuple(sorted(literals[key])) for key in self._keys]
        self._always = tuple(always)
        self._automaton = ahocorasick_rs.AhoCorasick(self._keys) if self._keys else None

    def name(self, text: str) -> str | None:
        """The bot's name if any pattern matches ``text`` (case-sensitively), else None."""
        try:
            hits = self._automaton.find_matches_as_indexes(text, overlapping=True) if self._automaton else []
        except UnicodeEncodeError:
            # A header that is not UTF-8 arrives with lone surrogates, which the automaton (Rust) cannot take:
            # each becomes U+FFFD (the patterns then run on that string too).
            text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
            hits = self._automaton.find_matches_as_indexes(text, overlapping=True) if self._automaton else []
        if len(hits) == 1 and not self._always:  # the usual bot: one literal found
            key, start, end = hits[0]
            for candidate in self._owners[key]:
                if self._confirm(candidate.pattern, text, ((start, end),)):
                    return candidate.name
            return None
        if not hits and not self._always:  # the usual person: nothing found
            return None
        if len(hits) > _FEW_HITS:  # many: each pattern found is run once over the string
            owners = self._owners
            found = {candidate for key in {hit[0] for hit in hits} for candidate in owners[key]}
            found.update(self._always)
            for candidate in sorted(found):
                if self._confirm(candidate.pattern, text, None):
                    return candidate.name
            return None
        spans: dict[_Candidate, list[tuple[int, int]]] = {candidate: [] for candidate in self._always}
        for key, start, end in hits:
            for candidate in self._owners[key]:
                spans.setdefault(candidate, []).append((start, end))
        for candidate in sorted(spans):
            if self._confirm(candidate.pattern, text, spans[candidate] or None):
                return candidate.name
        return None

    def _confirm(self, index: int, text: str, spans: Iterable[tuple[int, int]] | None) -> bool:
        """Whether pattern ``index`` matches, given where its literals were found (None: not told). A
        pattern whose matches are at most ``width`` long is tried only at the starts from which a match
        could hold a literal found: a few short tries instead of a scan of the whole string."""
        regex = self._regexes[index]
        if regex is None:
            return True
        width = self._widths[index]
        if width is None:  # a long match: first the literals it needs, in order (cheap), then the search
            return _in_order(text, self._chains[index]) and regex.search(text) is not None
        if spans is None:
            return regex.search(text) is not None
        match = regex.match
        for start, end in spans:
            for at in range(max(0, end - width), start + 1):
                if match(text, at):
                    return True
        return False

    def literal_count(self) -> int:
        """How many literals the prefilter looks for."""
        return len(self._keys)

    def unfiltered(self) -> list[str]:
        """Patterns with no required literal, which run on every string."""
        return [self.sources[candidate.pattern] for candidate in self._always]


def package_entries() -> list[dict[str, object]]:
    """The crawler-user-agents package's entries, read from its data file."""
    text = resources.files(PACKAGE).joinpath(DATA_FILE).read_text(encoding="utf-8")
    entries: list[dict[str, object]] = json.loads(text)
    return entries


def _matcher_entries(entries: list[dict[str, object]]) -> list[tuple[str, str | None, str | None, bool]]:
    out: list[tuple[str, str | None, str | None, bool]] = []
    for entry in entries:
        source = str(entry["pattern"])
        instances = entry.get("instances") or []
        example = str(instances[0]) if isinstance(instances, list) and instances else None
        out.append((NARROWED.get(source, source), None, example, False))
    out.extend((source, name, example, False) for source, name, example in EXTRA)
    out.extend((source, name, example, True) for source, name, example in GENERIC)
    return out


# --- required literals ---------------------------------------------------------------------------------

def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - a Python without it runs every pattern on every string
        return None


# The parser behind re.compile (private: a Python without it runs every pattern, slower but right).
_sre_parser = _import("re._parser")
_sre_constants = _import("re._constants")


_LITERAL = re.compile(r"(?:\\[^0-9A-Za-z]|[^\\.^$*+?{}\[\]|()])+")
_ESCAPE = re.compile(r"\\(.)")


def required_literals(source: str) -> tuple[frozenset[str] | None, bool]:
    """A set of literals at least one of which every match of ``source`` contains (None if there is none
    worth having), and whether the pattern matches exactly those literals and nothing else."""
    cover, plain, _chain, _width = _analyse(source)
    return cover, plain


def _analyse(source: str) -> tuple[frozenset[str] | None, bool, tuple[frozenset[str], ...], int | None]:
    """``required_literals``, then the literal sets every match holds one of each of, in this order and
    without overlap, and the longest match if at most ``_MAX_WIDTH`` (lookarounds and anchors take none)."""
    if _LITERAL.fullmatch(source):  # most patterns: a name, perhaps with escaped punctuation
        literal = _ESCAPE.sub(r"\1", source)
        return frozenset({literal}), True, (frozenset({literal}),), len(literal)
    if _sre_parser is None:
        return None, False, (), None
    try:
        parsed = _sre_parser.parse(source)
        high = int(parsed.getwidth()[1])
    except Exception:  # noqa: BLE001 - whatever the parser makes of it, the pattern is then run every time
        return None, False, (), None
    if parsed.state.flags & re.IGNORECASE:
        return None, False, (), None
    exact, cover, chain = _walk(list(parsed))
    width = high if high <= _MAX_WIDTH else None
    if exact and "" not in exact and not _has_zero_width(list(parsed)):
        return frozenset(exact), True, (frozenset(exact),), width  # it matches exactly these strings
    return cover, False, tuple(chain), width


def _in_order(text: str, chain: tuple[frozenset[str], ...]) -> bool:
    """Whether ``text`` holds one literal of each set of ``chain``, each after the one before."""
    at = 0
    for literals in chain:
        ends = [found + len(literal) for literal in literals if (found := text.find(literal, at)) >= 0]
        if not ends:
            return False
        at = min(ends)
    return True


def _walk(items: list[Any]) -> tuple[set[str] | None, frozenset[str] | None, list[frozenset[str]]]:
    """The exact strings the sequence matches (or None), the best required-literal set (or None), and every
    required-literal set found, in the order their literals come in a match."""
    c = _sre_constants
    run: set[str] = {""}
    exact: set[str] | None = {""}
    candidates: list[frozenset[str]] = []

    def close() -> None:
        nonlocal run
        if "" not in run:
            candidates.append(frozenset(run))
        run = {""}

    for op, arg in items:
        piece: set[str] | None = None
        inner_cover: frozenset[str] | None = None
        if op is c.LITERAL:
            piece = {chr(arg)}
        elif op is c.IN:
            piece = _class_chars(arg)
        elif op is c.SUBPATTERN:
            _group, add_flags, _del_flags, sub = arg
            if add_flags & re.IGNORECASE:
                piece, inner_cover = None, None
            else:
                piece, inner_cover, _ = _walk(list(sub))
        elif op is c.BRANCH:
            piece, inner_cover = _branch(arg[1])
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue  # zero-width: the characters either side are adjacent in the match
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, _high, sub = arg
            if low >= 1:
                inner = _walk(list(sub))
                inner_cover = frozenset(inner[0]) if inner[0] and "" not in inner[0] else inner[1]
        if piece is not None and exact is not None and len(exact) * len(piece) <= _MAX_SET:
            exact = {a + b for a in exact for b in piece}
        else:
            exact = None
        if piece is not None and "" not in piece and len(run) * len(piece) <= _MAX_SET:
            run = {a + b for a in run for b in piece}
            continue
        close()
        if piece is not None and "" not in piece:
            run = set(piece)
            continue
        if inner_cover is not None:
            candidates.append(inner_cover)
    close()
    best = max(candidates, key=_score, default=None)
    return exact, best, candidates


def _branch(alternatives: list[Any]) -> tuple[set[str] | None, frozenset[str] | None]:
    exact: set[str] | None = set()
    cover: set[str] | None = set()
    for alternative in alternatives:
        alt_exact, alt_cover, _ = _walk(list(alternative))
        if exact is not None and alt_exact is not None and len(exact) + len(alt_exact) <= _MAX_SET:
            exact |= alt_exact
        else:
            exact = None
        if alt_exact and "" not in alt_exact:
            whole = frozenset(alt_exact)
            if alt_cover is None or _score(whole) >= _score(alt_cover):
                alt_cover = whole
        if cover is not None and alt_cover is not None:
            cover |= alt_cover
        else:
            cover = None
    return exact, (frozenset(cover) if cover else None)


def _class_chars(items: list[Any]) -> set[str] | None:
    c = _sre_constants
    chars: set[str] = set()
    for op, arg in items:
        if op is not c.LITERAL:
            return None
        chars.add(chr(arg))
    return chars if 0 < len(chars) <= 4 else None


def _has_zero_width(items: list[Any]) -> bool:
    c = _sre_constants
    for op, arg in items:
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            return True
        if op is c.SUBPATTERN and _has_zero_width(list(arg[3])):
            return True
        if op is c.BRANCH and any(_has_zero_width(list(alt)) for alt in arg[1]):
            return True
    return False


def _score(cover: frozenset[str]) -> tuple[int, int]:
    return (min(len(literal) for literal in cover), -len(cover))


# --- names ---------------------------------------------------------------------------------------------

_ADDRESS = re.compile(r"[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}(?:[/_:].*)?", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def _name(literal: str, example: str | None) -> tuple[int, str]:
    """The rank and short lower-case name of a pattern found through ``literal``: the literal itself
    ("Googlebot/" names "googlebot"), or for a web address the product token of the pattern's first example
    that starts with the site's name ("yandex.com/bots" names "yandexbot"), else the site's name."""
    name = re.sub(r"^https?://", "", literal.lower()).split(" (", 1)[0]
    name = re.sub(r"^[^0-9a-z]+|[^0-9a-z]+$", "", name)
    name = re.sub(r"/[0-9.]*$", "", name) or literal.lower()
    if not _ADDRESS.fullmatch(name):
        return 0, name
    host = re.split(r"[/_:]", name, maxsplit=1)[0]
    labels = [label for label in host.split(".") if label not in ("www", "http", "https")]
    site = labels[-2] if len(labels) >= 2 else labels[0]
    for token in _TOKEN.findall(example or ""):
        token = token.lower().rstrip(".")
        if token.startswith(site) and token != site and "." not in token:
            return 1, re.sub(r"/[0-9.]*$", "", token)
    return 1, site


MATCHER = BotMatcher(_matcher_entries(package_entries()))
"""The package's patterns and ours, built once at import (about 50 ms)."""


def bot_name(text: str) -> str | None:
    """The name of the bot or fetcher that sent this User-Agent, or None for anything else. ``text`` is the
    original string (not lower-cased), already cut to the length the caller examines."""
    return MATCHER.name(text)
