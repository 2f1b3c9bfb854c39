"""The README's walkthrough, run as a reader runs it.

The service is started the README's way: the serve command of "The two commands" (its
``LINKSVC_...=`` assignments and ``linksvc`` arguments, read from the README; ``.venv/bin/linksvc`` is
``python -m linksvc`` of the interpreter running the tests), in a fresh empty folder, so ``data/`` is new and
the demo data is loaded. The only change: the service listens on a free port, so the test sets
``LINKSVC_PORT`` and ``LINKSVC_PUBLIC_URL`` to it and rewrites ``127.0.0.1:8080`` to ``127.0.0.1:<port>`` in
the serve command's variables, the examples and their outputs. Nothing else of the README is rewritten.

Every ``sh`` block of the "Try it" section runs, in order, in one ``bash`` (so variables carry from one
example to the next), with history expansion on as in an interactive shell, in the test's own folder, with
``set -u``: a variable the walkthrough uses must be one it sets (``TMPDIR``, for one, is unset in most shells,
and is not set here), or the walkthrough stops there. An example is the lines up to and including a run of
``# →`` lines, which give what it prints: ``…`` matches any text (also across lines, also none) and ``$NAME``
the value the shell variable has after the example. Lines are compared without trailing blanks (HTTP headers
end in ``\\r``). The example's name is
its first comment line; a failure shows the name, the README line, the expected and the actual output.

The two install commands are not run (they install); the benchmarks block is not run (it needs ``wrk``
and minutes); "Generating a client" is run by ``tests/e2e/test_generated_client.py`` instead. Everything goes to
127.0.0.1.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import free_port, ready, sqlite_only

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
INSTALL_SECTION = "The two commands"
WALKTHROUGH_SECTION = "Try it"
# Sections whose sh blocks are deliberately not run here (see the module docstring).
# "Generating a client" installs a tool and writes packages: tests/e2e/test_generated_client.py runs the
# same generator and settings (into a temporary folder) and the Python it shows.
NOT_RUN_SECTIONS = {INSTALL_SECTION, "Benchmarks", "Generating a client"}
README_ADDRESS = "127.0.0.1:8080"
OUTPUT = "# →"
ANY = "…"
WALKTHROUGH_SECONDS = 60

# Examples whose documented output needs work that is on other branches. Each entry is removed when that
# work is merged (strict: an entry whose example passes fails the suite, so none stays behind unnoticed).
EXPECTED_TO_FAIL: dict[str, str] = {}


@dataclass(frozen=True)
class Example:
    name: str
    line: int  # README line of the example's first line
    commands: str
    expected: str


@dataclass(frozen=True)
class Block:
    section: str
    line: int  # README line of the block's first line (after the fence)
    text: str


def sh_blocks(text: str) -> list[Block]:
    """The ```sh blocks of the README, with the ``##`` section each is in."""
    blocks: list[Block] = []
    section = ""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("```"):
            end = index + 1
            while not lines[end].startswith("```"):
                end += 1
            if line.strip() == "```sh":
                blocks.append(Block(section, index + 2, "\n".join(lines[index + 1:end])))
            index = end
        index += 1
    return blocks


def examples_of(block: Block) -> list[Example]:
    """A block's examples: each one's lines up to the end of a run of ``# →`` lines."""
    found: list[Example] = []
    commands: list[str] = []
    expected: list[str] = []
    start = block.line
    lines = block.text.splitlines()
    for offset, line in enumerate([*lines, ""]):
        is_output = line.startswith(OUTPUT)
        if expected and not is_output:
            comments = [c for c in commands if c.startswith("#")]
            if not comments:
                raise AssertionError(f"README line {start}: an example without a comment line naming it")
            found.append(Example(comments[0].lstrip("# ").strip(), start, "\n".join(commands), "\n".join(expected)))
            commands, expected, start = [], [], block.line + offset
        if offset == len(lines):
            break
        if is_output:
            expected.append(line[len(OUTPUT):].removeprefix(" "))
        else:
            commands.append(line)
    if any(c.strip() for c in commands):
        raise AssertionError(f"README line {start}: commands at the end of a block without their output")
    return found


def walkthrough(text: str) -> list[Example]:
    examples = [e for b in sh_blocks(text) if b.section == WALKTHROUGH_SECTION for e in examples_of(b)]
    names = [e.name for e in examples]
    assert len(set(names)) == len(names), f"two examples have the same name: {names}"
    return examples


def serve_command(text: str) -> tuple[dict[str, str], list[str]]:
    """The variables and ``linksvc`` arguments of the README's serve command (the first install block's
    last ``&&`` step)."""
    install = [b for b in sh_blocks(text) if b.section == INSTALL_SECTION]
    step = install[0].text.split("&&")[-1].strip()
    words = shlex.split(step)
    env: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[:2] == [".venv/bin/linksvc", "serve"], f"the README's serve command is not linksvc serve: {step}"
    return env, words[1:]


def output_pattern(expected: str, variables: dict[str, str]) -> re.Pattern[str]:
    parts = re.split(r"(…|\$[A-Z_][A-Z0-9_]*)", expected)
    pattern = ""
    for part in parts:
        if part == ANY:
            pattern += ".*?"
        elif part.startswith("$") and len(part) > 1:
            pattern += re.escape(variables.get(part[1:], part))
        else:
            pattern += re.escape(part)
    return re.compile(pattern, re.DOTALL)


def normalized(output: str) -> str:
    return "\n".join(line.rstrip() for line in output.strip("\n").splitlines()).strip("\n")


TEXT = README.read_text(encoding="utf-8")
EXAMPLES = walkthrough(TEXT)


@dataclass(frozen=True)
class Run:
    port: int
    outputs: dict[str, tuple[str, dict[str, str]]]  # example name -> (what it printed, its variables)
    log: str  # the end of the service's log


def run_walkthrough(examples: list[Example], port: int, folder: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """Runs every example in one bash; each one's output and the variables its expected output names."""
    mark = "README-EXAMPLE-" + secrets.token_hex(8)
    script = ["set -o history -H", "set -u", "exec 2>&1"]
    for index, example in enumerate(examples):
        script.append(example.commands.replace(README_ADDRESS, f"127.0.0.1:{port}"))
        script.append(f"printf '\\n{mark} vars {index}\\n'")
        for name in sorted(set(re.findall(r"\$([A-Z_][A-Z0-9_]*)", example.expected))):
            script.append(f"printf '%s=%s\\n' {name} \"${{{name}-}}\"")
        script.append(f"printf '{mark} end {index}\\n'")
    path = folder / "walkthrough.sh"
    path.write_text("\n".join(script) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINKSVC_") and "proxy" not in k.lower()}
    env.pop("TMPDIR", None)  # unset in most readers' shells
    try:
        done = subprocess.run(["bash", "--noprofile", "--norc", str(path)], cwd=folder, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=WALKTHROUGH_SECONDS)
        printed = done.stdout
    except subprocess.TimeoutExpired as exc:
        printed = (exc.stdout or b"") + f"\n[stopped after {WALKTHROUGH_SECONDS} s]".encode()
    text = printed.decode("utf-8", "replace")
    results: dict[str, tuple[str, dict[str, str]]] = {}
    for index, example in enumerate(examples):
        before, found, rest = text.partition(f"\n{mark} vars {index}\n")
        if not found:
            results[example.name] = (before + "\n[the walkthrough stopped before this example's end]", {})
            text = ""
            continue
        values, _, text = rest.partition(f"{mark} end {index}\n")
        variables = dict(line.split("=", 1) for line in values.splitlines() if "=" in line)
        results[example.name] = (before, variables)
    return results


def serve_and_run(folder: Path) -> Run:
    """``linksvc serve`` as the README starts it, in ``folder``; the walkthrough against it; then SIGTERM."""
    readme_env, args = serve_command(TEXT)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINKSVC_")}
    env.update({name: value.replace(README_ADDRESS, f"127.0.0.1:{port}") for name, value in readme_env.items()})
    env.update(LINKSVC_PORT=str(port), LINKSVC_PUBLIC_URL=f"http://127.0.0.1:{port}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    log_path = folder / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "linksvc", *args], cwd=folder, env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
    try:
        if not ready(f"http://127.0.0.1:{port}"):
            raise AssertionError("linksvc serve did not start:\n" + log_path.read_text())
        outputs = run_walkthrough(EXAMPLES, port, folder)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return Run(port, outputs, "\n".join(log_path.read_text(errors="replace").splitlines()[-30:]))


@pytest.fixture(scope="module")
def walkthrough_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One run of the walkthrough per test session. Under pytest-xdist the first worker to get here runs it
    (the others wait on a lock) and leaves the result for the others in the run's shared temporary folder."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run_id is None:
        return serve_and_run(tmp_path_factory.mktemp("readme"))
    shared = tmp_path_factory.getbasetemp().parent / f"readme-walkthrough-{run_id}.json"
    with shared.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if shared.exists():
            saved = json.loads(shared.read_text())
            return Run(saved["port"], {k: (v[0], v[1]) for k, v in saved["outputs"].items()}, saved["log"])
        run = serve_and_run(tmp_path_factory.mktemp("readme"))
        shared.write_text(json.dumps({"port": run.port, "outputs": run.outputs, "log": run.log}))
        return run


def test_the_readme_serve_command_is_linksvc_serve_on_the_documented_address() -> None:
    env, args = serve_command(TEXT)
    assert args[0] == "serve"
    assert f"http://{README_ADDRESS}" in TEXT.split(f"## {WALKTHROUGH_SECTION}")[0]
    assert all(name.startswith("LINKSVC_") for name in env)
    # The walkthrough's admin calls use the admin token the serve command gives.
    assert f"Authorization: Bearer {env['LINKSVC_ADMIN_TOKEN']}" in TEXT


def test_every_sh_block_is_run_or_deliberately_not() -> None:
    sections = {b.section for b in sh_blocks(TEXT)}
    assert sections <= NOT_RUN_SECTIONS | {WALKTHROUGH_SECTION}, sections
    assert set(EXPECTED_TO_FAIL) <= {e.name for e in EXAMPLES}, "an expected failure names no example"


def test_the_walkthrough_calls_only_the_local_service() -> None:
    for example in EXAMPLES:
        for url in re.findall(r"https?://[^\s'\"]+", example.commands):
            # this-service.invalid: the demo's placeholder host, which the service sends to itself (RFC 6761's .invalid
            # never resolves: linksvc.demo.endpoints)
            assert (url.startswith((f"http://{README_ADDRESS}/", "http://this-service.invalid/"))
                    or "example.com" in url), (example.name, url)


@sqlite_only("the README's outputs show the keys of JSON answers in the order the service gives them on "
             "SQLite; on PostgreSQL, bodies kept as jsonb come back in jsonb's key order (shortest key first), which "
             "two examples' expected outputs do not match (a link, a webhook connection)")
@pytest.mark.parametrize(
    "example",
    [pytest.param(e, id=e.name, marks=[pytest.mark.xfail(reason=EXPECTED_TO_FAIL[e.name], strict=True)]
                  if e.name in EXPECTED_TO_FAIL else []) for e in EXAMPLES],
)
def test_readme_example(example: Example, walkthrough_run: Run) -> None:
    output, variables = walkthrough_run.outputs[example.name]
    expected = example.expected.replace(README_ADDRESS, f"127.0.0.1:{walkthrough_run.port}")
    actual = normalized(output)
    if not output_pattern(normalized(expected), variables).fullmatch(actual):
        shown = "".join(f"\n  ${name} = {value}" for name, value in variables.items())
        pytest.fail(f"README example {example.name!r} (README line {example.line}) printed what the README does "
                    f"not say.\n--- expected (… is any text){shown}\n{expected}\n--- actual\n{actual}"
                    f"\n--- the end of the service's log\n{walkthrough_run.log}", pytrace=False)


def test_the_output_notation() -> None:
    pattern = output_pattern('{"id":"…","order":"$ORDER"}\n200', {"ORDER": "order-1"})
    assert pattern.fullmatch('{"id":"3f6c-1","order":"order-1"}\n200')
    assert pattern.fullmatch('{"id":"","order":"order-1"}\n200')
    assert not pattern.fullmatch('{"id":"3f6c-1","order":"order-2"}\n200')
    assert not pattern.fullmatch('{"id":"3f6c-1","order":"order-1"}\n201')
    assert normalized("\nLocation: x\r\n") == "Location: x"


def test_an_example_is_its_commands_up_to_its_output_lines() -> None:
    block = Block(WALKTHROUGH_SECTION, 10, "# first\nA=1\necho $A\n# → 1\n# → \nB=2\n# second\necho $B\n# → 2")
    assert examples_of(block) == [Example("first", 10, "# first\nA=1\necho $A", "1\n"),
                                  Example("second", 15, "B=2\n# second\necho $B", "2")]
    with pytest.raises(AssertionError, match="without their output"):
        examples_of(Block(WALKTHROUGH_SECTION, 1, "# one\necho 1\n# → 1\necho 2"))
