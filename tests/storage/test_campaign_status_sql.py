"""The status filter of GET /campaigns (SQL) agrees with the status shown (Python), for any campaign."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from linksvc.accounts.service import upsert_account
from linksvc.campaigns.status import STATUSES, campaign_status
from linksvc.clock import iso
from linksvc.resources.kinds import KINDS
from linksvc.resources.models import Account
from linksvc.resources.service import save
from storage.campaigns import CampaignQuery, list_campaigns
from storage.db import Database

NOW = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
ACCOUNT = "aaaaaaaa-0000-4000-8000-000000000001"
# Offsets around now, including exactly now, to hit the boundaries of each rule.
moments = st.one_of(st.none(), st.sampled_from([-86400, -1, 0, 1, 86400]).map(lambda s: NOW + timedelta(seconds=s)))
campaign = st.fixed_dictionaries(
    {"starts_at": moments, "ends_at": moments, "paused": st.booleans(), "finished_at": moments}
)


async def _check(campaigns: list[dict]) -> None:
    db = Database(":memory:")
    await db.open()
    try:
        async with db.transaction() as tx:
            await upsert_account(tx, Account(id=ACCOUNT, name="A"))
            for i, fields in enumerate(campaigns):
                body = {"id": f"aaaaaaaa-0004-4000-8000-{i:012d}", "name": f"c{i}", "type": "REFERRALS", "order": i,
                        **{k: (iso(v) if isinstance(v, datetime) else v) for k, v in fields.items()}}
                await save(tx, KINDS["campaigns"], ACCOUNT, body)
        expected = {
            f"c{i}": campaign_status(NOW, c["starts_at"], c["ends_at"], c["paused"], c["finished_at"])
            for i, c in enumerate(campaigns)
        }
        for status in (*STATUSES, "NOT FINISHED"):
            rows, count = await list_campaigns(db.reader, CampaignQuery(ACCOUNT, iso(NOW), status=status), 0, 1000)
            names = {campaign.body["name"] for campaign in rows}
            wanted = {n for n, s in expected.items() if (s != "FINISHED" if status == "NOT FINISHED" else s == status)}
            assert names == wanted, (status, campaigns)
            assert count == len(wanted)
    finally:
        await db.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(campaign, min_size=1, max_size=12))
def test_sql_status_filter_matches_campaign_status(campaigns: list[dict]) -> None:
    asyncio.run(_check(campaigns))
