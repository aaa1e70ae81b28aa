"""One PowerShell per Windows host (``remote/warm_powershell.py``): commands framed into
one long-lived session, as the scripted Windows host (``platforms/fake_windows.py``)
decodes and answers each frame the way the session's text does. What PowerShell itself
does with the session (``exit`` in a script file, scopes, stdin) is argued from its
documentation and checked against the grammar only (``test_windows_grammar.py``); no
PowerShell runs here."""

from __future__ import annotations

import pytest
import tree_sitter

from nicbench.errors import CommandTimeout, ConnectError
from nicbench.platforms.fake_windows import FakeAdapter, FakeWindowsHost, FakeWindowsPair, ToolRun
from nicbench.remote.powershell import PID_LINE, WindowsShell, decode_command, ps_script
from nicbench.remote.warm_powershell import (END, READY, SESSION, FrameEnd, end_lines, ended,
                                             frame, is_ready, read_frame, session_command)

from test_windows_grammar import PARSER, problems

HOSTILE_OUT = ("line one\n"
               f"{END} 00000000000000000000000000000000 0\n"     # another nonce
               f"\n{END} \n{END}\n{READY}\n"                      # half markers
               f"x{END} NONCE 0\n")                               # not a line start


def host(tool_run=None, **kw) -> tuple[FakeWindowsHost, object]:
    pair = FakeWindowsPair()
    h = pair.add(FakeWindowsHost("wa", {"Ethernet 2": FakeAdapter(addresses=("198.18.0.1",))},
                                 tool_run=tool_run, **kw))
    return h, pair.platform("wa").conn


def runs(code: int | None, out: str = "ok\n"):
    def tool(h, argv):
        return ToolRun(client=out, exit_status=code)  # type: ignore[arg-type]
    return tool


def test_commands_after_the_first_start_no_process():
    h, conn = host(runs(0))
    for _ in range(5):
        assert conn.run(["iperf.exe", "-v"]).stdout == "ok\n"
    assert (h.sessions, h.powershell_starts) == (1, 1)
    assert conn.notices == []


def test_a_scripts_exit_3_comes_back_as_3_and_the_session_lives_on():
    h, conn = host(runs(3, "half done\n"))
    res = conn.run(["iperf.exe", "-c", "198.18.0.2"], warn=True)
    assert (res.exit_status, res.stdout) == (3, "half done\n")
    first = h.session_pid
    assert first is not None
    h.tool_run = runs(0)
    assert conn.run(["iperf.exe", "-v"]).exit_status == 0
    assert h.session_pid == first and h.sessions == 1 and h.powershell_starts == 1


def test_the_script_a_session_runs_ends_as_its_own_process_would():
    sh = WindowsShell()
    native = sh.warm_script(["iperf.exe", "-v"])
    # the session's pid first (what a timeout kills), the native body's own exit, then a
    # plain exit 0 for a script that ends without one; no prologue (the session's)
    assert native.startswith(PID_LINE) and native.endswith("exit $global:LASTEXITCODE\nexit 0\n")
    assert "$ProgressPreference" not in native
    script = sh.warm_script(ps_script("$x = 1", "x", Name="v"))
    assert "$ErrorActionPreference = 'Stop'\ntry {" in script and script.endswith("}\nexit 0\n")


def test_a_lost_session_falls_back_to_a_process_per_command_and_says_so_once():
    h, conn = host(runs(0), session_dies_at=2)
    assert conn.run(["iperf.exe", "-v"]).ok
    with pytest.raises(ConnectError, match="warm PowerShell session ended while `iperf.exe -v` "
                                           r"ran \(its outcome is unknown\)"):
        conn.run(["iperf.exe", "-v"])
    assert conn.warm_lost and len(conn.notices) == 1
    assert "every later command on this host starts a powershell.exe of its own" \
        in conn.notices[0]
    starts = h.powershell_starts
    for _ in range(3):
        assert conn.run(["iperf.exe", "-v"]).stdout == "ok\n"
    assert h.powershell_starts == starts + 3 and h.sessions == 1
    assert len(conn.notices) == 1


def test_a_session_that_cannot_start_runs_the_command_alone_and_says_so_once(capsys):
    h, conn = host(runs(0), warm_refused=True)
    assert conn.run(["iperf.exe", "-v"]).stdout == "ok\n"      # nothing lost
    assert conn.run(["iperf.exe", "-v"]).stdout == "ok\n"
    assert h.sessions == 1 and h.powershell_starts == 1 + 2
    assert len(conn.notices) == 1 and "could not start" in conn.notices[0]
    assert capsys.readouterr().err.count("nicbench: warning: wa: the warm PowerShell") == 1
    assert [c.label for c in conn.calls] == ["iperf.exe", "iperf.exe"]


def test_a_timeout_kills_the_sessions_tree_and_the_next_command_starts_a_fresh_one():
    h, conn = host(runs(None))
    with pytest.raises(CommandTimeout):
        conn.run(["iperf.exe", "-c", "198.18.0.2"], timeout=1.0)
    killed = h.log[-1]
    assert killed == "kill-tree" and h.session_pid is None
    kill = conn.calls[-1]
    assert kill.label == "kill-tree" and kill.wire.startswith("powershell.exe ")
    assert int(kill.params["Id"]) == h._pid            # the session's pid, its tree
    h.tool_run = runs(0)
    assert conn.run(["iperf.exe", "-v"]).ok
    assert h.sessions == 2 and not conn.warm_lost and conn.notices == []


def test_output_that_looks_like_a_frame_end_cannot_end_the_frame():
    h, conn = host(runs(0, HOSTILE_OUT))
    res = conn.run(["iperf.exe", "-v"])
    assert res.stdout == HOSTILE_OUT
    assert conn.run(["iperf.exe", "-v"]).ok and h.sessions == 1


def test_only_this_scripts_nonce_at_a_line_start_ends_a_frame():
    nonce = "ab" * 16
    out_end, err_end = end_lines(nonce, 7)
    body = b"123\r\n" + HOSTILE_OUT.replace("NONCE", nonce).replace("\n", "\r\n").encode()
    assert ended(body, b"", nonce) is None
    assert ended(body + out_end, b"warning\r\n", nonce) is None      # stderr not ended
    done = ended(body + out_end, b"warning\r\n" + err_end, nonce)
    assert done is not None and (done.stdout, done.stderr, done.status) == (
        body, b"warning\r\n", 7)
    assert ended(body + out_end.replace(b" 7", b" 7x"), err_end, nonce) is None
    assert ended(body + end_lines("cd" * 16, 0)[0], end_lines("cd" * 16, 0)[1], nonce) is None


def test_a_frame_end_split_across_reads_is_found_by_looking_only_at_what_came():
    """The session's reply arrives in pieces; FrameEnd looks at each piece once (and a
    marker's length before it), so a marker cut anywhere is still found, and the hostile
    lines before it still cannot end the frame."""
    nonce = "ef" * 16
    out_end, err_end = end_lines(nonce, 3)
    body = b"123\r\n" + HOSTILE_OUT.replace("NONCE", nonce).replace("\n", "\r\n").encode()
    whole_out, whole_err = body + out_end, b"warn\r\n" + err_end
    for cut in range(len(body) - 5, len(whole_out) + 1):
        for cut_err in (0, len(whole_err) - 4, len(whole_err)):
            end = FrameEnd(nonce)
            out, err = bytearray(), bytearray()
            got = []
            for piece_out, piece_err in ((whole_out[:cut], whole_err[:cut_err]),
                                         (whole_out[cut:], whole_err[cut_err:])):
                out += piece_out
                err += piece_err
                got.append(end.seen(out, err))
            assert got[0] is None or (cut == len(whole_out) and cut_err == len(whole_err))
            assert got[1] == ended(whole_out, whole_err, nonce), (cut, cut_err)
            assert got[1] is not None and got[1].status == 3 and got[1].stdout == body


def test_a_frame_carries_any_script_on_one_ascii_line():
    text = "$a = 'イーサネット ’x‘'\n$b = \"`r`n\"\nexit 3\n"
    line = frame("n1", text)
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
    assert read_frame(line) == ("n1", text)


def test_the_session_is_started_as_every_windows_command_is():
    script = decode_command(session_command())
    assert script.endswith(SESSION) and script.startswith("$ProgressPreference")
    assert is_ready(READY.encode() + b"\r\n") and not is_ready(READY.encode())


def _calls(node: tree_sitter.Node) -> list[str]:
    found = []
    if node.type == "command" and node.text:
        found.append(node.text.decode())
    for child in node.children:
        found += _calls(child)
    return found


def test_the_session_runs_each_script_from_a_file_never_as_a_script_block():
    # exit in a script file ends that script and sets $LASTEXITCODE; exit in a script
    # block made from text would end the session (warm_powershell's docstring cites why)
    assert problems(SESSION) == []
    root = PARSER.parse(SESSION.encode()).root_node
    invoked = [c.strip() for c in _calls(root) if c.startswith("&")]
    assert invoked == ["& $nbFile"]
    for banned in ("[scriptblock]::Create", "Invoke-Expression", "iex ", "-Command -"):
        assert banned not in SESSION
    assert "UTF8Encoding $true" in SESSION       # a BOM: 5.1 reads BOM-less .ps1 as ANSI
    assert "[Console]::In.ReadLine()" in SESSION


def test_a_capture_through_the_session_saves_what_the_session_ran_and_answered(tmp_path):
    from nicbench.platforms import windows_capture

    pair = FakeWindowsPair()
    h = pair.add(FakeWindowsHost("wa", {"Ethernet 2": FakeAdapter(addresses=("198.18.0.1",))},
                                 tool_run=runs(0)))
    plat = pair.platform("wa")
    got = windows_capture.capture(plat, tmp_path / "cap", ["Ethernet 2"], ["198.18.0.2"])
    assert h.sessions == 1 and h.powershell_starts == 1 and got
    sh = WindowsShell()
    for n, call in enumerate(pair.connections["wa"].calls, 1):
        saved = next((tmp_path / "cap").glob(f"{n:02d}-*.ps1"))
        assert saved.read_text(encoding="utf-8") == sh.warm_script(call.argv) == call.script
        out = saved.with_suffix(".stdout").read_bytes()
        assert END.encode() not in out and not out.startswith(str(h.session_pid).encode())


def test_no_script_sets_a_preference_beyond_its_own_scope():
    # A script file's assignments live in its own script scope (about_Scopes); only a
    # global: or script: prefix, or dot-sourcing, would carry one into the session and
    # the next script. Every builder's script as the session runs it is checked.
    from test_windows_grammar import HARMLESS, builders

    sh = WindowsShell()
    for name, build in builders(HARMLESS).items():
        text = sh.warm_script(build())
        for leak in ("$global:ErrorActionPreference", "$script:ErrorActionPreference",
                     "$global:ProgressPreference", "Set-Variable"):
            assert leak not in text, (name, leak)
        assert not any(line.lstrip().startswith(". ") for line in text.splitlines()), name
    assert "$global:ErrorActionPreference" not in SESSION
    assert "& $nbFile" in SESSION and ". $nbFile" not in SESSION
