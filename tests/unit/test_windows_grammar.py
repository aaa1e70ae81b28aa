"""Every PowerShell script nicbench can send, parsed by a real PowerShell grammar
(tree-sitter-powershell, PyPI), with no ERROR or MISSING node: every builder, what the
plans of the three Windows profiles send, the capture's probes and the checked-in golden
scripts. Hostile values (quotes of every kind, backtick, ``$(...)``, ``;``, newline,
braces, comment and here-string starts) in every string that reaches a script leave the
parse tree's shape as it is with a harmless value, and a NUL is refused before anything
is sent.

The grammar is checked first on snippets whose verdict is known (about_Quoting_Rules,
about_Parsing), so a grammar that accepts everything cannot pass this file. Two of its
limits are pinned too: it does not know that PowerShell also ends a single-quoted
string at a typographic quote (’ ‘ ‚ ‛), and it refuses a one-line ``switch`` with no
separator between its clauses, which PowerShell takes. For the first, each script is
also read with the test's own tokenizer of PowerShell's quoting rules
(``windows_helpers.ps_literals``): with a hostile value the script holds the same
literals, one changed where the value went.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_powershell

from nicbench.config.loader import load_profile
from nicbench.execution.plan import make_plan
from nicbench.platforms import windows_capture
from nicbench.platforms import windows_commands as wc
from nicbench.platforms.fake_windows import FakeAdapter, FakeWindowsHost, FakeWindowsPair
from nicbench.remote.powershell import (PROLOGUE, WindowsScriptError, WindowsShell,
                                        decode_command, ps_script)
from nicbench.remote.warm_powershell import SESSION, session_command
from nicbench.tools.registry import CATALOG

from test_plan import WINDOWS
from windows_helpers import params, ps_literals

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "data" / "windows_scripts"
WINDOWS_PROFILES = sorted((ROOT / "profiles").glob("*-windows.yaml"))
SH = WindowsShell()
PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))
HARMLESS = "Q7"
HOSTILE = ["it's", "it’s", "‘x‘", "‚‛", "“quoted”", '"double"', "back`tick", "`'",
           "$(Remove-Item C:\\ -Recurse)", "$env:TEMP", "a; exit 0", "line\nnext",
           "cr\r\nlf", "} catch { }", "# comment", "@'\nhere\n'@", "a | b & c", "é イーサネット",
           "x'; Stop-Computer; '"]


def problems(script: str) -> list[str]:
    """The ERROR and MISSING nodes of ``script``'s parse, with where they are. A MISSING
    node can be a hidden one the Python binding lists under no parent (``function { }``
    misses a hidden ``_command_token``), so the tree's own ``has_error`` and its
    S-expression decide, and the deepest node that has the error says where."""
    root = PARSER.parse(script.encode("utf-8")).root_node
    sexp = str(root)
    if not root.has_error and "(ERROR" not in sexp and "(MISSING" not in sexp:
        return []
    node = root
    while (inner := next((c for c in node.children if c.has_error), None)) is not None:
        node = inner
    row, col = node.start_point
    line = script.split("\n")[row] if row <= script.count("\n") else ""
    kinds = sorted({k for k in ("ERROR", "MISSING") if f"({k}" in sexp}) or ["error"]
    return [f"{'/'.join(kinds)} in {node.type} at {row + 1}:{col + 1}: {line.strip()[:80]!r}"]


def shape(script: str) -> list[str]:
    """The parse tree's node types in order; a string literal is one node, whatever it
    holds (so two scripts that differ only inside their literals have one shape)."""
    out: list[str] = []

    def walk(node: tree_sitter.Node, depth: int) -> None:
        out.append(f"{depth}:{node.type}")
        if node.type in ("string_literal", "comment"):
            return
        for child in node.children:
            walk(child, depth + 1)
    walk(PARSER.parse(script.encode("utf-8")).root_node, 0)
    return out


def scripts_of(argv: list[str]) -> list[str]:
    """What a Connection sends for ``argv``, decoded (the pid line and prologue
    included), and every script that travels inside it as a value (the background
    runner, which the host encodes and starts)."""
    sent = SH.script_with_pid(argv)
    nested = [v for v in params(sent[len(PROLOGUE) + len("[Console]::Out.WriteLine($PID)\n"):]
                                ).values() if v.startswith(PROLOGUE)]
    # the same command as the host's warm PowerShell session runs it (warm_powershell)
    return [sent, SH.warm_script(argv), *nested]


# -- the grammar, checked first ----------------------------------------------------------------
GOOD = [
    "$a = 'it''s'\nGet-Item -LiteralPath $a\n",
    "try { 1 } catch { [Console]::Error.WriteLine(($_ | Out-String).Trim()); exit 1 }",
    "try { 1 } finally { 2 }",
    "switch ($k) {\n    'DWord' { $v = 1 }\n    default { $v = 2 }\n}\n",
    "function Count-Matches { return 0 }",
    '$x = @($t -split "`r?`n" | Where-Object { $re.IsMatch($_) }).Count',
    "[ordered]@{a = 1; b = @(1)}",
    "$null = & taskkill.exe /PID ([int]$Id) /T /F",
    "for ($i = 0; (Get-NetAdapter -Name $N).Status -ne 'Up'; $i++) { Start-Sleep 1 }",
    "& 'ping.exe' '-n' '1' '198.18.0.2'\nexit $global:LASTEXITCODE\n",
]
BAD = ["if ($x { }", "$a = 'unterminated", "foreach ($p in ) { }", "}", "$x = (1 + )",
       "function { }", "$a = @{a = 1", '& "x', "[Console]::Out.WriteLine(",
       "for ($i = 0; $i -lt 3; $i++ { }", "try { 1 } catch { 2", '$x = "$("', "exit 1)",
       "$a = 'x'' + 1"]


@pytest.mark.parametrize("script", GOOD)
def test_the_grammar_takes_what_powershell_takes(script):
    assert problems(script) == []


@pytest.mark.parametrize("script", BAD)
def test_the_grammar_refuses_what_powershell_refuses(script):
    assert problems(script), script


def test_the_grammars_known_limits():
    # PowerShell ends 'it’s' at ’ (about_Quoting_Rules); the grammar reads one string.
    # So typographic quotes are checked with ps_literals (PowerShell's rules) as well.
    assert problems("$a = 'it’s'") == []
    with pytest.raises(AssertionError, match="unterminated"):
        ps_literals("$a = 'it’s'")       # 'it’ then s' that never ends
    assert ps_literals("$a = 'it’’s'") == ["it’s"]
    # A one-line switch with no separator: PowerShell takes it, the grammar does not.
    # No script of nicbench's writes one (every script below parses clean).
    assert problems("switch ($k) { 'a' { 1 } default { 2 } }")


# -- every script nicbench can send ------------------------------------------------------------
def builders(v: str) -> dict[str, Callable[[], list[str]]]:
    """Each command builder with ``v`` in every string it takes from the inventory, a
    profile, a journal or the host: by builder name, so a new builder without an entry
    here fails test_every_builder_is_here."""
    temp = "C:\\Users\\bench\\AppData\\Local\\Temp\\"
    return {
        "host_facts_argv": wc.host_facts_argv,
        "last_boot_argv": wc.last_boot_argv,
        "adapter_argv": lambda: wc.adapter_argv(v),
        "advanced_format_list_argv": lambda: wc.advanced_format_list_argv(v),
        "set_advanced_argv": lambda: wc.set_advanced_argv(v, v, v, 60),
        "reg_query_argv": lambda: wc.reg_query_argv(v),
        "reg_get_argv": lambda: wc.reg_get_argv("TcpWindowSize"),
        "set_registry_argv": lambda: wc.set_registry_argv("TcpWindowSize",
                                                          wc.RegValue("REG_SZ", v)),
        "firewall_get_argv": lambda: wc.firewall_get_argv(v),
        "firewall_set_argv": lambda: wc.firewall_set_argv(v, v),
        "ping_argv": lambda: wc.ping_argv(v, 1472),
        "cpu_raw_argv": wc.cpu_raw_argv,
        "wait_listening_argv": lambda: wc.wait_listening_argv(5001, v, 10),
        "tool_file_argv": lambda: wc.tool_file_argv(v),
        "reboot_argv": wc.reboot_argv,
        "native": lambda: [v, "-s", v],
        "ps_script": lambda: ps_script("[Console]::Out.WriteLine($Name)", "x", Name=v),
        "kill_argv": lambda: SH.kill_argv(1234),
        "background_argv": lambda: SH.background_argv([v, "-s", v], temp + v + ".d"),
        "reap_argv": lambda: SH.reap_argv([temp + v + ".d", temp + v + ".pid"]),
        "alive_argv": lambda: SH.alive_argv(1234),
        "wait_argv": lambda: SH.wait_argv(1234),
        "ended_argv": lambda: SH.ended_argv(temp + v, 5),
        "stop_after_output_argv": lambda: SH.stop_after_output_argv(1234, temp + v, v, 1,
                                                                    5, "KILL"),
        "collect_argv": lambda: SH.collect_argv(temp + v),
        "cleanup_argv": lambda: SH.cleanup_argv(temp + v),
        "read_and_remove_argv": lambda: SH.read_and_remove_argv(temp + v),
    }


def with_pidfile(v: str) -> str:
    """What a trial's client sends: a native command with its pid file."""
    return SH.script_with_pid(["iperf.exe", "-c", v], "C:\\Temp\\" + v + ".pid")


def test_every_builder_is_here():
    made = {name for name, _ in inspect.getmembers(wc, inspect.isfunction)
            if name.endswith("_argv")}
    made |= {name for name, _ in inspect.getmembers(WindowsShell, inspect.isfunction)
             if name.endswith("_argv")}
    assert made <= set(builders(HARMLESS)), made - set(builders(HARMLESS))


@pytest.mark.parametrize("name", sorted(builders(HARMLESS)))
def test_every_builders_script_parses_clean(name):
    for script in scripts_of(builders(HARMLESS)[name]()):
        assert problems(script) == [], script


def test_a_clients_script_with_its_pid_file_parses_clean():
    assert problems(with_pidfile(HARMLESS)) == []
    client = ["iperf.exe", "-c", HARMLESS]
    assert problems(SH.warm_script(client, "C:\\Temp\\" + HARMLESS + ".pid")) == []


def test_the_warm_sessions_own_script_parses_clean():
    # The one script that is not a command: the long-lived powershell.exe per host that
    # reads the others from stdin (remote/warm_powershell.py), as it is started.
    assert problems(SESSION) == []
    assert problems(decode_command(session_command())) == []


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.ps1")), ids=lambda p: p.stem)
def test_every_golden_script_parses_clean(path):
    assert problems(path.read_text(encoding="utf-8")) == []


def test_the_captures_probes_parse_clean():
    pair = FakeWindowsPair()
    pair.add(FakeWindowsHost("wa", {"Ethernet 2": FakeAdapter(("198.18.0.1",))}))
    plat = pair.platform("wa")
    for probe in windows_capture.probes(plat, ["Ethernet 2", "イーサネット"], ["198.18.0.2"]):
        for script in scripts_of(probe.argv):
            assert problems(script) == [], probe.name


@pytest.mark.parametrize("path", WINDOWS_PROFILES, ids=lambda p: p.stem)
def test_every_script_a_windows_profiles_plan_sends_parses_clean(path):
    plan = make_plan(load_profile(path, CATALOG), WINDOWS)
    sent = [s for s in plan.sent if s.host in ("wa", "wb")]
    assert len(sent) > 50      # tuning, reboots, trials and the restore were planned
    for s in sent:
        nested = [v for v in params(s.command).values() if v.startswith(PROLOGUE)]
        for script in [s.command, *nested]:
            assert problems(script) == [], (s.where, script)


def test_there_are_three_windows_profiles():
    assert len(WINDOWS_PROFILES) == 3


# -- hostile values ----------------------------------------------------------------------------
@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", sorted(builders(HARMLESS)))
def test_a_hostile_value_leaves_every_scripts_shape_as_it_is(name, value):
    try:
        hostile = scripts_of(builders(value)[name]())
    except WindowsScriptError:
        # Refused when built: a word PowerShell 5.1 cannot pass to a native program
        # intact (a double quote), a path with a newline.
        assert '"' in value or "\n" in value, (name, value)
        return
    harmless = scripts_of(builders(HARMLESS)[name]())
    assert len(hostile) == len(harmless)
    for h, b in zip(hostile, harmless, strict=True):
        assert problems(h) == [], (name, value)
        assert shape(h) == shape(b), (name, value)
        # PowerShell's own quoting rules (typographic quotes included): the same
        # literals, each either unchanged or one the value went into.
        lh, lb = ps_literals(h), ps_literals(b)
        assert len(lh) == len(lb), (name, value)
        assert all(x == y or HARMLESS in y for x, y in zip(lh, lb, strict=True)), (name, value)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_value_in_a_clients_command_leaves_its_shape_as_it_is(value):
    if '"' in value:
        with pytest.raises(WindowsScriptError):
            with_pidfile(value)
        return
    assert problems(with_pidfile(value)) == []
    assert shape(with_pidfile(value)) == shape(with_pidfile(HARMLESS))


@pytest.mark.parametrize("name", sorted(builders(HARMLESS)))
def test_a_nul_is_refused_before_anything_is_sent(name):
    argv = builders(HARMLESS)[name]()
    if HARMLESS not in "".join(str(w) for w in argv):
        return       # takes no string: nothing of a user's reaches it
    with pytest.raises((WindowsScriptError, ValueError), match="NUL"):
        SH.render(builders("a\0b")[name]())
    with pytest.raises(WindowsScriptError, match="NUL"):
        with_pidfile("a\0b")


# -- 'Stop' is for cmdlets: native programs judged by their exit code ---------------------
def native_commands(script: str) -> list[str]:
    """Commands in ``script`` that run a native program by its file name (``x.exe``,
    bare or quoted after ``&``)."""
    found: list[str] = []

    def walk(node: tree_sitter.Node) -> None:
        if node.type == "command":
            name = next((c for c in node.children if c.type == "command_name_expr"
                         or c.type == "command_name"), None)
            text = (name.text or b"").decode().strip("'\"") if name is not None else ""
            if text.lower().endswith(".exe"):
                found.append(text)
        for child in node.children:
            walk(child)
    walk(PARSER.parse(script.encode("utf-8")).root_node)
    return found


def test_the_native_command_finder_finds_them():
    assert native_commands("$null = & taskkill.exe /PID 1\n& 'ping.exe' '-n' '1'\n"
                           "Invoke-Native taskkill.exe /T\n") == ["taskkill.exe", "ping.exe"]


@pytest.mark.parametrize("name", sorted(builders(HARMLESS)))
def test_no_native_program_runs_where_error_action_is_stop(name):
    # PS 5.1 + 'Stop' + a native program's redirected stderr = a terminating error
    # (PowerShell#3996): inside the 'Stop' scripts, natives go through Invoke-Native.
    for script in scripts_of(builders(HARMLESS)[name]()):
        if "$ErrorActionPreference = 'Stop'" in script:
            assert native_commands(script) == [], (name, script)
        else:      # a native argv: judged by its exit code, which the script passes on
            assert "exit $global:LASTEXITCODE" in script, name
