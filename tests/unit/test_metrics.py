"""Request metrics: counted per route and status, latency buckets cumulative, workers' figures added up."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import generate_latest

from api.observability import Metrics


def _text(metrics: Metrics) -> str:
    return generate_latest(metrics.registry).decode()


def test_counts_and_cumulative_buckets() -> None:
    metrics = Metrics()
    for seconds in (0.0004, 0.003, 0.003, 7.0):
        metrics.observe("GET", "/{code}", 302, seconds)
    metrics.observe("HEAD", "/{code}", 302, 0.001)
    text = _text(metrics)
    assert 'linksvc_http_requests_total{method="GET",route="/{code}",status="302"} 4.0' in text
    assert 'linksvc_http_requests_total{method="HEAD",route="/{code}",status="302"} 1.0' in text
    bucket = 'linksvc_http_request_duration_seconds_bucket{le="%s",method="GET",route="/{code}"} %s'
    assert bucket % ("0.0005", "1.0") in text
    assert bucket % ("0.001", "1.0") in text  # le is inclusive and cumulative
    assert bucket % ("0.005", "3.0") in text
    assert bucket % ("5.0", "3.0") in text
    assert bucket % ("+Inf", "4.0") in text
    assert 'linksvc_http_request_duration_seconds_count{method="GET",route="/{code}"} 4.0' in text
    assert 'linksvc_http_request_duration_seconds_sum{method="GET",route="/{code}"} 7.0064' in text


def test_a_bucket_bound_counts_in_its_own_bucket() -> None:
    metrics = Metrics()
    metrics.observe("GET", "/x", 200, 0.001)
    assert 'linksvc_http_request_duration_seconds_bucket{le="0.0005",method="GET",route="/x"} 0.0' in _text(metrics)
    assert 'linksvc_http_request_duration_seconds_bucket{le="0.001",method="GET",route="/x"} 1.0' in _text(metrics)


def test_a_scrape_adds_the_other_workers_snapshots(tmp_path: Path) -> None:
    mine = Metrics(str(tmp_path))
    mine.observe("GET", "/{code}", 302, 0.002)
    # Another worker's last snapshot (written by the same code, under another pid's name).
    other = Metrics(str(tmp_path))
    for _ in range(3):
        other.observe("GET", "/{code}", 302, 0.02)
    other.observe("GET", "/healthz", 200, 0.0001)
    other.write_snapshot()
    (tmp_path / next(p.name for p in tmp_path.glob("*.json"))).rename(tmp_path / "999999999.json")
    (tmp_path / "broken.json").write_text("{not json")  # a file being replaced is skipped, not a 500
    text = _text(mine)
    assert 'linksvc_http_requests_total{method="GET",route="/{code}",status="302"} 4.0' in text
    assert 'linksvc_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in text
    assert 'linksvc_http_request_duration_seconds_bucket{le="0.0025",method="GET",route="/{code}"} 1.0' in text
    assert 'linksvc_http_request_duration_seconds_bucket{le="0.025",method="GET",route="/{code}"} 4.0' in text
    # Its own live figures are not counted twice when its own snapshot is there too.
    mine.write_snapshot()
    assert 'linksvc_http_requests_total{method="GET",route="/{code}",status="302"} 4.0' in _text(mine)


def test_described_counters_start_at_zero_and_add_up_across_workers(tmp_path: Path) -> None:
    mine = Metrics(str(tmp_path))
    mine.describe_counter("linksvc_auth_failures", "Failed attempts", "kind", ("admin", "api_key"))
    assert 'linksvc_auth_failures_total{kind="admin"} 0.0' in _text(mine)
    assert 'linksvc_auth_failures_total{kind="api_key"} 0.0' in _text(mine)
    mine.count("linksvc_auth_failures", "admin")
    other = Metrics(str(tmp_path))
    for _ in range(2):
        other.count("linksvc_auth_failures", "admin")
    other.count("linksvc_auth_failures", "sign_in")
    other.write_snapshot()
    (tmp_path / next(p.name for p in tmp_path.glob("*.json"))).rename(tmp_path / "999999999.json")
    text = _text(mine)
    assert 'linksvc_auth_failures_total{kind="admin"} 3.0' in text
    assert 'linksvc_auth_failures_total{kind="api_key"} 0.0' in text
    assert 'linksvc_auth_failures_total{kind="sign_in"} 1.0' in text
    assert "# TYPE linksvc_auth_failures_total counter" in text
