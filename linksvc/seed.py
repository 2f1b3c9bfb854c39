"""Seed files (product decisions, section 12): accounts with their keys and resources, upserted by id.

The whole file loads in one transaction through the same :func:`~linksvc.resources.service.save` as the
admin API: any bad field refuses the whole file, naming every bad field with its path (the first bad field
first). Loading the same file twice changes nothing.

A file with ``"demo": true`` (``fixtures/demo.json``) is demo data: its accounts are marked as such, which
turns on the receivers its connections deliver to, and the next start of the service adds their week of
clicks and customer activity (:mod:`linksvc.demo.setup`).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from linksvc.accounts.service import add_key, upsert_account
from linksvc.clock import iso, utcnow
from linksvc.errors import BadRequest, Conflict, InvalidField, Issue, Issues
from linksvc.jsoncodec import JSONDecodeError, loads
from linksvc.progress import SILENT, Progress
from linksvc.resources.kinds import KINDS
from linksvc.resources.models import Account, ApiKeyIn
from linksvc.resources.service import save
from linksvc.resources.types import Uuid
from linksvc.resources.validation import validate
from storage import demo as demo_repo
from storage.db import AnyDatabase

# Order matters: each kind may refer to the kinds before it.
LOAD_ORDER = (
    "brands", "tiers", "rewards", "campaigns", "contacts", "customers",
    "custom_event_types", "connections", "links",
)


class SeedApiKey(ApiKeyIn):
    key: str = Field(min_length=20, max_length=200, pattern=r"^[A-Za-z0-9_\-]+$")


class SeedAccount(Account):
    id: Uuid  # required here: loading is an upsert by id
    api_keys: list[SeedApiKey] = Field(default_factory=list)
    brands: list[dict[str, Any]] = Field(default_factory=list)
    tiers: list[dict[str, Any]] = Field(default_factory=list)
    rewards: list[dict[str, Any]] = Field(default_factory=list)
    campaigns: list[dict[str, Any]] = Field(default_factory=list)
    contacts: list[dict[str, Any]] = Field(default_factory=list)
    customers: list[dict[str, Any]] = Field(default_factory=list)
    custom_event_types: list[dict[str, Any]] = Field(default_factory=list)
    connections: list[dict[str, Any]] = Field(default_factory=list)
    links: list[dict[str, Any]] = Field(default_factory=list)


class SeedFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    demo: bool = False  # demo data: see the module's docstring
    accounts: list[SeedAccount]


def read_seed(path: str | Path) -> Any:
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise BadRequest("Cannot read seed file", f"{path}: {exc.strerror}") from None
    try:
        return loads(text)
    except JSONDecodeError as exc:
        raise BadRequest("Seed file is not JSON", f"{path}: {exc}") from None


def _canonical(doc_id: str) -> str:
    try:
        return str(uuid.UUID(doc_id))
    except ValueError:
        return doc_id


def _conflict_issue(issues: Issues, exc: Conflict, path: str) -> None:
    """A value another object holds (a duplicate document number, an id of another account), as an issue."""
    details = exc.details
    if isinstance(details, dict) and "field" in details:
        issues.add(str(details["field"]), str(details.get("message", exc.error)), "duplicate")
    else:
        issues.add(path, exc.as_text(), "duplicate")


def _objects(seed: SeedFile) -> int:
    return sum(1 + len(account.api_keys) + sum(len(getattr(account, name)) for name in LOAD_ORDER)
               for account in seed.accounts)


async def load_seed(db: AnyDatabase, data: Any, allow_private: bool, progress: Progress = SILENT) -> dict[str, int]:
    """Load a parsed seed document. Returns how many objects were created or changed, by kind. A bad file is
    refused whole (:class:`InvalidField`) naming every bad field of every object, the first bad one first.
    ``progress`` counts the objects (accounts, keys and resources) as they are loaded."""
    progress.stage("seed: checking", None, "accounts")
    seed = validate(SeedFile, data, where="seed file")
    changed = {"accounts": 0, "api_keys": 0, **{name: 0 for name in LOAD_ORDER}}
    issues = Issues()
    refused: set[str] = set()  # ids of refused objects: references to them are not reported again
    progress.stage("seed: loading", _objects(seed), "objects")
    async with db.transaction() as tx:
        for a, account in enumerate(seed.accounts):
            base = f"accounts[{a}]"
            own = Account(id=account.id, name=account.name, environment=account.environment)
            changed["accounts"] += await upsert_account(tx, own)
            progress.advance()
            for k, key in enumerate(account.api_keys):
                progress.advance()
                try:
                    _, _, created = await add_key(tx, account.id, key)
                except Conflict as exc:
                    field = "kind" if exc.error == "Key kind is fixed" else "key"
                    issues.add(f"{base}.api_keys[{k}].{field}", exc.as_text(), "duplicate")
                    continue
                changed["api_keys"] += created
            for name in LOAD_ORDER:
                kind = KINDS[name]
                for i, obj in enumerate(getattr(account, name)):
                    prefix = f"{base}.{name}[{i}]"
                    progress.advance()
                    no_id = [] if "id" in obj else [
                        Issue(f"{prefix}.id", "is required in seed files (loading upserts by id)", "missing")]
                    # Each object is checked even after a bad one; the file is stored only if none is bad (the
                    # transaction is rolled back otherwise), and a refused object writes nothing.
                    try:
                        _, did_change = await save(tx, kind, account.id, obj, prefix=prefix,
                                                   allow_private=allow_private, issues_found=no_id,
                                                   refused=frozenset(refused))
                    except (InvalidField, Conflict) as exc:
                        if isinstance(exc, InvalidField):
                            issues.extend(exc)
                        else:
                            _conflict_issue(issues, exc, prefix)
                        if isinstance(obj.get("id"), str):
                            refused.add(_canonical(obj["id"]))
                        continue
                    changed[name] += did_change
            if seed.demo:
                await demo_repo.mark(tx, account.id, iso(utcnow()))
        issues.raise_if_any("Invalid seed file")
    return changed


async def load_seed_file(db: AnyDatabase, path: str | Path, allow_private: bool,
                         progress: Progress = SILENT) -> dict[str, int]:
    progress.stage("seed: reading", None, "objects")
    return await load_seed(db, read_seed(path), allow_private, progress)
