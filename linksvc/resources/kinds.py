"""What differs between resource kinds: filter columns, references, side tables, computed fields.

:class:`Kind` is the plain case (a document and nothing else); the subclasses add what their resource
needs. The generic create/read/update/delete flow lives in :mod:`linksvc.resources.service`.
"""

from __future__ import annotations

import secrets
import string
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

from linksvc.campaigns.status import campaign_status
from linksvc.clock import iso, parse_iso, utcnow
from linksvc.customers import people
from linksvc.customers.wallet import load_wallet
from linksvc.errors import Conflict, Issues
from linksvc.forwarding import click_hooks
from linksvc.forwarding.configs import CONFIGS
from linksvc.forwarding.webhook_secrets import check_secrets, new_secret
from linksvc.links import passwords
from linksvc.redaction import SECRET_MASK as SECRET_MASK  # where the tests and older callers look for it
from linksvc.redaction import mask_config, unmask_config
from linksvc.resources import models
from linksvc.resources.types import phone_digits
from linksvc.resources.urls import check_destination_url
from linksvc.resources.validation import validate
from storage import campaigns as campaign_repo
from storage import customers as customer_repo
from storage import documents
from storage import domains as domain_repo
from storage import events as event_repo
from storage import link_tags as link_tag_repo
from storage import links as link_repo
from storage import wallet as wallet_repo
from storage.db import Conn, Tx

_BASE62 = string.ascii_letters + string.digits
_LINE_NAMESPACE = uuid.UUID("b7f9d6a2-3c1e-4c55-9a0d-2f7e8a6c1b44")
# Codes that would shadow the service's own paths.
RESERVED_CODES = frozenset({"api", "healthz", "readyz", "metrics", "dashboard", "static", "favicon.ico"})


@dataclass
class SaveContext:
    """One save: the open write transaction, the account, where errors point (seed paths) and the issues
    found so far (every check adds to them; the save is refused once, naming them all)."""

    tx: Tx
    account_id: str
    prefix: str
    allow_private_destinations: bool
    existing: dict[str, Any] | None
    now: str
    issues: Issues = field(default_factory=Issues)
    # Ids of objects refused earlier in the same seed file: a reference to one is not another problem.
    refused: frozenset[str] = frozenset()

    def path(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def add(self, name: str, message: str, rule: str) -> None:
        self.issues.add(self.path(name), message, rule)

    async def require(self, table: str, doc_id: Any, name: str, label: str) -> None:
        """A reference (a uuid of the account's ``table``) as sent: one that is not a uuid is its field's own
        issue already, so only a well-formed id is looked up."""
        if not isinstance(doc_id, str) or self.issues.covers(self.path(name)):
            return
        try:
            doc_id = str(uuid.UUID(doc_id))
        except ValueError:
            return
        if doc_id in self.refused:
            return
        if not await documents.exists(self.tx, table, self.account_id, doc_id):
            self.add(name, f"no {label} with id {doc_id} in this account", "unknown_reference")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


class Kind:
    name: ClassVar[str]
    label: ClassVar[str]
    model: ClassVar[type[BaseModel]]

    def columns(self, item: Any) -> dict[str, Any]:
        return {}

    async def check(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        """The rules beyond each field's own (references, fields that depend on others), over the data as
        sent, so that they run even when some field is invalid: each adds its issue to ``ctx.issues``."""

    async def prepare(self, ctx: SaveContext, item: Any) -> Any:
        """Fill derived fields of a valid item; raise Conflict for a value another document holds."""
        return item

    async def after_write(self, ctx: SaveContext, item: Any) -> None:
        """Write side tables from the saved document; runs when the document is new or changed."""

    async def extras(self, conn: Conn, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Computed fields added to the view."""
        return {}

    def public(self, body: dict[str, Any]) -> dict[str, Any]:
        """The stored body as it may be shown (secrets masked)."""
        return body

    def restore_hidden(self, stored: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        """An update body with the values :meth:`public` hid put back as they were stored."""
        return given

    def generated(self, data: Any) -> tuple[Any, dict[str, Any]]:
        """A create body with the values the service makes when they are left out, and those values as they
        are shown once, in the create response (a webhook's signing secret)."""
        return data, {}


class BrandKind(Kind):
    name, label, model = "brands", "brand", models.Brand


class TierKind(Kind):
    name, label, model = "tiers", "tier", models.Tier

    def columns(self, item: models.Tier) -> dict[str, Any]:
        return {"level": float(item.level)}


class RewardKind(Kind):
    name, label, model = "rewards", "reward", models.Reward

    async def extras(self, conn: Conn, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"account_id": account_id}


class CampaignKind(Kind):
    name, label, model = "campaigns", "campaign", models.Campaign

    def columns(self, item: models.Campaign) -> dict[str, Any]:
        def when(moment: Any) -> str | None:
            return None if moment is None else iso(moment)

        return {
            "type": item.type,
            "brand_id": item.brand_id,
            "funded_by": item.funded_by,
            "starts_at": when(item.starts_at),
            "ends_at": when(item.ends_at),
            "paused": int(item.paused),
            "finished_at": when(item.finished_at),
            "sort_order": float(item.order),
            "stores_any": int(item.stores is None),
            "channels_any": int(item.channels is None),
            "products_any": int(item.products is None),
        }

    async def check(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if data.get("codes") is not None and kind in models.CAMPAIGN_TYPES and kind != "COUPONS":
            ctx.add("codes", "codes are only for COUPONS campaigns", "not_allowed")
        await ctx.require("brands", data.get("brand_id"), "brand_id", "brand")
        for i, tier_id in enumerate(_list(data.get("tier_ids"))):
            await ctx.require("tiers", tier_id, f"tier_ids[{i}]", "tier")
        attributes = data.get("attributes", {})
        if kind == "BEHAVIOR" and isinstance(attributes, dict):
            # Conditions and amounts are checked now, so that a bad campaign is refused when saved.
            with ctx.issues.collect():
                validate(models.BehaviorAttributes, attributes, prefix=ctx.path("attributes"))
            await ctx.require("rewards", attributes.get("reward_id"), "attributes.reward_id", "reward")

    async def after_write(self, ctx: SaveContext, item: models.Campaign) -> None:
        for dimension, values in (("store", item.stores), ("channel", item.channels), ("product", item.products)):
            await campaign_repo.replace_restrictions(ctx.tx, item.id, dimension, values)
        if item.codes is not None or (ctx.existing is not None and item.type != "COUPONS"):
            codes = [(c.code, c.status, None if c.expires_at is None else iso(c.expires_at)) for c in item.codes or []]
            await campaign_repo.replace_codes(ctx.tx, item.id, codes)

    async def extras(self, conn: Conn, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
        def when(key: str) -> Any:
            return None if body.get(key) is None else parse_iso(body[key])

        status = campaign_status(utcnow(), when("starts_at"), when("ends_at"), body["paused"], when("finished_at"))
        extra: dict[str, Any] = {"status": status}
        if body["type"] == "COUPONS":
            rows = await campaign_repo.list_codes(conn, body["id"])
            extra["codes"] = [asdict(row) for row in rows]
        return extra


class ContactKind(Kind):
    name, label, model = "contacts", "contact", people.Contact

    def columns(self, item: people.Contact) -> dict[str, Any]:
        return {
            "external_id": item.external_id,
            "email_lower": item.email.lower() if item.email else None,
            "document_number": item.document_number,
            "deleted_at": None if item.deleted_at is None else iso(item.deleted_at),
        }


class CustomerKind(Kind):
    name, label, model = "customers", "customer", people.Customer

    def columns(self, item: people.Customer) -> dict[str, Any]:
        return {
            "external_id": item.external_id,
            "document_number": item.document_number,
            "phone_digits": phone_digits(item.phone),
            "email_lower": item.email.lower() if item.email else None,
            "tier_id": item.tier_id,
        }

    async def check(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        await ctx.require("tiers", data.get("tier_id"), "tier_id", "tier")
        for i, line in enumerate(_list(_dict(data.get("wallet")).get("lines"))):
            at = f"wallet.lines[{i}]"
            await ctx.require("rewards", _dict(line).get("reward_id"), f"{at}.reward_id", "reward")
            await ctx.require("campaigns", _dict(line).get("campaign_id"), f"{at}.campaign_id", "campaign")
            await ctx.require("brands", _dict(line).get("brand_id"), f"{at}.brand_id", "brand")

    async def prepare(self, ctx: SaveContext, item: people.Customer) -> people.Customer:
        for column, value in (("external_id", item.external_id), ("document_number", item.document_number)):
            if value is None:
                continue
            if await customer_repo.other_customer_with(ctx.tx, ctx.account_id, column, value, item.id) is not None:
                raise Conflict(
                    "Duplicate customer", {"field": ctx.path(column), "message": f"another customer has this {column}"}
                )
        return item

    async def after_write(self, ctx: SaveContext, item: people.Customer) -> None:
        if item.wallet is None:
            return
        created = ctx.existing["created_at"] if ctx.existing else ctx.now
        lines = []
        for index, line in enumerate(item.wallet.lines):
            lines.append(
                wallet_repo.WalletLine(
                    id=str(uuid.uuid5(_LINE_NAMESPACE, f"{item.id}:{index}")),
                    account_id=ctx.account_id,
                    customer_id=item.id,
                    reward_id=line.reward_id,
                    campaign_id=line.campaign_id,
                    brand_id=line.brand_id,
                    amount=line.amount,
                    issued_at=iso(line.issued_at) if line.issued_at else created,
                    expiration_date=iso(line.expiration_date) if line.expiration_date else None,
                    reservation_expires_at=(
                        iso(line.reservation_expires_at) if line.reservation_expires_at else None
                    ),
                    source="opening",
                )
            )
        await wallet_repo.replace_opening_lines(ctx.tx, ctx.account_id, item.id, lines, ctx.now)

    async def extras(self, conn: Conn, account_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"wallet": await load_wallet(conn, account_id, body["id"])}


class CustomEventTypeKind(Kind):
    name, label, model = "custom_event_types", "custom event type", models.CustomEventType

    def columns(self, item: models.CustomEventType) -> dict[str, Any]:
        return {"name": item.name, "active": int(item.active)}

    async def prepare(self, ctx: SaveContext, item: models.CustomEventType) -> models.CustomEventType:
        if await event_repo.other_custom_type_named(ctx.tx, ctx.account_id, item.name, item.id) is not None:
            raise Conflict("Duplicate event type", {"field": ctx.path("name"), "message": "name is taken"})
        return item


class ConnectionKind(Kind):
    name, label, model = "connections", "connection", models.Connection

    def columns(self, item: models.Connection) -> dict[str, Any]:
        return {"destination": item.destination, "enabled": int(item.enabled)}

    def restore_hidden(self, stored: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        # A masked secret or URL credential sent back (by PUT or PATCH) keeps the stored one.
        if isinstance(given.get("config"), dict):
            return {**given, "config": unmask_config(given["config"], stored.get("config"))}
        return given

    def generated(self, data: Any) -> tuple[Any, dict[str, Any]]:
        config = data.get("config") if isinstance(data, dict) else None
        if not isinstance(data, dict) or data.get("destination") != "webhook" or not isinstance(config or {}, dict):
            return data, {}
        if (config or {}).get("secret") is not None:
            return data, {}
        secret = new_secret()
        return {**data, "config": {**(config or {}), "secret": secret}}, {"config": {"secret": secret}}

    async def check(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        await self._check_event_types(ctx, data.get("event_types"))
        config = data.get("config", {})
        if not isinstance(config, dict):
            return  # the field's own issue
        endpoint = config.get("endpoint_url")
        destination = data.get("destination")
        config_model = CONFIGS.get(destination) if isinstance(destination, str) else None  # else: the field's issue
        if config_model is not None:  # the members the destination reads, typed (an unknown destination: its issue)
            with ctx.issues.collect():
                validate(config_model, config, prefix=ctx.path("config"))
        elif endpoint is not None and not isinstance(endpoint, str):
            ctx.add("config.endpoint_url", "must be a string URL", "type")
        if isinstance(endpoint, str):
            with ctx.issues.collect():
                check_destination_url(endpoint, ctx.path("config.endpoint_url"), ctx.allow_private_destinations)
        if data.get("destination") == "webhook":
            before = ctx.existing or {}
            with ctx.issues.collect():
                check_secrets(config, before.get("config") if before.get("destination") == "webhook" else None,
                              ctx.path)
            clicks = config.get("clicks")
            if isinstance(clicks, dict) and isinstance(clicks.get("link_ids"), list):
                for i, link_id in enumerate(clicks["link_ids"]):  # the links whose clicks it is sent: the account's
                    await ctx.require("links", link_id, f"config.clicks.link_ids[{i}]", "link")

    async def after_write(self, ctx: SaveContext, item: models.Connection) -> None:
        # A connection that starts subscribing to clicks (created so, given `clicks`, enabled again) is sent the
        # clicks stored from now on: its cursor starts at the clicks' horizon (linksvc.forwarding.click_hooks).
        subscribes = click_hooks.settings_of(item.model_dump(mode="json")) is not None
        if subscribes and (ctx.existing is None or click_hooks.settings_of(ctx.existing) is None):
            await click_hooks.start_cursor(ctx.tx, ctx.account_id, item.id, ctx.now)

    @staticmethod
    async def _check_event_types(ctx: SaveContext, types: Any) -> None:
        """Each name of ``event_types`` is PURCHASE or a custom event type of the account (active or not), and
        is named once: a name of no type (``purchase``, `` PURCHASE``, a typo) would forward nothing, silently."""
        if (not isinstance(types, list) or types == [models.ALL_EVENT_TYPES]
                or ctx.issues.covers(ctx.path("event_types"))):
            return  # every type, or the field's own issue (a list too long, "*" beside names, a name too long)
        names = [name for name in types if isinstance(name, str) and name != models.PURCHASE]
        known = await event_repo.custom_types_named(ctx.tx, ctx.account_id, names)
        first: dict[str, int] = {}
        for i, name in enumerate(types):
            if not isinstance(name, str):
                continue
            if name in first:
                ctx.add(f"event_types[{i}]", f"names {name} again (event_types[{first[name]}])", "duplicate")
            elif name != models.PURCHASE and name not in known:
                ctx.add(f"event_types[{i}]", f"{name!r} is not an event type of this account: PURCHASE or the "
                                             "name of one of its custom event types", "unknown_reference")
            first.setdefault(name, i)

    def public(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "config": mask_config(body.get("config", {}))}


class LinkKind(Kind):
    name, label, model = "links", "link", models.Link

    def columns(self, item: models.Link) -> dict[str, Any]:
        return {"code": item.code, "kind": item.kind, "campaign_id": item.campaign_id, "folder": item.folder}

    async def after_write(self, ctx: SaveContext, item: models.Link) -> None:
        # The tags copied out of the document, whichever path saved it (admin API, seed file, bulk action).
        if item.tags or ctx.existing is not None:
            await link_tag_repo.replace_tags(ctx.tx, ctx.account_id, item.id, item.tags)

    async def check(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        # The URLs are checked with the fields (linksvc.links.link_urls).
        await ctx.require("campaigns", data.get("campaign_id"), "campaign_id", "campaign")
        code = data.get("code")
        if isinstance(code, str) and code.lower() in RESERVED_CODES:
            ctx.add("code", "is reserved for the service's own paths", "reserved")
        self._check_lifecycle(ctx, data)
        await self._check_rules(ctx, data)
        domain = data.get("domain")
        if isinstance(domain, str) and not ctx.issues.covers(ctx.path("domain")):
            host = domain.strip().lower().rstrip(".")
            if host not in {row.host for row in await domain_repo.of_account(ctx.tx, ctx.account_id)}:
                ctx.add("domain", f"{host} is not a domain of this account (add it under Domains first)",
                        "unknown_reference")
        await self._check_target_links(ctx, data)

    async def _check_target_links(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        """A variant's ``target.link`` names another link of the same account (one hop: that link's own fields
        are used, not its variants)."""
        variants = data.get("variants")
        named = {index: variant["target"]["link"] for index, variant in enumerate(variants or [])
                 if isinstance(variants, list) and isinstance(variant, dict)
                 and isinstance(variant.get("target"), dict) and isinstance(variant["target"].get("link"), str)}
        if not named:
            return
        found = await link_repo.links_at_codes(ctx.tx, list(named.values()))
        for index, code in named.items():
            path = f"variants[{index}].target.link"
            if ctx.issues.covers(ctx.path(path)):
                continue
            other = found.get(code)
            if other is None or other.account_id != ctx.account_id:
                ctx.add(path, f"no link of this account has the code {code}", "unknown_reference")
            elif code == data.get("code") or other.id == data.get("id"):
                ctx.add(path, "is this link's own code: a variant leads to another link", "not_allowed")

    @staticmethod
    def _check_lifecycle(ctx: SaveContext, data: dict[str, Any]) -> None:
        """valid_since before expires_at; pending_url only with valid_since; expired_url only with expires_at or
        max_clicks (each would never be used otherwise)."""
        since, until = data.get("valid_since"), data.get("expires_at")
        if isinstance(since, str) and isinstance(until, str) and not ctx.issues.covers(ctx.path("valid_since")) \
                and not ctx.issues.covers(ctx.path("expires_at")):
            try:
                ordered = parse_iso(since) < parse_iso(until)
            except ValueError:
                ordered = True  # the field's own issue
            if not ordered:
                ctx.add("expires_at", "must be after valid_since", "invalid")
        if data.get("pending_url") is not None and since is None:
            ctx.add("pending_url", "is used only before valid_since: set valid_since too", "requires")
        if data.get("expired_url") is not None and until is None and data.get("max_clicks") is None:
            ctx.add("expired_url", "is used only once the link expires or reaches max_clicks: set expires_at or "
                                   "max_clicks too", "requires")
    async def _check_rules(self, ctx: SaveContext, data: dict[str, Any]) -> None:
        """Rule names are unique in the link; a target ``{"link": CODE}`` names another link of the account."""
        rules = data.get("rules")
        if not isinstance(rules, list):
            return
        names: set[str] = set()
        for index, rule in enumerate(rules):
            if not isinstance(rule, dict):
                continue
            name = rule.get("name")
            if isinstance(name, str):
                if name in names:
                    ctx.add(f"rules[{index}].name", f"another rule of this link is named {name!r}", "duplicate")
                names.add(name)
            target = rule.get("target")
            code = target.get("link") if isinstance(target, dict) else None
            path = f"rules[{index}].target.link"
            if not isinstance(code, str) or ctx.issues.covers(ctx.path(path)):
                continue
            if code == data.get("code") or (ctx.existing is not None and code == ctx.existing.get("code")):
                ctx.add(path, "is this link's own code: a rule leads to another link", "not_allowed")
                continue
            found = await link_repo.link_by_code(ctx.tx, code)
            if found is None or found.account_id != ctx.account_id:
                ctx.add(path, f"no link of this account has the code {code!r}", "unknown_reference")

    async def prepare(self, ctx: SaveContext, item: models.Link) -> models.Link:
        item = await self._hash_password(ctx, item)
        if item.code is None:
            code = ctx.existing["code"] if ctx.existing else await self._new_code(ctx.tx)
            return item.model_copy(update={"code": code})
        row = await link_repo.other_link_with_code(ctx.tx, item.code, item.id)
        if row is not None:
            raise Conflict("Code taken", {"field": ctx.path("code"), "message": "another link has this code"})
        return item

    @staticmethod
    async def _hash_password(ctx: SaveContext, item: models.Link) -> models.Link:
        """The stored ``password`` is the argon2id hash: the one stored already when it is what was restored
        (an update that did not send one) or when the same password is sent again (a seed file loaded twice),
        else a new hash of the password sent."""
        stored = (ctx.existing or {}).get("password")
        if item.password is None or item.password == stored:
            return item
        if isinstance(stored, str) and await passwords.matches(stored, item.password):
            return item.model_copy(update={"password": stored})
        return item.model_copy(update={"password": await passwords.hashed(item.password)})

    def public(self, body: dict[str, Any]) -> dict[str, Any]:
        shown = {key: value for key, value in body.items() if key != "password"}
        shown["password_protected"] = passwords.protected(body)
        return shown

    def restore_hidden(self, stored: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
        """``password`` left out keeps the stored one (null removes it); ``password_protected`` is read-only."""
        restored = {key: value for key, value in given.items() if key != "password_protected"}
        if "password" not in restored and passwords.protected(stored):
            restored["password"] = stored["password"]
        return restored

    async def _new_code(self, tx: Conn) -> str:
        while True:
            code = "".join(secrets.choice(_BASE62) for _ in range(7))
            if await link_repo.code_is_free(tx, code):
                return code


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        BrandKind(), TierKind(), RewardKind(), CampaignKind(), ContactKind(), CustomerKind(),
        CustomEventTypeKind(), ConnectionKind(), LinkKind(),
    )
}


def parse(kind: Kind, data: Any, prefix: str = "") -> Any:
    return validate(kind.model, data, prefix)
