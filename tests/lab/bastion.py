"""A bastion beside the lab: one more namespace through which the lab's hosts can be
reached by SSH only, as test hosts in a real lab sit behind a jump host.

Shape (slot *s*; host *i* of the lab)::

    controller (root namespace)
      | veth <prefix>mj  198.19.<16s+15>.1/24  <->  mgmt in the bastion, .2/24
    [<prefix>-jump]  sshd on every address of the namespace
      | veth j<i>  198.19.<16s+16>.<4i+1>/30  <->  jump in host i, .<4i+2>/30
    [host i]  (its sshd, as made by the lab, listens on its management address only)

Both /24s are unused by every slot's hosts (which take 16s+1 .. 16s+14). The bastion
routes each host's management address over that host's link, so through the bastion the
hosts keep the addresses, and the known_hosts lines, they have when reached directly. The
bastion forwards no IP (a new namespace has ip_forward 0): the only way through it is an
SSH channel. :meth:`LabBastion.only_through` makes a host's sshd refuse every client but
the bastion, so a test can prove that a connection really went through it.

The lab stays as it was: ``up`` adds objects of its own names only, ``down`` removes
exactly those (replacing leftovers of a run that was killed), and the host ends of the
links go with the hosts' namespaces when the lab comes down first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from collections.abc import Iterator

from nicbench.errors import CommandError, LabError
from nicbench.lab.lab import MGMT_NET, Lab, LabHost, _listens, _pid_alive
from nicbench.polling import poll_until

NFT_TABLE = "nbjump"


class LabBastion:
    def __init__(self, lab: Lab):
        self.lab = lab
        spec = lab.spec
        self.name = f"{spec.prefix}-jump"
        self.root_link = f"{spec.prefix}mj"
        self.mgmt_net = f"{MGMT_NET}.{spec.slot * 16 + 15}"
        self.link_net = f"{MGMT_NET}.{spec.slot * 16 + 16}"
        self.dir = lab.dir / self.name
        self.hosts = spec.hosts()

    # -- names and addresses ---------------------------------------------------------------
    @property
    def address(self) -> str:
        """Where the controller reaches the bastion."""
        return f"{self.mgmt_net}.2"

    @property
    def gateway(self) -> str:
        return f"{self.mgmt_net}.1"

    def link_address(self, host: LabHost, side: str = "bastion") -> str:
        """The bastion's (or, side="host", the host's) address on their own link: the
        address the host sees the bastion's connections come from."""
        i = self.hosts.index(host)
        return f"{self.link_net}.{4 * i + (1 if side == 'bastion' else 2)}"

    @property
    def host_key_file(self) -> Path:
        return self.dir / "ssh_host_ed25519_key"

    @property
    def pidfile(self) -> Path:
        return self.dir / "sshd.pid"

    @property
    def log(self) -> Path:
        return self.dir / "sshd.log"

    def host_key(self) -> tuple[str, str]:
        """(key type, base64) of the bastion's host key."""
        kind, b64 = (self.dir / "ssh_host_ed25519_key.pub").read_text().split()[:2]
        return kind, b64

    # -- up / down -------------------------------------------------------------------------
    def up(self) -> None:
        if not self.lab.state_file.exists():
            raise LabError(f"the lab in {self.lab.dir} is not up: nicbench lab up first")
        self.down()               # leftovers of a run that was killed
        try:
            self._build()
        except BaseException:
            self.down()
            raise

    def _build(self) -> None:
        run = self.lab._run
        self.dir.mkdir(parents=True, exist_ok=True)
        run(["ip", "netns", "add", self.name], "bastion namespace")
        self._ns(["ip", "link", "set", "lo", "up"])
        run(["ip", "link", "add", self.root_link, "type", "veth", "peer", "name", "mgmt",
             "netns", self.name], "bastion management link")
        run(["ip", "addr", "add", f"{self.gateway}/24", "dev", self.root_link], "address")
        run(["ip", "link", "set", self.root_link, "up"], "bastion link up")
        self._ns(["ip", "addr", "add", f"{self.address}/24", "dev", "mgmt"])
        self._ns(["ip", "link", "set", "mgmt", "up"])
        for i, host in enumerate(self.hosts):
            link = f"j{i}"
            self._ns(["ip", "link", "add", link, "type", "veth", "peer", "name", "jump",
                      "netns", host.name])
            self._ns(["ip", "addr", "add", f"{self.link_address(host)}/30", "dev", link])
            self._ns(["ip", "link", "set", link, "up"])
            self.lab._ns(host, ["ip", "addr", "add", f"{self.link_address(host, 'host')}/30",
                                "dev", "jump"], "host end of the bastion link")
            self.lab._ns(host, ["ip", "link", "set", "jump", "up"], "bastion link up")
            self._ns(["ip", "route", "add", f"{host.address}/32", "via",
                      self.link_address(host, "host"), "dev", link])
        self._sshd()

    def _sshd(self) -> None:
        if not self.host_key_file.exists():
            self.lab._run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", self.name,
                           "-f", str(self.host_key_file)], "bastion host key")
        cfg = self.dir / "sshd_config"
        cfg.write_text("\n".join([
            "ListenAddress 0.0.0.0", "Port 22", f"HostKey {self.host_key_file}",
            f"PidFile {self.pidfile}",
            f"AuthorizedKeysFile {self.lab.dir / 'authorized_keys'}",
            "StrictModes no", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
            "PrintMotd no", "AllowTcpForwarding yes", "MaxStartups 100:30:200",
            "ClientAliveInterval 5", "ClientAliveCountMax 3",   # as the lab's hosts
            "SetEnv SHLVL=1", ""]))
        Path("/run/sshd").mkdir(exist_ok=True)
        self._ns(["/usr/sbin/sshd", "-f", str(cfg), "-E", str(self.log)])
        if not poll_until(partial(_listens, self.address, 22), 10.0, 0.05):
            raise LabError(f"sshd on the bastion ({self.address}:22) did not start; see "
                           f"{self.log}")

    def down(self) -> list[str]:
        """Remove the bastion; returns what was removed (nothing if it was not there)."""
        removed = []
        present = self.lab.existing_namespaces()
        if self.name in present:
            # Its sshd and any session still open: deleting the namespace would not end
            # them (as for the lab's own namespaces).
            ended = self.lab._end_processes(self.name)
            if ended:
                removed.append(f"{ended} processes in {self.name}")
        pid = _pid_alive(str(self.pidfile))     # an sshd whose namespace was deleted
        if pid:
            try:
                os.kill(pid, 15)
                removed.append(f"sshd {pid}")
            except ProcessLookupError:
                pass
        for host in self.hosts:
            if host.name in present:
                self.lab.local.run(["ip", "-n", host.name, "link", "del", "jump"], warn=True)
        if self.name in present:
            self.lab.local.run(["ip", "netns", "del", self.name], warn=True)
            removed.append(f"namespace {self.name}")
        if self.lab.local.run(["ip", "link", "del", self.root_link], warn=True).ok:
            removed.append(f"link {self.root_link}")
        shutil.rmtree(self.dir, ignore_errors=True)
        return removed

    # -- only through the bastion ----------------------------------------------------------
    @contextmanager
    def only_through(self, *hosts: LabHost) -> Iterator[None]:
        """While inside: each host's sshd resets every TCP connection that does not come
        from the bastion (the controller's included). Removed on the way out."""
        done: list[LabHost] = []
        try:
            for host in hosts:
                script = (f"table inet {NFT_TABLE} {{\n chain input {{\n"
                          "  type filter hook input priority 0; policy accept;\n"
                          f"  tcp dport 22 ip saddr != {self.link_address(host)} "
                          "reject with tcp reset\n }\n}\n")
                path = self.dir / f"only-{host.name}.nft"
                path.write_text(script)
                done.append(host)
                self.lab._ns(host, ["nft", "-f", str(path)], "sshd only through the bastion")
            yield
        finally:
            for host in done:
                # (the namespace may be gone already)
                with contextlib.suppress(LabError, CommandError):
                    self.lab._ns(host, ["nft", "delete", "table", "inet", NFT_TABLE],
                                 "remove the bastion-only rule")

    def _ns(self, argv: list[str]) -> None:
        self.lab._run(["ip", "netns", "exec", self.name, *argv], f"bastion: {argv[0]}")
