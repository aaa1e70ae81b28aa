"""WindowsShell: what reaches a Windows host, decoded and checked word for word.

No PowerShell runs here (README, "Windows hosts"): the encoded argument is decoded back
to its UTF-16LE script and read with a tokenizer of PowerShell single-quoted literals
written from about_Quoting_Rules (tests/unit/windows_helpers.py), and background
argument lines are split back by a CommandLineToArgvW reimplementation. CLIXML stderr is
decoded from the two real captures in tests/fixtures/windows.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from nicbench.errors import CommandFailed
from nicbench.remote.command import display
from nicbench.remote.powershell import (POWERSHELL, PROLOGUE, WindowsScriptError,
                                        WindowsShell, decode_clixml, decode_command,
                                        decode_file_bytes, list2cmdline, ps_script)
from nicbench.remote.result import make_result
from nicbench.remote.shell import SHELLS

from windows_helpers import command_line_to_argv, params, ps_literals

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "windows"
GOLDEN = Path(__file__).resolve().parent / "data" / "windows_scripts"
SH = WindowsShell()
TEMP = "C:\\Users\\bench\\AppData\\Local\\Temp\\"
B64 = re.compile(r"^[A-Za-z0-9+/=]+$")

HOSTILE = ["plain", "two words", "", "it's", "''", "$env:PATH", "$(Remove-Item C:\\)",
           "a;b", "a&b", "a|b", "50%", "%PATH%", "`backtick`", "1,*,198.18.0.1", "tab\there",
           "héllo wörld ✓", "イーサネット", "Подключение по локальной сети", "‘curly’",
           "C:\\Program Files\\x.exe", "line1\nline2", "-n", "@{a=1}", "#not a comment"]


def encoded_arg(line: str) -> str:
    words = line.split(" ")
    assert tuple(words[:-1]) == POWERSHELL
    return words[-1]


def test_registered_as_the_powershell_shell():
    assert SHELLS["powershell"] is WindowsShell


@pytest.mark.parametrize("word", HOSTILE)
def test_native_words_travel_as_base64_and_come_back_exactly(word):
    line = SH.render(["tool.exe", word, "x"])
    assert B64.match(encoded_arg(line))
    script = decode_command(line)
    assert ps_literals(script[script.index("& "):])[:3] == ["tool.exe", word, "x"]


def test_random_words_property():
    rnd = random.Random(11)
    alphabet = "ab '\"$`,;&|%\\ \té✓\u2019{}()@#-"
    for _ in range(300):
        words = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
                 for _ in range(rnd.randint(1, 4))]
        argv = ps_script("Write-Output $A", "t", A=words[0])
        line = SH.render(argv)
        assert B64.match(encoded_arg(line))
        assert params(decode_command(line)) == {"A": words[0]}
        native = [w for w in words if '"' not in w and not (w.endswith("\\") and
                                                             re.search(r"\s", w))]
        if native:
            body = decode_command(SH.render(["t.exe", *native]))
            assert ps_literals(body[body.index("& "):])[:len(native) + 1] == ["t.exe", *native]


def test_every_script_starts_with_the_prologue_and_native_bodies_keep_the_exit_code():
    for argv in (["ping.exe", "-n", "1", "198.18.0.2"], ps_script("Get-Date", "date")):
        script = decode_command(SH.render(argv))
        assert script.startswith(PROLOGUE)
        assert "$ProgressPreference = 'SilentlyContinue'" in script.split("\n")[0]
        assert "UTF8Encoding $false" in script.split("\n")[1]
    native = decode_command(SH.render(["ping.exe", "-n", "1"]))
    assert native.rstrip().endswith("exit $global:LASTEXITCODE")
    assert "exit 127" in native            # a program that is not there is not exit 0


def test_render_with_pid_prints_the_pid_first():
    script = decode_command(SH.render_with_pid(["NTttcp.exe", "-r"]))
    assert script[len(PROLOGUE):].startswith("[Console]::Out.WriteLine($PID)\n")
    assert "$PidFile" not in script


PIDFILE = "C:\\Users\\Jo O'Neil\\AppData\\Local\\Temp\\nicbench-p.frame9014.ntttcp.r1-0a1b2c3d.pid"


def test_a_pid_file_holds_pid_and_start_time_while_the_client_runs_then_goes():
    line = SH.render_with_pid(["NTttcp.exe", "-s", "it's"], PIDFILE)
    script = decode_command(line)
    assert script == SH.script_with_pid(["NTttcp.exe", "-s", "it's"], PIDFILE)
    lines = script[len(PROLOGUE):].split("\n")
    assert lines[0] == "[Console]::Out.WriteLine($PID)"
    assert params("\n".join(lines[1:])) == {"PidFile": PIDFILE}      # a literal, quoted
    write = next(i for i, ln in enumerate(lines) if "WriteAllText($PidFile" in ln)
    run = next(i for i, ln in enumerate(lines) if ln.startswith("& "))
    remove = next(i for i, ln in enumerate(lines) if ln.startswith("Remove-Item -LiteralPath $PidFile"))
    exits = [i for i, ln in enumerate(lines) if ln.lstrip().startswith(("exit", "if ($null"))]
    # written before the command, with the start time reap compares; removed after it,
    # before any exit that keeps the command's status
    assert write < run < remove < min(i for i in exits if i > run)
    assert "StartTime.ToFileTimeUtc()" in lines[write]
    assert ps_literals(lines[run]) == ["NTttcp.exe", "-s", "it's"]
    with pytest.raises(WindowsScriptError, match="native programs only"):
        SH.render_with_pid(ps_script("Get-Date", "date"), PIDFILE)


def test_double_quotes_and_nul_are_refused_for_native_programs_not_for_scripts():
    for word in ('say "hi"', "a\0b", "C:\\dir with space\\"):
        with pytest.raises(WindowsScriptError):
            SH.render(["tool.exe", word])
    assert params(decode_command(SH.render(ps_script("$A", "t", A='say "hi"')))) == \
        {"A": 'say "hi"'}


def test_too_long_scripts_are_refused_not_truncated():
    with pytest.raises(WindowsScriptError, match="8191"):
        SH.render(ps_script("x" * 3000, "long"))


def test_scripts_are_displayed_by_label_in_results():
    argv = ps_script("Get-NetAdapter -Name $Name", "adapter", Name="Ethernet 2")
    assert display(argv) == "'#powershell' {adapter} Name 'Ethernet 2'"
    res = make_result("w1", argv, stderr="boom", exit_status=1)
    assert "Get-NetAdapter" not in str(CommandFailed(res))


# -- background ---------------------------------------------------------------------------
WORDS = ["-m", "1,0,198.18.0.1", "two words", "back\\slash", "trail\\\\", "50%", "it's", ""]


def test_background_runner_gets_the_exact_words_through_the_command_line():
    workdir = TEMP + "nicbench-p.frame1514.iperf.r1-0a1b2c3d.d"
    argv = SH.background_argv(["NTttcp.exe", *WORDS], workdir)
    outer = decode_command(SH.render(argv))
    p = params(outer)
    assert "Win32_Process -MethodName Create" in outer      # outside the session's job
    # the controller's directory, made here, the runner started in it, "<pid> <start>"
    assert p["Dir"] == workdir
    assert "CurrentDirectory = $Dir" in outer and "CreateDirectory($Dir)" in outer
    assert "StartTime.ToFileTimeUtc()" in outer and "(Join-Path $Dir 'pid')" in outer
    assert p["PowerShell"] == " ".join(POWERSHELL)
    runner = params(p["Runner"])
    assert runner["Exe"] == "NTttcp.exe"
    assert command_line_to_argv(runner["ArgLine"]) == WORDS
    assert "Start-Process @start" in p["Runner"] and "$null = $p.Handle" in p["Runner"]


def test_list2cmdline_round_trips_hostile_words():
    rnd = random.Random(5)
    for _ in range(300):
        words = ["".join(rnd.choice('ab \\"\t%') for _ in range(rnd.randint(0, 8)))
                 for _ in range(rnd.randint(1, 4))]
        assert command_line_to_argv(list2cmdline(words)) == words


def test_kill_is_by_pid_and_tree_never_by_image_name():
    script = decode_command(SH.render(SH.kill_argv(4242)))
    assert "taskkill.exe /PID ([int]$Id) /T /F" in script and "/IM" not in script
    assert params(script) == {"Id": "4242"}


def test_reap_names_every_path_as_one_literal_and_checks_pid_and_start_time():
    paths = [TEMP + "nicbench-p.frame1514.ntttcp.r1-0a1b2c3d.d",
             TEMP + "nicbench-p.frame1514.ntttcp.r1-0a1b2c3d.pid",
             "C:\\Users\\Jo O'Neil\\AppData\\Local\\Temp\\x $y.out"]
    script = decode_command(SH.render(SH.reap_argv(paths)))
    assert params(script)["Paths"].split("\n") == paths
    # stopped only if the pid still runs with the start time written beside it
    assert "StartTime.ToFileTimeUtc() -eq $words[1]" in script
    assert "taskkill.exe /PID $id /T /F" in script and "/IM" not in script
    for word in ("'stopped'", "'gone'", "'none '"):
        assert word in script
    with pytest.raises(WindowsScriptError):
        SH.reap_argv(["a\nb"])


def test_collect_reads_bytes_and_the_controller_decodes_them():
    import base64

    utf16 = "Throughput\r\n".encode("utf-16")          # what ">" writes in 5.1
    out = base64.b64encode(b"\xef\xbb\xbfline 1\r\nline 2\r\n").decode()
    err = base64.b64encode(utf16).decode()
    assert SH.parse_collected(f"{out}\n{err}\n0\n") == ("line 1\nline 2\n", "Throughput\n", 0)
    assert SH.parse_collected("\n\n\n") == ("", "", None)      # killed: no rc
    assert "ReadAllBytes" in decode_command(SH.render(SH.collect_argv("C:\\t\\nicbench.1")))
    assert decode_file_bytes(b"plain") == "plain"


# -- CLIXML ---------------------------------------------------------------------------------
def test_clixml_error_records_without_progress_pywinrm():
    raw = (FIXTURES / "pywinrm__clixml_stderr_progress_and_error.txt").read_text()
    text = decode_clixml(raw)
    assert "Preparing modules" not in text and "CLIXML" not in text and "_x000D_" not in text
    lines = text.splitlines()
    assert lines[0].startswith("fake : The term 'fake' is not recognized")
    assert "    + FullyQualifiedErrorId : CommandNotFoundException" in lines
    res = make_result("w1", ["x"], stderr=SH.tidy_output("", raw)[1], exit_status=1)
    assert res.tail().endswith("FullyQualifiedErrorId : CommandNotFoundException")


def test_clixml_over_ssh_with_ansi_colours_powershell_16678():
    raw = (FIXTURES / "gh-powershell-16678__pwsh7_clixml_stderr_over_ssh_T.txt").read_text()
    assert decode_clixml(raw) == "Write-Error: boomed\n"
    assert make_result("w1", ["x"], stderr=decode_clixml(raw), exit_status=1).tail() == \
        "Write-Error: boomed"


def test_plain_stderr_is_left_alone():
    raw = (FIXTURES / "gh-win32-openssh-936__cmd_exe_not_recognized.txt").read_text()
    assert decode_clixml(raw) == raw


# -- goldens --------------------------------------------------------------------------------
def golden_commands() -> dict[str, str]:
    """Each golden's command line, as a Connection sends it."""
    from nicbench.platforms import windows_commands as wc

    argvs = {
        "native_ntttcp": ["NTttcp.exe", "-r", "-m", "1,0,198.18.0.1", "-a", "4"],
        "background": SH.background_argv(["iperf.exe", "-s", "-p", "5001", "-w", "64K"],
                                         TEMP + "nicbench-p.frame1514.iperf.r1-0a1b2c3d.d"),
        "reap": SH.reap_argv([TEMP + "nicbench-p.frame1514.iperf.r1-0a1b2c3d.d",
                              TEMP + "nicbench-p.frame1514.iperf.r1-0a1b2c3d.pid"]),
        "alive": SH.alive_argv(1234),
        "wait_gone": SH.wait_argv(1234, 0.05),
        "ended": SH.ended_argv("C:\\Temp\\nicbench.0123456789ab", 500),
        "stop_after_output": SH.stop_after_output_argv(
            1234, "C:\\Temp\\nicbench.0123456789ab", r"^\[ *[0-9]+\] ", 1, 40, "KILL"),
        "kill": SH.kill_argv(1234),
        "collect": SH.collect_argv("C:\\Temp\\nicbench.0123456789ab"),
        "cleanup": SH.cleanup_argv("C:\\Temp\\nicbench.0123456789ab"),
        "read_and_remove": SH.read_and_remove_argv("nicbench-p.frame9014.ntttcp.r1.xml"),
        "host_facts": wc.host_facts_argv(),
        "last_boot": wc.last_boot_argv(),
        "adapter": wc.adapter_argv("Ethernet 2"),
        "set_jumbo": wc.set_advanced_argv("Ethernet 2", "*JumboPacket", "9014", 60),
        "reg_query": wc.reg_query_argv("TcpWindowSize"),
        "reg_get": wc.reg_get_argv("TcpWindowSize"),
        "set_registry": wc.set_registry_argv("TcpWindowSize", 20971520),
        "restore_registry_sz": wc.set_registry_argv("TcpWindowSize", wc.RegValue("REG_SZ", "64K")),
        "delete_registry": wc.set_registry_argv("Tcp1323Opts", None),
        "firewall_get": wc.firewall_get_argv("nicbench-p"),
        "firewall_allow": wc.firewall_set_argv("nicbench-p", "5001-5002,6001-6002"),
        "firewall_remove": wc.firewall_set_argv("nicbench-p", None),
        "ping_df": wc.ping_argv("198.18.0.2", 8972, "198.18.0.1"),
        "cpu_raw": wc.cpu_raw_argv(),
        "wait_listening": wc.wait_listening_argv(5001, "tcp", 10),
        "tool_file": wc.tool_file_argv("NTttcp.exe"),
        "reboot": wc.reboot_argv(),
    }
    lines = {name: SH.render(argv) for name, argv in argvs.items()}
    lines["native_with_pidfile"] = SH.render_with_pid(
        ["iperf.exe", "-c", "198.18.0.1", "-t", "10"],
        TEMP + "nicbench-p.frame1514.iperf.r1-0a1b2c3d.pid")
    return lines


@pytest.mark.parametrize("name", sorted(golden_commands()))
def test_decoded_script_matches_its_golden(name):
    script = decode_command(golden_commands()[name])
    path = GOLDEN / f"{name}.ps1"
    if os.environ.get("NICBENCH_UPDATE_GOLDENS"):
        path.write_text(script, encoding="utf-8")
    assert path.exists(), f"no golden {path.name}: run with NICBENCH_UPDATE_GOLDENS=1 and review"
    assert script == path.read_text(encoding="utf-8")


def test_every_golden_has_a_builder():
    assert {p.stem for p in GOLDEN.glob("*.ps1")} == set(golden_commands())


# -- showing a command (a plan, a log) -------------------------------------------------------
def test_script_is_the_public_decoded_form_of_what_render_and_run_send():
    from nicbench.remote.shell import PosixShell

    argvs = [["NTttcp.exe", "-s", "-m", "1,0,198.18.0.1", "it's"],
             ps_script("Get-NetAdapter -Name $Name", "adapter", Name="Ethernet 2"),
             SH.background_argv(["iperf.exe", "-s"], TEMP + "nicbench-x.d"),
             SH.reap_argv([TEMP + "nicbench-x.d"])]
    for argv in argvs:
        assert SH.script(argv) == decode_command(SH.render(argv)) == SH.decode(SH.render(argv))
        assert SH.script_with_pid(argv) == decode_command(SH.render_with_pid(argv))
    pidfile = TEMP + "nicbench-x.pid"
    assert SH.script_with_pid(argvs[0], pidfile) == \
        decode_command(SH.render_with_pid(argvs[0], pidfile))
    # Both shells answer script(): a plan can show any host's commands the same way.
    posix = PosixShell()
    assert posix.script(["ip", "link", "set", "eth0", "mtu", "9000"]) == \
        posix.render(["ip", "link", "set", "eth0", "mtu", "9000"])


def test_a_fake_connection_with_the_windows_shell_shows_what_a_windows_host_would_get():
    from nicbench.platforms import windows_commands as wc
    from nicbench.platforms.windows import WindowsPlatform
    from nicbench.remote.fake import FakeConnection

    conn = FakeConnection("w1", shell=WindowsShell(), default=("", "", 1))
    plat = WindowsPlatform(conn)                 # refused over a POSIX shell
    assert plat.reaches("Ethernet 2", "198.18.0.2") is False
    # the adapter is asked for its address to ping from; it is not there: no -S
    assert conn.calls == [wc.adapter_argv("Ethernet 2"), wc.ping_argv("198.18.0.2")]
    assert conn.scripts[1:] == [SH.script(wc.ping_argv("198.18.0.2"))]
    assert "& 'ping.exe' '-n' '1' '-w' '2000' '198.18.0.2'" in conn.scripts[1]
