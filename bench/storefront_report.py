"""The storefront benchmark's figures as console text and as its section of docs/benchmarks.md."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from bench import data, load, plans, postgres
from bench import storefront_docs as docs
from bench.load import Result

ROWS: tuple[tuple[str, str], ...] = (
    ("bare", "bare aiohttp handler, fixed JSON body (its own process)"),
    ("campaigns", f"GET /campaigns?from=0&to=49&store_id={docs.BENCH_STORE}, 1 worker (first round only)"),
    ("phone 1", "GET /customers?phone=..., 1 worker"),
    ("document 1", "GET /customers?document_number=..., 1 worker"),
    ("phone 2", "GET /customers?phone=..., 2 workers"),
    ("document 2", "GET /customers?document_number=..., 2 workers"),
)
LOOKUPS = ("phone 1", "document 1", "phone 2", "document 2")
# The lookup rows again on PostgreSQL (``--postgresql``), each beside its SQLite row. There the service's lookup
# lane (``api.customers.lane.FastLookups``, the fast path of these requests) declines: they go through the
# ordinary handler.
ROWS += tuple((postgres.label(key), f"{label}, on PostgreSQL (lookup lane off: the ordinary handler)")
              for key, label in ROWS if key in LOOKUPS)
PG_LOOKUPS = tuple(postgres.label(key) for key in LOOKUPS)
# A search on account_id alone through an ordinary index (a primary key on account_id is one row).
_ACCOUNT_WIDE = re.compile(r"SEARCH \w+ USING (?:COVERING )?INDEX (?!sqlite_autoindex_)\w+ \(account_id=\?\)$")
SLOW_MS = 1.0


@dataclass
class Run:
    machine: load.Machine
    command: str
    load: load.Load
    dataset: data.StoreSet
    compared: int
    phones: int
    checked: list[str]
    rounds: list[dict[str, Result]]  # A B A B: each round's bare and service rows
    statements: list[plans.Statement]
    per_request: list[tuple[str, list[str]]]
    revision: str
    postgresql: postgres.Copy | None = None  # the database of the rows on PostgreSQL, if any
    # Per lookup row (e.g. "phone 1"), per round: the share of its 200s given again from the workers' held
    # answers (linksvc_customer_lookups_total{answer="held"}, warm-up included), as the service counted them.
    held: dict[str, list[float]] = field(default_factory=dict)

    def results(self, key: str) -> list[Result]:
        return [found[key] for found in self.rounds if key in found]

    def median(self, key: str, figure: str) -> float:
        return statistics.median(getattr(r, figure) for r in self.results(key))

    @property
    def bare_rps(self) -> float:
        return self.median("bare", "rps")

    def ratio(self, key: str) -> float:
        return self.median(key, "rps") / self.bare_rps

    def measured(self, key: str) -> bool:
        return bool(self.results(key))

    def best(self) -> str:
        """The lookup row with the best ratio (the goal is judged on it)."""
        return max((key for key in LOOKUPS if self.measured(key)), key=self.ratio)


def _ms(us: float) -> str:
    ms = us / 1000
    return f"{ms:,.2f} ms" if ms < 10 else f"{ms:,.0f} ms"


def verdict(statement: plans.Statement) -> str:
    if statement.scans:
        return "FULL SCAN: " + "; ".join(statement.scans)
    steps = [ln.strip(" `-") for ln in statement.plan]
    wide = [s for s in steps if _ACCOUNT_WIDE.match(s)]
    if wide:
        limited = " LIMIT " in statement.sql.upper()
        return ("index search on account_id only: walks the account's rows in index order until the LIMIT is met"
                if limited and statement.median_ms < SLOW_MS else
                "index search on account_id only: visits every row of the account (here, the whole table)")
    return "index lookup"


def diagnosis(statement: plans.Statement) -> str:
    """Why an account-wide statement reads so much, from its plan and SQL ("" when it does not)."""
    steps = [ln.strip(" `-") for ln in statement.plan]
    wide = [s for s in steps if _ACCOUNT_WIDE.match(s)]
    if not wide:
        return ""
    index = re.sub(r"^.* INDEX (\w+) .*$", r"\1", wide[0])
    sql = statement.sql.upper()
    if "COUNT(" in sql:
        exists = " (here with a correlated EXISTS)" if "EXISTS" in sql else ""
        return (f"count(*) goes through {index} on account_id alone and tests the other conditions{exists} row "
                "by row, so it reads every row of the account.")
    if " ORDER BY " in sql and " LIMIT " in sql:
        return (f"the planner takes {index} because it yields the ORDER BY order for the LIMIT, and tests the "
                "other conditions row by row; when fewer rows than the LIMIT match (a unique phone: one), "
                "it reads every row of the account.")
    return f"it goes through {index} on account_id alone and tests the other conditions row by row."


def _cpu(us: float) -> str:
    return f"{us:,.0f} µs" if us < 10_000 else f"{us / 1000:,.0f} ms"


def _result_rows(run: Run) -> list[list[str]]:
    rows = []
    for key, label in ROWS:
        found = run.results(key)
        if not found:
            continue
        timeouts = sum(r.timeouts for r in found)
        errors = f", {timeouts} timeouts" if timeouts else ""
        per_round = " / ".join(f"{r.rps:,.0f}" for r in found)
        rows.append([label, f"{run.median(key, 'rps'):,.0f}", per_round, _ms(run.median(key, "p50_us")),
                     _ms(run.median(key, "p99_us")), f"{run.ratio(key):.3f}",
                     _cpu(run.median(key, "cpu_us_per_request")), f"{sum(r.requests for r in found):,}{errors}"])
    return rows


def _queue_notes(run: Run) -> list[str]:
    """Rows too slow for the run: fewer answers than connections means most requests were still queued at
    the end, so the measured latencies are bounded by the run's length rather than by the service."""
    notes = []
    for key, label in ROWS:
        for r in run.results(key):
            if r.requests < run.load.connections * 4:
                steady = run.load.connections / r.rps if r.rps else float("inf")
                notes.append(f"- {label}: only {r.requests:,} answers in {r.duration_us / 1e6:.0f} s with "
                             f"{run.load.connections} connections, one request each in flight; its p50/p99 are "
                             f"bounded by the run's length. At {r.rps:,.1f} requests/s a request waits behind the "
                             f"other {run.load.connections - 1} for about {steady:,.0f} s in steady state.")
                break
    return notes


def summary(run: Run) -> str:
    lines = [f"{'':60} {'req/s':>9} {'p50':>10} {'p99':>10} {'x bare':>7} {'CPU/req':>9}"]
    for key, label in ROWS:
        if not run.measured(key):
            continue
        lines.append(f"{label[:60]:60} {run.median(key, 'rps'):9,.0f} {_ms(run.median(key, 'p50_us')):>10} "
                     f"{_ms(run.median(key, 'p99_us')):>10} {run.ratio(key):7.3f} "
                     f"{_cpu(run.median(key, 'cpu_us_per_request')):>9}")
    lines.append("statements (median time, plan):")
    for s in run.statements:
        lines.append(f"  {s.median_ms:10.3f} ms  {s.label}: {verdict(s)}")
    return "\n".join(lines)


def _dataset(run: Run) -> str:
    d = run.dataset
    how = f"Generating it took {d.build_seconds:.0f} s ({d.built_at[:16].replace('T', ' ')} UTC: " + "; ".join(
        f"{k} {v:.0f} s" for k, v in d.phases.items()) + ")" + ("; this run reused it." if d.reused else ".")
    return f"""One production account with a SERVER key, 2 brands, 3 tiers and a reward (loaded with
`linksvc.seed.load_seed`), then {d.campaigns:,} campaigns and {d.customers:,} customers bulk-inserted with
`executemany` into the service's own tables (schema from its migrations; no `ANALYZE`, as the service runs).
The database is cached at `{d.path.relative_to(data.REPO_ROOT)}` (gitignored; `--rebuild` makes it
again) and reused while its generator version, the digest of the migration files, the migration level and
the row counts match. {how}

- Campaigns: all five types; `stores` null for ~45%, `[]` for ~10%, else 1-4 of 299 store ids, with
  `{docs.BENCH_STORE}` in ~12% of those lists; `channels`/`products` mostly null. {d.restrictions:,} rows of
  `campaign_restrictions`; {d.store_matches:,} campaigns are open to `{docs.BENCH_STORE}`.
- Customers: ~97% with a unique phone carrying a country code (CO, MX, BR, CL, PE, US, AR) in six formats
  (`+57 300 123 4567`, `573001234567`, `+57-300-…`, `+57 (300) …`, `+573001234567`, `57.300.…`); unique
  document numbers; ~60% with an opening wallet of one or two lines ({d.wallet_lines:,} rows of
  `wallet_lines`, some expired).
- Same rows as the service writes: {run.compared} documents were saved through
  `linksvc.resources.service.save` into a scratch database and compared column by column (bodies as
  `model_dump(mode="json")`, filter columns, restriction rows, wallet lines) with the generated rows and with
  the cached database's.
- The lookup loads cycle at random through {run.phones:,} customers spread over the whole table: by phone, in
  four query formats (`+573001234567`, `573001234567`, `+57 300 123 4567`, `57-300-1234567`), and by
  document number.{_held(run)}"""


def _held(run: Run) -> str:
    """What share of each lookup row the workers answered from the answers they held (linksvc.customers.held)."""
    if not run.held:
        return ""
    rows = "; ".join(f"by {kind}, {workers} worker{'s' if workers != '1' else ''}: "
                     + " / ".join(f"{share:.0%}" for share in shares)
                     for (kind, workers), shares in ((key.split(" ", 1), shares) for key, shares in run.held.items()))
    return ("\n- Each worker keeps the lookups it answered while they are exact (docs/decisions.md, \"The customer "
            "lookup's answers held by each worker\"), so a customer asked for again costs no statement. Share of "
            "each row's answers (warm-up included, per round) given again from them, as the service counted "
            f"(`linksvc_customer_lookups_total`): {rows}. A customer's first lookup reads the store.")


def _plans(run: Run) -> str:
    parts = []
    for s in run.statements:
        sql = s.sql if not s.params else f"{s.sql}\n-- parameters: {s.params}"
        parts.append(f"**{s.label}** — {s.median_ms:,.3f} ms per execution (median); {verdict(s)}\n\n"
                     f"```sql\n{sql}\n```\n\n```\n" + "\n".join(s.plan) + "\n```")
    return "\n\n".join(parts)


def _findings(run: Run) -> str:
    slow = [s for s in run.statements if s.median_ms >= SLOW_MS or s.scans]
    scans = [s for s in run.statements if s.scans]
    lines = [f"- Full scans (`SCAN`) in these plans: {'none' if not scans else ', '.join(s.label for s in scans)}."]
    for s in slow:
        kind = s.label.rsplit(" (", 1)[0]
        ran = [label for label, kinds in run.per_request if kind in kinds]
        skipped = [label for label, _ in run.per_request if label not in ran and label.split(",")[0] in s.label]
        where = f" It ran in: {'; '.join(ran)}" + (f"; not in: {'; '.join(skipped)}" if skipped else "") + "."
        lines.append(f"- Slow: {s.label} takes {s.median_ms:,.1f} ms per execution: {diagnosis(s) or verdict(s)}"
                     f"{where if ran else ''} Reads run on the event loop, so while it runs every other request "
                     "of the process waits.")
    if not slow:
        lines.append(f"- Every statement takes less than {SLOW_MS:g} ms.")
    best = run.best()
    bare_cpu = run.median("bare", "cpu_us_per_request")
    label = dict(ROWS)[best]
    met = "met" if run.ratio(best) >= 0.5 else "**not met**"
    lines.append(f"- Customer lookup, best row ({label}): {run.ratio(best):.1%} of the bare handler's requests/s "
                 f"(the goal is at least 50%): {met}.")
    for key in LOOKUPS + PG_LOOKUPS:
        if not run.measured(key):
            continue
        cpu = run.median(key, "cpu_us_per_request")
        lines.append(f"- {dict(ROWS)[key]}: {run.ratio(key):.1%} of the bare handler; server CPU per answer "
                     f"{cpu:,.0f} µs (all worker processes), {cpu / bare_cpu:.1f} times the bare handler's "
                     f"{bare_cpu:,.0f} µs.")
    return "\n".join(lines)


def _postgresql(run: Run) -> str:
    if run.postgresql is None:
        return ""
    return run.postgresql.note(
        " (the lookup rows only; `GET /campaigns` is measured on SQLite). On PostgreSQL the service's lookup lane "
        "(`api.customers.lane.FastLookups`, which answers these lookups on SQLite before the ordinary request "
        "path) declines, so the lookups go through the ordinary handler: the figures compare the two stores as "
        "the service runs on each, not the same code path. Server CPU counts the service's processes only, not "
        "the PostgreSQL server's.")


def section(run: Run) -> str:
    """The Markdown of the section (blank-line runs left by empty parts collapsed)."""
    return re.sub(r"\n{3,}", "\n\n", _section(run))


def _section(run: Run) -> str:
    settings = run.load
    return f"""## Storefront reads (issue 3)

Command: `{run.command}` (options: `--help`; the first run builds the data set).

Machine: {run.machine.line()}.

Code: {run.revision}.

Load: wrk on 127.0.0.1, {settings.connections} connections, {settings.threads} threads, {settings.warmup} s warm-up then
{settings.duration} s measured per row, one server at a time: `linksvc serve --workers N` with `LINKSVC_LOAD_DEMO=0`
and otherwise the default settings (the log at INFO, the access log on, written to a file), or the baseline
`bench/baseline.py` (one process). Rounds of bare A then service B, {len(run.rounds)} times (A B A B); each figure is
the median over the rounds (the requests/s of each round are shown), and ratios are to the bare handler's
median. With 2 workers the service uses both cores, which it shares with wrk; the bare handler is one
process. The database
file is read once before measuring, so its pages are in the operating system's cache, as a served
database's are (read cold from this machine's disk, random lookups are several times slower). After each
load run the benchmark waits until the server has answered what was still queued.
Requests slower than {settings.timeout} s would count as timeouts.

### Data set

{_dataset(run)}

### Results

{load.table(["request", "requests/s (median)", "per round", "p50", "p99", "ratio to bare", "server CPU per request",
               "requests"], _result_rows(run))}

"server CPU per request" is the user plus system CPU time of the server's processes (its workers included)
during the measured run, divided by the answers; it is less sensitive than requests/s to other work on the
machine.

{_postgresql(run)}

{"".join(note + chr(10) for note in _queue_notes(run))}
Verified through the API before measuring:
{chr(10).join("- " + c for c in run.checked)}

### Findings

{_findings(run)}

### Query plans

Every read statement of real requests, traced on the reader connection of the real app served in-process
(values expanded by SQLite's trace), then given to `EXPLAIN QUERY PLAN` and timed alone (median of one
execution) on a reader set up like the service's. `SCAN` is a full scan, `SEARCH` an index lookup. The
statements each request ran, in order:

{chr(10).join(f"- {label}: {', '.join(kinds)}" for label, kinds in run.per_request)}

{_plans(run)}
"""
