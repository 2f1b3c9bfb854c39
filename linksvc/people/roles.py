"""Roles and permissions: what each role of an account may do (docs/decisions.md, "People and roles").

Every admin route declares one permission (``api.routing.Endpoint.permission``):

- ``operator``: only the operator token (and a session opened with it): managing accounts and people;
- ``self``: any person signed in to the dashboard, about themselves (profile, password, second factor,
  personal tokens); never a personal token, so that a leaked token cannot mint others or change a password;
- ``<area>:read`` and ``<area>:write`` of an account: granted by the role a person has in that account.

The operator is granted everything but ``self``. A role's grants are a set; a personal token's role may be any
role whose grants are within those of its person's role (:func:`within`), so "no higher" holds for roles that
are not ranked against each other too (a marketer cannot make a developer token, nor a developer a marketer one).
"""

from __future__ import annotations

from typing import Final

ROLES: Final = ("owner", "admin", "marketer", "analyst", "developer")
OPERATOR: Final = "operator"
SELF: Final = "self"

# The areas of an account, each read and written as one.
AREAS: Final = (
    "account",  # the account's own record (its name and environment)
    "members",  # members, invitations, their password resets; transfer of ownership
    "keys",  # API keys
    "domains",  # custom domains
    "connections",  # forwarding connections and their secrets
    "deliveries",  # deliveries, retries, test sends, dead letters
    "links",  # links, their rules, variants, previews, QR codes, imports
    "campaigns",  # campaigns and their catalog: brands, tiers, rewards, custom event types
    "customers",  # customers and contacts
    "events",  # events, their lineage, customers' paths
    "reports",  # reports (read only)
    "audit",  # the audit log (read only)
)

_READ_ALL = frozenset(f"{area}:read" for area in AREAS if area != "audit")


def _writes(*areas: str) -> frozenset[str]:
    return frozenset(f"{area}:write" for area in areas)


GRANTS: Final[dict[str, frozenset[str]]] = {
    # members, keys, domains, connections: everything
    "owner": _READ_ALL | {"audit:read"} | _writes(*(a for a in AREAS if a not in ("reports", "audit", "events"))),
    # all but members and ownership
    "admin": _READ_ALL | {"audit:read"} | _writes("account", "keys", "domains", "connections", "deliveries", "links",
                                                 "campaigns", "customers"),
    # links (their rules, previews, variants, imports), reports, and read the rest
    "marketer": _READ_ALL | _writes("links"),
    # read only
    "analyst": _READ_ALL,
    # API keys, connections, deliveries, and read the rest
    "developer": _READ_ALL | _writes("keys", "connections", "deliveries"),
}

PERMISSIONS: Final = frozenset({OPERATOR, SELF} | {f"{a}:{m}" for a in AREAS for m in ("read", "write")})


def is_permission(permission: str) -> bool:
    return permission in PERMISSIONS


def grants(role: str, permission: str) -> bool:
    """Whether a member with ``role`` may do what ``permission`` names in their account."""
    return permission in GRANTS.get(role, frozenset())


def within(role: str, cap: str) -> bool:
    """Whether ``role`` grants nothing that ``cap`` does not (a token's role under its person's)."""
    return GRANTS[role] <= GRANTS[cap]


def account_scoped(permission: str) -> bool:
    return permission not in (OPERATOR, SELF)
