"""User-agent classification: cost of a never-seen and a repeated string, and fidelity on the labelled sets.

Run ``.venv/bin/python -m bench.useragents``; it writes its section of docs/benchmarks.md. Never-seen
strings are the labelled and fixture strings made unique by a numbered suffix inside the product token (so
no cache can hold them); the baseline is ``str.lower`` of the same strings in the same run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from bench.report import machine, table, write_section
from linksvc.resolver.devices import classify, classify_uncached, clear_cache

ROOT = Path(__file__).resolve().parents[1]
SETS = (ROOT / "fixtures" / "user_agents.json", ROOT / "fixtures" / "user_agents_labelled.json")


def package_instances() -> list[str]:
    """The example user agents of the crawler-user-agents package (``pip install crawler-user-agents``), the
    crawler set; empty when it is not installed."""
    try:
        from importlib import resources
        text = resources.files("crawleruseragents").joinpath("crawler-user-agents.json").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        return []
    return [ua for entry in json.loads(text) for ua in entry.get("instances", [])]


def labelled() -> list[dict[str, object]]:
    return [entry for path in SETS for entry in json.loads(path.read_text(encoding="utf-8"))]


def per_call_us(function: Callable[[str], object], strings: list[str]) -> float:
    start = time.perf_counter()
    for text in strings:
        function(text)
    return (time.perf_counter() - start) / len(strings) * 1e6


def main() -> None:
    entries = labelled()
    people = [e for e in entries if not e["bot"]]
    agents = [str(e["user_agent"]) for e in entries]
    unique = [f"{ua} X{n}" for n in range(200) for ua in agents]
    baseline = per_call_us(str.lower, unique)
    clear_cache()
    never_seen = per_call_us(classify, unique)
    worst = max(per_call_us(classify_uncached, [f"{ua} Y{n}" for n in range(50)]) for ua in agents)
    repeated = per_call_us(classify, agents * 200)
    instances = package_instances()
    bot_cost = per_call_us(classify_uncached, instances) if instances else float("nan")
    agree = sum(classify(str(e["user_agent"])).platform == e["platform"] for e in people)
    people_bots = sum(classify(str(e["user_agent"])).bot for e in people)
    recall = sum(classify(ua).bot for ua in instances)
    info = machine()
    body = "\n".join([
        "## User-agent classification (issue 16)",
        "",
        f"Command: `.venv/bin/python -m bench.useragents`. Machine: {info.cpu}, {info.cores} cores, "
        f"Python {info.python}.",
        "",
        table(["measure", "value"], [
            ["str.lower of the same never-seen strings (baseline)", f"{baseline:.2f} µs"],
            [f"classify, never-seen string (mean of {len(unique)})", f"{never_seen:.2f} µs"],
            ["classify, never-seen, slowest labelled shape (mean of 50 each)", f"{worst:.2f} µs"],
            ["classify, crawler instance, uncached", f"{bot_cost:.2f} µs"],
            ["classify, repeated string (cache)", f"{repeated:.2f} µs"],
            ["platform agreement, people in the labelled sets", f"{agree}/{len(people)}"],
            ["people taken for bots", f"{people_bots}/{len(people)}"],
            ["crawler instances recognised", f"{recall}/{len(instances)}"],
        ]),
        "",
        "Sets: people are `fixtures/user_agents.json` and `fixtures/user_agents_labelled.json` (each entry "
        "names its source); crawlers are the `instances` of the crawler-user-agents package (installed "
        "for the benchmark only: the resolver's bot list is still its own). These sets are small and partly "
        "assembled by hand: the figures are not yet those of an independent labelled set.",
    ])
    print(body)
    write_section("useragents", body)


if __name__ == "__main__":
    main()
