"""The app association files, built from the apps configured on links.

``/.well-known/apple-app-site-association`` lists every iOS app (team id and bundle id) for universal
links, in both the current (``appIDs``, ``components``) and the older (``appID``, ``paths``) keys.
``/.well-known/assetlinks.json`` lists every Android package with the certificate fingerprints its links
name (a package without any cannot be verified, so it is left out).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from storage.links import AppSettings


def apple_app_site_association(rows: Iterable[AppSettings]) -> dict[str, Any]:
    apps = [row.ios for row in rows if row.ios is not None]
    app_ids = sorted({f"{ios['team_id']}.{ios['bundle_id']}" for ios in apps
                      if ios.get("team_id") and ios.get("bundle_id")})
    details = [{"appIDs": [app_id], "components": [{"/": "*"}], "appID": app_id, "paths": ["*"]}
               for app_id in app_ids]
    return {"applinks": {"apps": [], "details": details}}


def asset_links(rows: Iterable[AppSettings]) -> list[dict[str, Any]]:
    prints: dict[str, set[str]] = {}
    for android in (row.android for row in rows if row.android is not None):
        prints.setdefault(android["package"], set()).update(android.get("sha256_cert_fingerprints") or [])
    return [
        {"relation": ["delegate_permission/common.handle_all_urls"],
         "target": {"namespace": "android_app", "package_name": package, "sha256_cert_fingerprints": sorted(found)}}
        for package, found in sorted(prints.items()) if found
    ]
