"""The wrk Lua script of ``bench.events``: POSTs a body drawn at random with a new order_id in each, counts
the events answered as accepted in ``response()``, sends nothing after the measured phase (``delay()``) so
that every request sent gets its answer before wrk stops, and prints its counts as one JSON line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bench.load import LUA_PRELUDE, lua_headers
from bench.load import lua_string as q

MARK = "BENCH_EVENTS "

_LUA = LUA_PRELUDE + r"""
local variants = {
%(variants)s
}
local nvariants, method, path, expect, per_request = #variants, %(method)s, %(path)s, %(expect)d, %(per_request)d
local measure_s, tag, odd_file = %(measure_s)d, %(tag)s, %(odd_file)s
%(headers)s
local names = {"sent", "answered", "answered_window", "events", "events_window", "events_first", "short", "other"}
function init(args)
  math.randomseed(7919 * (thread_id + 1) + %(run)d)
  started, serial, odd = nil, 0, ""
  check_call = thread_id == 0  -- wrk builds one request of thread 0 before the run, to check it: not sent
  sent, answered, answered_window, events, events_window, events_first, short, other = 0, 0, 0, 0, 0, 0, 0, 0
end
local function make_body()  -- a body at random, a new order_id where each ORDER was
  if nvariants == 0 then return nil end
  local pieces = variants[math.random(nvariants)]
  serial = serial + 1
  local out = {pieces[1]}
  for k = 2, #pieces do
    out[#out + 1] = tag .. thread_id .. "-" .. serial .. "-" .. (k - 1)
    out[#out + 1] = pieces[k]
  end
  return table.concat(out)
end
function delay()  -- after the measured phase nothing more is sent; what is in flight gets answered
  if started ~= nil and now() - started >= measure_s then return 3600000 end
  return 0
end
function request()
  if check_call then check_call = false else
    started = started or now()
    sent = sent + 1
  end
  return wrk.format(method, path, nil, make_body())
end
function response(status, headers, body)
  local elapsed, n = now() - started, 0
  answered = answered + 1
  if status == expect then n = per_request == 1 and 1 or (tonumber(string.match(body, '"accepted":(%%d+)')) or 0) end
  if status ~= expect then other = other + 1 elseif n ~= per_request then short = short + 1 end
  if n ~= per_request and odd == "" then odd = status .. " " .. string.sub(body, 1, 2000) end
  events = events + n
  if elapsed < measure_s then
    answered_window, events_window = answered_window + 1, events_window + n
    if elapsed < measure_s / 2 then events_first = events_first + n end
  end
end
function done(summary, latency, requests)
  local c = {}
  for _, name in ipairs(names) do c[name] = 0 end
  for _, thread in ipairs(threads) do
    for _, name in ipairs(names) do c[name] = c[name] + thread:get(name) end
    local o = thread:get("odd")
    if o ~= "" then local f = io.open(odd_file, "a"); f:write(o, "\n"); f:close() end
  end
  local e = summary.errors
  io.write(string.format('%(mark)s{"p50_us": %%d, "p99_us": %%d, "socket_errors": %%d, "timeouts": %%d',
    latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write, e.timeout))
  for _, name in ipairs(names) do io.write(string.format(', "%%s": %%d', name, c[name])) end
  io.write("}\n")
end
"""


def script(variants: Sequence[Sequence[str]], method: str, path: str, expect: int, per_request: int, measure_s: int,
           tag: str, odd_file: Path, run: int, headers: Mapping[str, str]) -> str:
    """``variants``: each body split where its order_ids go (none for GET); order_ids are ``tag``, the wrk
    thread, a per-thread counter and the place in the body; the first answer of each thread that is not
    ``expect`` with ``per_request`` events accepted is appended to ``odd_file``."""
    return _LUA % {
        "variants": ",\n".join("{" + ", ".join(q(p) for p in pieces) + "}" for pieces in variants),
        "method": q(method), "path": q(path), "expect": expect, "per_request": per_request, "measure_s": measure_s,
        "tag": q(tag), "odd_file": q(str(odd_file)), "run": run, "mark": MARK,
        "headers": lua_headers(headers),
    }
