"""A store's password is never printed (issue 32): the URL's user-info password and its
secret query parameters (password, passfile, sslpassword) are masked by one function
(``store.location.masked``) wherever a store is shown, and a database's own message is
scrubbed of them. The failing stores are real: a loopback port nothing listens on, and a
real PostgreSQL server (tests/pgserver.py) refusing a wrong password; every output of
the command (stdout, stderr, every file it wrote) is searched for the password.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from clihelp import env, nicbench

from nicbench.errors import StoreError
from nicbench.results.campaign import CampaignState, RunState
from nicbench.store import open_store, resolve
from nicbench.store.location import masked, scrub, secrets, without_secrets

DATA = Path(__file__).resolve().parents[1] / "report" / "data"
SECRET = "Sekr3tPw"
# 127.0.0.1 port 1: loopback, nothing listens there (connection refused at once)
UNREACHABLE = [
    f"postgresql://nb:{SECRET}@127.0.0.1:1/db",
    f"postgresql://nb@127.0.0.1:1/db?password={SECRET}",
    f"postgres://nb@127.0.0.1:1/db?sslmode=disable&PassWord={SECRET}&connect_timeout=2",
    f"postgresql://nb@127.0.0.1:1/db?sslpassword={SECRET}",
    f"postgresql://nb@127.0.0.1:1/db?passfile=/tmp/{SECRET}",
    f"postgresql://nb:{quote(SECRET + '@/x')}@127.0.0.1:1/db?password={SECRET}x",
]


@pytest.mark.parametrize("url, shown", [
    ("postgresql://u:p%40ss@h:5/d?password=x&sslmode=require&sslpassword=y#f",
     "postgresql://u:***@h:5/d?password=***&sslmode=require&sslpassword=***#f"),
    ("postgresql://u@h/d?passfile=.pgpass", "postgresql://u@h/d?passfile=***"),
    ("postgresql://h/d?host=/run/pg&password", "postgresql://h/d?host=/run/pg&password"),
    ("postgresql://u:a@b@h/d", "postgresql://u:***@h/d"),        # the last @ ends user-info
    ("postgresql://u:a/b@h/d", "postgresql://u:***@h/d"),        # a / not %-encoded
    ("postgresql:///d?%70assword=x", "postgresql:///d?%70assword=***"),    # encoded key
    ("postgresql://h/d", "postgresql://h/d"),
])
def test_masked_hides_every_secret_and_keeps_the_rest(url, shown):
    assert masked(url) == shown


def test_scrub_and_without_secrets():
    url = "postgresql://u:p%40ss@h/d?password=q1&sslmode=require&sslpassword=y2"
    assert secrets(url) == ["p%40ss", "p@ss", "q1", "y2"]
    assert scrub('failed for "p@ss" and q1', url) == 'failed for "***" and ***'
    assert without_secrets(url) == "postgresql://u@h/d?sslmode=require"
    assert without_secrets("postgresql://u:x@h/d?password=z") == "postgresql://u@h/d"


def test_a_url_of_another_scheme_is_masked_in_its_refusal():
    with pytest.raises(StoreError) as err:
        resolve(f"mysql://root:{SECRET}@127.0.0.1/db")
    assert SECRET not in str(err.value) and "mysql://root:***@" in str(err.value)


def _campaign(tmp_path: Path) -> Path:
    camp = tmp_path / "night"
    shutil.copytree(DATA / "run-a", camp / "r1")
    manifest = json.loads((camp / "r1" / "manifest.json").read_text())
    CampaignState(name="nightly", file="n.yaml", text="", shard="1/1",
                  started_at=manifest["started_at"],
                  runs=[RunState(name="r1", profile=manifest["profile"]["name"],
                                 pairs=manifest["pairs"])]).write(camp)
    return camp


def _leaks(res, tmp_path: Path, secret: str) -> list[str]:
    """Where ``secret`` is in a finished command's outputs and the files under tmp_path."""
    found = [name for name, text in (("stdout", res.stdout), ("stderr", res.stderr))
             if secret in text]
    for path in tmp_path.rglob("*"):
        if path.is_file() and secret.encode() in path.read_bytes():
            found.append(str(path))
    return found


def _commands(camp: Path) -> list[list[str]]:
    return [["store", "info"], ["store", "import", str(camp)],
            ["store", "rebuild", "--from", str(camp)], ["status", str(camp)],
            ["history", "--adapter", "x"]]


@pytest.mark.parametrize("url", UNREACHABLE)
def test_a_store_that_does_not_answer_is_named_without_its_password(url, tmp_path):
    camp = _campaign(tmp_path)
    # every command that shows a store, --store and NICBENCH_STORE, for the first URL;
    # `store info` for every form of password
    for words in _commands(camp) if url == UNREACHABLE[0] else [["store", "info"]]:
        for given in ("option", "env") if url == UNREACHABLE[0] else ("option",):
            args = [*words, "--store", url] if given == "option" else words
            environ = env(NICBENCH_STORE=url) if given == "env" else env()
            res = nicbench(*args, cwd=tmp_path, environ=environ)
            assert not _leaks(res, tmp_path, SECRET), (words, given, res.stderr)
            if words[0] == "status" and given == "env":
                continue            # status reads a store only when --store names one
            assert res.returncode != 0, (words, res.stdout)
            assert "127.0.0.1" in res.stderr, res.stderr
            assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def _password_url(pg_server) -> str:
    import psycopg
    import pgserver

    if isinstance(pg_server, pgserver.Unavailable):
        pytest.skip(f"no PostgreSQL server for the store tests: {pg_server}")
    url = pg_server.password_role("nbsecret", "right-one")
    for _ in range(100):            # the server reads pg_hba.conf again on its own time
        try:
            psycopg.connect(url + "&password=" + SECRET, connect_timeout=5).close()
        except psycopg.OperationalError as exc:
            if "password authentication failed" in str(exc):
                return url
        time.sleep(0.1)
    raise AssertionError("the server never asked the role for its password")


def test_a_wrong_password_on_a_real_server_is_not_printed(pg_server, tmp_path):
    base = _password_url(pg_server)
    camp = _campaign(tmp_path)
    user_info = base.replace("nbsecret@", f"nbsecret:{SECRET}@", 1)
    for url in (f"{base}&password={SECRET}", user_info):
        for words in _commands(camp):
            res = nicbench(*words, "--store", url, cwd=tmp_path)
            assert res.returncode != 0, (words, res.stdout)
            assert "password authentication failed" in res.stderr, res.stderr
            assert len(res.stderr.strip().splitlines()) == 1, res.stderr
            assert not _leaks(res, tmp_path, SECRET), (words, res.stderr)


def test_the_right_password_opens_the_store_and_info_masks_it(pg_server, tmp_path):
    base = _password_url(pg_server)
    url = f"{base}&password=right-one"
    with open_store(resolve(url)) as store:
        info = store.info()
    assert "right-one" not in info.location and "password=***" in info.location
    res = nicbench("store", "info", "--store", url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "password=***" in res.stdout and "right-one" not in res.stdout + res.stderr


def test_a_run_whose_store_refuses_its_password_warns_without_it(pg_server, tmp_path):
    from test_runner import GIVE_UP, INVENTORY, fake, iperf3_ok, profile

    from nicbench.execution import events as ev
    from nicbench.execution.runner import Runner
    from nicbench.store import StoreSink

    url = f"{_password_url(pg_server)}&password={SECRET}"
    seen: list = []
    out = tmp_path / "out"
    sink = StoreSink(resolve(url), out, listener=seen.append)
    try:
        Runner(profile(tmp_path, GIVE_UP), INVENTORY, out, hosts=fake(iperf3_ok),
               sinks=[sink]).run()
    finally:
        sink.close()
    warnings = [e.message for e in seen if isinstance(e, ev.Warning)]
    assert len(warnings) == 1 and "password authentication failed" in warnings[0]
    assert SECRET not in warnings[0] and "password=***" in warnings[0]
    assert not [p for p in tmp_path.rglob("*")
                if p.is_file() and SECRET.encode() in p.read_bytes()]


# -- the resume hint carries the store (issue 32) -----------------------------------------
def _hint(*argv: str) -> tuple[str, str]:
    """(the command the hint says, the whole hint) of `nicbench run ARGV` interrupted."""
    from nicbench.cli import build_parser
    from nicbench.cli.run import resume_command, resume_hint

    args = build_parser().parse_args(["run", *argv])
    return resume_command(args, "reports/r 1"), resume_hint(args, "reports/r 1")


def _pasted(command: str):
    import shlex

    from nicbench.cli import build_parser

    return build_parser().parse_args(shlex.split(command)[1:])


@pytest.mark.parametrize("store", ["none", "other dir/s.duckdb", "postgresql://nb@h/d?x=1"])
def test_the_resume_hint_carries_the_store_given(store):
    command, hint = _hint("p.yaml", "--store", store, "--pair", "gbe")
    assert hint == f"`{command}`"
    args = _pasted(command)
    assert (args.store, args.resume, args.pair) == (store, "reports/r 1", ["gbe"])


def test_the_resume_hint_of_a_store_from_the_environment_or_default_adds_nothing():
    command, hint = _hint("p.yaml")
    assert command == "nicbench run p.yaml --resume 'reports/r 1'" and hint == f"`{command}`"


def test_the_resume_hint_leaves_the_password_out_and_says_where_it_goes(pg_server,
                                                                          tmp_path):
    base = _password_url(pg_server)
    command, hint = _hint("p.yaml", "--store", f"{base}&password=right-one")
    assert "right-one" not in hint and "PGPASSWORD" in hint
    pasted = _pasted(command).store
    assert pasted == base
    # as the note says: the URL shown, with the password in PGPASSWORD, opens the store
    res = nicbench("store", "info", "--store", pasted, cwd=tmp_path,
                   environ=env(PGPASSWORD="right-one"))
    assert res.returncode == 0 and "runs: 0" in res.stdout, res.stderr
    res = nicbench("store", "info", "--store", pasted, cwd=tmp_path)
    assert res.returncode == 2 and "password" in res.stderr
