"""Where a client is, from its address, offline: no request leaves the service.

The country comes from the ``iptocc`` package, whose wheel carries the Regional Internet Registries' delegation
data (IPv4 and IPv6, refreshed nightly by its releases) and looks an address up in about 0.1 microseconds
(docs/decisions.md, "Where the client is (issue 34)"). With ``LINKSVC_GEO_MMDB`` set, a MaxMind, DB-IP or
IPinfo ``.mmdb`` file read with ``maxminddb`` (memory-mapped) gives the region (ISO 3166-2, ``US-CA``) and the
city, and its country wins over the registries' where it has one. Private, loopback and unknown addresses
have no country. The address itself is never kept.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import iptocc

MAX_CITY = 200  # characters of a city name kept on a click


@dataclass(frozen=True, slots=True)
class Place:
    country: str | None
    region: str | None = None
    city: str | None = None


NOWHERE = Place(None)
_COUNTRIES: dict[str, Place] = {}  # a place of each country alone, made once


def registry_country(address: str) -> str | None:
    """The ISO 3166-1 alpha-2 country the registries assigned ``address`` to, or None (private, unknown, not an
    address). ``::ffff:a.b.c.d`` is looked up as ``a.b.c.d``."""
    if address.startswith("::ffff:"):
        address = address[7:]
    try:
        return iptocc.country_code(address) or None  # type: ignore[no-any-return]
    except (ValueError, TypeError):
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _name(value: Any) -> str | None:
    """A GeoIP2/DB-IP ``{"names": {"en": ...}}`` record's English name, or IPinfo's plain text."""
    if isinstance(value, dict):
        names = value.get("names")
        return _text(names.get("en")) if isinstance(names, dict) else None
    return _text(value)


def place_of_record(record: Any) -> Place:
    """A place from an ``.mmdb`` record of the GeoIP2 / DB-IP city layout (``country.iso_code``,
    ``subdivisions[0].iso_code``, ``city.names.en``) or of IPinfo's (``country_code``, ``region_code`` or
    ``region``, ``city``)."""
    if not isinstance(record, dict):
        return NOWHERE
    country_field = record.get("country")
    if isinstance(country_field, dict):
        country = _text(country_field.get("iso_code"))
    else:
        plain = _text(country_field)
        country = _text(record.get("country_code")) or (plain if plain and len(plain) == 2 else None)
    country = country.upper() if country else None
    region = None
    subdivisions = record.get("subdivisions")
    if isinstance(subdivisions, list) and subdivisions and isinstance(subdivisions[0], dict):
        code = _text(subdivisions[0].get("iso_code"))
        region = f"{country}-{code.upper()}" if code and country else None
    elif _text(record.get("region_code")) and country:
        region = f"{country}-{str(record['region_code']).upper()}"
    city = _name(record.get("city"))
    return Place(country, region, city[:MAX_CITY] if city else None)


class Geo:
    """The lookups of one process: the registries' countries, and an ``.mmdb`` file's places when given."""

    def __init__(self, mmdb: str | Path | None = None) -> None:
        self.mmdb_path = str(mmdb) if mmdb else None
        self._reader: Any = None
        if mmdb:
            import maxminddb  # only with LINKSVC_GEO_MMDB

            self._reader = maxminddb.open_database(str(mmdb), maxminddb.MODE_MMAP_EXT)

    @property
    def has_places(self) -> bool:
        """Whether regions and cities are known (an ``.mmdb`` file is read)."""
        return self._reader is not None

    def country(self, address: str) -> str | None:
        if self._reader is None:
            return registry_country(address)
        return self.place(address).country

    def place(self, address: str) -> Place:
        """Country, region and city of ``address`` (region and city only from an ``.mmdb`` file)."""
        if self._reader is None:
            country = registry_country(address)
            if country is None:
                return NOWHERE
            found = _COUNTRIES.get(country)
            if found is None:
                found = _COUNTRIES[country] = Place(country)
            return found
        try:
            record = self._reader.get(address.removeprefix("::ffff:") if address.startswith("::ffff:") else address)
        except ValueError:  # not an address; an IPv6 one in an IPv4-only file
            record = None
        found = place_of_record(record)
        if found.country is None:
            country = registry_country(address)
            return found if country is None else Place(country, None, found.city)
        return found

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def check_mmdb(path: str) -> str | None:
    """Why ``path`` cannot be read as an ``.mmdb`` file, or None."""
    try:
        Geo(path).close()
    except Exception as exc:  # noqa: BLE001 - any reason to refuse it is reported with the setting's name
        return f"it cannot be read as a MaxMind DB file ({exc})"
    return None


def parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found
