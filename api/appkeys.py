"""Typed keys of what the app factory puts on the application."""

from __future__ import annotations

from aiohttp import web

from linksvc.accounts.throttle import AuthThrottle
from linksvc.campaigns.service import CampaignCounts
from linksvc.feed.hub import FeedHub
from linksvc.forwarding.dispatcher import Dispatcher
from linksvc.forwarding.export_job import ExportJob
from linksvc.links.clicks import ClickRecorder
from linksvc.resources.service import Resources
from linksvc.settings import Settings
from linksvc.store import Store

SETTINGS: web.AppKey[Settings] = web.AppKey("settings", Settings)
DB: web.AppKey[Store] = web.AppKey("db")
RESOURCES: web.AppKey[Resources] = web.AppKey("resources", Resources)
CAMPAIGN_COUNTS: web.AppKey[CampaignCounts] = web.AppKey("campaign_counts", CampaignCounts)
CLICKS: web.AppKey[ClickRecorder] = web.AppKey("clicks", ClickRecorder)
DISPATCHER: web.AppKey[Dispatcher] = web.AppKey("dispatcher", Dispatcher)
EXPORTS: web.AppKey[ExportJob] = web.AppKey("exports", ExportJob)
AUTH_THROTTLE: web.AppKey[AuthThrottle] = web.AppKey("auth_throttle", AuthThrottle)
FEED: web.AppKey[FeedHub] = web.AppKey("feed", FeedHub)
