"""A TCP port held in a lab namespace by another program, for tests of a server that
cannot bind: a Python listener on every address, until the block ends (bounded waits)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

# Holds a TCP port on every address of the namespace until its stdin closes.
SQUATTER = """\
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen()
print("listening", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def port_held(namespace: str, port: int) -> Iterator[None]:
    squatter = subprocess.Popen(["ip", "netns", "exec", namespace, sys.executable, "-c",
                                 SQUATTER, str(port)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
    try:
        assert squatter.stdout is not None and squatter.stdout.readline() == "listening\n"
        yield
    finally:
        assert squatter.stdin is not None
        squatter.stdin.close()
        try:
            squatter.wait(timeout=10)
        except subprocess.TimeoutExpired:
            squatter.kill()
            squatter.wait()
