"""User-agent classification: cost of a never-seen and a repeated string, and fidelity on the labelled sets.

Run ``.venv/bin/python -m bench.useragents``; it writes its section of docs/benchmarks.md. Never-seen
strings are the labelled and fixture strings made unique by a numbered suffix inside the product token (so
no cache can hold them); the baseline is ``str.lower`` of the same strings in the same run. With
fake-useragent and device-detector installed it also measures cost and fidelity on their far larger sets
(fake-useragent's browsers and Matomo's fixtures, bots.yml among them).
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


def outside_sets() -> tuple[list[str], list[str]]:
    """People's strings (fake-useragent's 2024-25 browsers and the non-bot fixtures of Matomo's
    device-detector) and Matomo's bots.yml, from those packages when they are installed (``pip install
    fake-useragent device-detector``); empty lists otherwise."""
    from importlib import resources
    people: list[str] = []
    crawlers: list[str] = []
    try:
        lines = resources.files("fake_useragent").joinpath("data/browsers.jsonl").read_text(encoding="utf-8")
        people += [json.loads(line)["useragent"] for line in lines.splitlines() if line.strip()]
        import yaml
        fixtures = Path(str(resources.files("device_detector"))) / "tests" / "fixtures" / "upstream"
        for path in sorted(fixtures.glob("*.yml")):
            texts = [str(e["user_agent"]) for e in yaml.load(path.read_text(encoding="utf-8"), yaml.CSafeLoader)
                     if isinstance(e, dict) and e.get("user_agent") is not None]
            (crawlers if path.name == "bots.yml" else people).extend(texts)
    except (ModuleNotFoundError, FileNotFoundError, AttributeError):
        return [], []
    return people, crawlers


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
    outside_people, matomo_bots = outside_sets()
    clear_cache()
    outside_cost = per_call_us(classify, [f"{ua} Z{n}" for n in range(3) for ua in outside_people] or ["x"])
    shapes = sorted(set(outside_people + instances))  # three passes, so that a burst of load spoils one at most
    passes = [[per_call_us(classify_uncached, [f"{ua} W{t}-{n}" for n in range(10)]) for ua in shapes]
              for t in range(3)]
    outside_worst = max(map(min, zip(*passes, strict=True)), default=0.0)
    outside_bots = sum(classify(ua).bot for ua in outside_people)
    matomo_recall = sum(classify(ua).bot for ua in matomo_bots)
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
            ["classify, never-seen, fake-useragent + Matomo people (mean)", f"{outside_cost:.2f} µs"],
            ["classify, never-seen, slowest of those and the crawler instances (least of 3 passes, mean of 10)",
             f"{outside_worst:.2f} µs"],
            ["people taken for bots, fake-useragent + Matomo non-bot fixtures",
             f"{outside_bots}/{len(outside_people)}"],
            ["Matomo bots.yml recognised as bots", f"{matomo_recall}/{len(matomo_bots)}"],
        ]),
        "",
        "Sets: people are `fixtures/user_agents.json` and `fixtures/user_agents_labelled.json` (each entry "
        "names its source); crawlers are the `instances` of the crawler-user-agents package (installed "
        "since the resolver's bot list is built from it). The outside sets, when fake-useragent and "
        "device-detector are installed: fake-useragent's 6,936 browser strings and Matomo's device-detector "
        "fixtures (bots.yml as bots, every other file as people; those files also hold app clients and HTTP "
        "libraries, which count as bots here: see docs/decisions.md, Bot list). The fixture sets are small and "
        "partly assembled by hand; the outside sets are larger and independent of this project.",
    ])
    print(body)
    write_section("useragents", body)


if __name__ == "__main__":
    main()
