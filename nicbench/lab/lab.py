"""The local lab: real hosts in network namespaces, real sshd, shaped test links.

Shape (pair k uses hosts 2k and 2k+1; every emulated adapter is one test link per pair)::

    controller (root namespace)
      | veth <prefix>m<i>  198.19.<slot*16+i+1>.1/24  <->  mgmt in the host, .2/24
    [host <prefix>-a] --- test link <adapter key> 198.18.<n>.1/24 <-> .2/24 --- [host <prefix>-b]
      sshd on the management address in each namespace; tools run there

Everything ``up`` makes is named from the :class:`LabSpec` and written to ``state.json``,
so ``down`` removes exactly that and nothing else, and a second ``up`` over a half-made
lab replaces it. All commands run through a ``LocalConnection``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
import os
import shutil
import signal
import socket
import time
from contextlib import contextmanager, suppress
from functools import partial
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from collections.abc import Callable, Iterator

from nicbench.errors import CommandError, LabError
from nicbench.polling import poll_until
from nicbench.lab.adapters import ADAPTERS, DEFAULT_ADAPTERS, LabAdapter
from nicbench.remote.local import LocalConnection
from nicbench.textfile import write_atomic

MGMT_NET = "198.19"
TEST_NET = "198.18"
SHAPING_LATENCY = "5ms"
WIRE_OVERHEAD_BYTES = 24           # FCS 4 + preamble/SFD 8 + inter-frame gap 12
# Calibrated on the lab (tests/lab/test_calibration.py): 20 KB at 1 Gbit/s, scaled with the
# rate, but never less than two of the largest frames. A bucket that holds one frame waits
# for the qdisc's timer after every frame, and a late timer is lost wire time: MTU 16000
# gave 960-987 Mbit/s with a 20000-byte bucket on this 2-core VM (theory 994.4), 972-994
# with 32400, while 1500 stayed at 933-939 (941.5) either way.
BURST_SECONDS = 20000 * 8 / 1e9
BURST_FRAMES = 2
LARGEST_FRAME = 16128 + 14 + WIRE_OVERHEAD_BYTES
NEEDED = {"ip": "iproute2", "tc": "iproute2", "ethtool": "ethtool", "nft": "nftables",
          "/usr/sbin/sshd": "openssh-server", "ssh-keygen": "openssh-client"}
STATE_FORMAT = 1

Progress = Callable[[str], None]


_RATE = re.compile(r"(\d{1,6}(?:\.\d{1,3})?)(kbit|mbit|gbit|bit)")
_RATE_UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "bit": 1}
# What `lab shape` accepts: slower than 1 Mbit/s the tools' short runs move next to
# nothing, and a cap cannot be above the adapter's own line rate.
MIN_SHAPED_BPS = 1e6


def rate_bps(rate: str) -> float:
    m = _RATE.fullmatch(rate) if isinstance(rate, str) else None
    if m is None or float(m.group(1)) <= 0:
        raise LabError(f"rate {rate!r} is not like 100mbit or 1gbit (tc's rate syntax: a "
                       "positive number and kbit, mbit or gbit)")
    return float(m.group(1)) * _RATE_UNITS[m.group(2)]


@dataclass(frozen=True)
class LabHost:
    name: str
    mgmt_if: str          # root-namespace end of the management veth
    mgmt_net: str         # e.g. 198.19.1

    @property
    def address(self) -> str:
        return f"{self.mgmt_net}.2"

    @property
    def gateway(self) -> str:
        return f"{self.mgmt_net}.1"


@dataclass(frozen=True)
class LabLink:
    index: int            # n in 198.18.<n>.0/24
    adapter: LabAdapter
    host_a: LabHost
    host_b: LabHost
    pair_name: str

    @property
    def ifname(self) -> str:
        return self.adapter.key

    @property
    def phy(self) -> str:
        """The veth carrying frames (for macvlan adapters, the one under the macvlan)."""
        return f"{self.adapter.key}p" if self.adapter.max_mtu else self.adapter.key

    @property
    def net(self) -> str:
        return f"{TEST_NET}.{self.index}"

    def address(self, side: str) -> str:
        return f"{self.net}.{1 if side == 'a' else 2}"


@dataclass(frozen=True)
class LabSpec:
    prefix: str = "nb"
    pairs: int = 1
    adapters: tuple[str, ...] = DEFAULT_ADAPTERS
    rate: str | None = None   # overrides every adapter's line rate (nicbench lab up --rate)
    slot: int = 0             # management networks 198.19.<slot*16+i+1>.0/24
    # adapter key -> a lower cap than its own (nicbench lab shape ADAPTER --rate R): the
    # link's tbf runs at this rate; the adapter's line rate (inventory) stays.
    ceilings: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        # ASCII only: the prefix names namespaces and interfaces, and one starting with
        # "-" would reach `ip netns` as an option
        if not re.fullmatch(r"[A-Za-z0-9]{1,6}", self.prefix):
            raise LabError(f"lab prefix {self.prefix!r} must be 1-6 letters or digits")
        if not 1 <= self.pairs <= 7:
            raise LabError(f"--pairs {self.pairs}: the lab makes 1 to 7 pairs")
        if not 0 <= self.slot <= 14:
            raise LabError(f"slot {self.slot} must be 0..14")
        unknown = [a for a in self.adapters if a not in ADAPTERS]
        if unknown:
            raise LabError(f"unknown lab adapter(s) {', '.join(unknown)} "
                           f"(known: {', '.join(ADAPTERS)})")
        if not self.adapters:
            raise LabError("the lab needs at least one adapter")
        if self.rate is not None:
            rate_bps(self.rate)
        if not isinstance(self.ceilings, dict):
            raise LabError(f"ceilings {self.ceilings!r} must map adapters to rates")
        for key, ceiling in self.ceilings.items():
            self._check_ceiling(key, ceiling)

    def _check_ceiling(self, key: str, ceiling: str) -> None:
        if key not in self.adapters:
            raise LabError(f"cannot shape {key!r}: not an adapter of this lab "
                           f"({', '.join(self.adapters)})")
        bps, line = rate_bps(ceiling), self._line_rate(key)
        if not MIN_SHAPED_BPS <= bps <= rate_bps(line):
            raise LabError(f"{ceiling} is not between 1mbit and {key}'s line rate {line} "
                           "(a lab adapter can only be slowed)")

    def _line_rate(self, key: str) -> str:
        return self.rate if self.rate is not None else ADAPTERS[key].rate

    def adapter(self, key: str) -> LabAdapter:
        a = ADAPTERS[key]
        if self.rate is not None:
            a = replace(a, rate=self.rate, ceiling=None)
        if key in self.ceilings:
            a = replace(a, ceiling=self.ceilings[key])
        return a

    def hosts(self) -> list[LabHost]:
        out = []
        for i in range(self.pairs * 2):
            letter = "abcdefghijklmn"[i]
            out.append(LabHost(name=f"{self.prefix}-{letter}", mgmt_if=f"{self.prefix}m{i}",
                               mgmt_net=f"{MGMT_NET}.{self.slot * 16 + i + 1}"))
        return out

    def links(self) -> list[LabLink]:
        hosts = self.hosts()
        out = []
        for k in range(self.pairs):
            for j, key in enumerate(self.adapters):
                name = key if self.pairs == 1 else f"p{k + 1}-{key}"
                out.append(LabLink(index=k * len(self.adapters) + j,
                                   adapter=self.adapter(key), host_a=hosts[2 * k],
                                   host_b=hosts[2 * k + 1], pair_name=name))
        return out

    def to_json(self) -> dict:
        d = asdict(self)
        d["adapters"] = list(self.adapters)
        if not self.ceilings:
            del d["ceilings"]    # a lab never shaped keeps the state it always had
        return d


@dataclass
class LabState:
    spec: dict
    namespaces: list[str] = field(default_factory=list)
    root_links: list[str] = field(default_factory=list)
    sshd_pidfiles: list[str] = field(default_factory=list)
    created_at: float = 0.0
    format_version: int = STATE_FORMAT


class Lab:
    def __init__(self, spec: LabSpec, directory: str | Path = ".lab",
                 progress: Progress | None = None):
        self.spec = spec
        self.dir = Path(directory).resolve()
        self.local = LocalConnection("lab")
        self.say = progress or (lambda msg: None)

    @classmethod
    def existing(cls, directory: str | Path, default: LabSpec,
                 progress: Progress | None = None) -> Lab:
        """The lab recorded in ``directory`` (its own spec), else one with ``default``."""
        lab = cls(default, directory, progress)
        state = lab.read_state()
        if state is not None:
            spec = dict(state.spec)
            spec["adapters"] = tuple(spec["adapters"])
            lab.spec = LabSpec(**spec)
        return lab

    # -- paths --------------------------------------------------------------------
    @property
    def state_file(self) -> Path:
        return self.dir / "state.json"

    @property
    def client_key(self) -> Path:
        return self.dir / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    @property
    def inventory_file(self) -> Path:
        return self.dir / "inventory.yaml"

    def host_dir(self, host: LabHost) -> Path:
        return self.dir / host.name

    def sshd_pidfile(self, host: LabHost) -> Path:
        return self.host_dir(host) / "sshd.pid"

    # -- helpers ------------------------------------------------------------------
    def _run(self, argv: list[str], what: str, timeout: float = 30):
        try:
            return self.local.run(argv, timeout=timeout)
        except CommandError as exc:
            raise LabError(f"{what}: `{exc.result.command}` failed: "
                           f"{exc.result.tail() or 'no output'}") from exc

    def _succeeds(self, argv: list[str], timeout: float) -> bool:
        return self.local.run(argv, warn=True, timeout=timeout).ok

    def _ns(self, host: LabHost, argv: list[str], what: str, timeout: float = 30):
        return self._run(["ip", "netns", "exec", host.name, *argv], what, timeout)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        lock_path = Path("/run") / f"nicbench-lab-{self.spec.prefix}.lock"
        with open(lock_path, "w") as fh:
            def locked() -> bool:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return True
                except BlockingIOError:
                    return False

            if not poll_until(locked, timeout_s=120, interval_s=0.2):
                raise LabError(f"another nicbench is changing lab '{self.spec.prefix}' "
                               f"(lock {lock_path} held for 2 minutes)")
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def preflight(self) -> None:
        if os.geteuid() != 0:
            raise LabError("the lab needs root (it creates network namespaces and runs sshd): "
                           "run nicbench lab as root")
        missing = sorted({pkg for cmd, pkg in NEEDED.items() if shutil.which(cmd) is None
                          and not os.path.exists(cmd)})
        if missing:
            raise LabError(f"missing packages for the lab: {' '.join(missing)} "
                           f"(apt-get install {' '.join(missing)})")

    def existing_namespaces(self) -> set[str]:
        res = self.local.run(["ip", "-j", "netns", "list"], warn=True)
        try:
            return {n["name"] for n in json.loads(res.stdout or "[]")}
        except json.JSONDecodeError:
            return set()

    def read_state(self) -> LabState | None:
        try:
            data = json.loads(self.state_file.read_text())
            return LabState(**data)
        except (OSError, json.JSONDecodeError, TypeError):
            # OSError, not only FileNotFoundError: a non-root user cannot read a root lab's
            # directory, and must get "needs root" from the preflight, not a traceback.
            return None

    # -- up -----------------------------------------------------------------------
    def up(self) -> LabState:
        self.preflight()
        with self._locked():
            state = self.read_state()
            if state and state.spec == self.spec.to_json() and self._healthy(state):
                self.say("lab already up")
                self._write_inventory()
                return state
            if state is None and self._our_leftovers():
                self._refuse_a_lab_owned_elsewhere()
            if state or self._our_leftovers():
                self.say("replacing an existing or half-made lab")
                self._teardown(state)
            return self._build()

    @property
    def owner_file(self) -> Path:
        # Which state directory made the lab of this prefix: a lab is never replaced from
        # another directory (a second checkout), which would strand the first one's keys.
        return Path("/run") / f"nicbench-lab-{self.spec.prefix}.owner"

    def _refuse_a_lab_owned_elsewhere(self) -> None:
        try:
            owner = Path(self.owner_file.read_text().strip())
        except OSError:
            return
        if owner != self.dir.resolve() and (owner / "state.json").exists():
            raise LabError(f"lab '{self.spec.prefix}' is up and belongs to {owner}: bring it "
                           f"down there (nicbench lab down --dir {owner}) or choose another "
                           "NICBENCH_LAB_PREFIX")

    def _our_leftovers(self) -> bool:
        names = {h.name for h in self.spec.hosts()}
        return bool(names & self.existing_namespaces())

    def _build(self) -> LabState:
        spec = self.spec
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        state = LabState(spec=spec.to_json(), created_at=time.time())
        self.owner_file.write_text(f"{self.dir.resolve()}\n")
        # Record every object before creating it, so a failure half-way can be undone.
        try:
            for host in spec.hosts():
                self.say(f"host {host.name}")
                state.namespaces.append(host.name)
                self._save(state)
                self._run(["ip", "netns", "add", host.name], f"create namespace {host.name}")
                self._ns(host, ["ip", "link", "set", "lo", "up"], "loopback up")
                self._ns(host, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                                "net.ipv6.conf.default.disable_ipv6=1"], "IPv6 off")
                state.root_links.append(host.mgmt_if)
                self._save(state)
                self._run(["ip", "link", "add", host.mgmt_if, "type", "veth", "peer", "name",
                           "mgmt", "netns", host.name], f"management link of {host.name}")
                self._run(["ip", "addr", "add", f"{host.gateway}/24", "dev", host.mgmt_if],
                          "management address")
                self._run(["ip", "link", "set", host.mgmt_if, "up"], "management link up")
                self._ns(host, ["ip", "addr", "add", f"{host.address}/24", "dev", "mgmt"],
                         "host management address")
                self._ns(host, ["ip", "link", "set", "mgmt", "up"], "host management link up")
            for link in spec.links():
                self.say(f"test link {link.pair_name}: {link.adapter.model} "
                         f"({link.adapter.shaped_rate})")
                self._make_link(link)
            self._make_ssh(state)
            self._wait_sshd()
            self._wait_links()
            self._write_inventory()
        except BaseException:
            self._teardown(state)
            raise
        return state

    def _make_link(self, link: LabLink) -> None:
        a, b = link.host_a, link.host_b
        ad = link.adapter
        self._run(["ip", "-n", a.name, "link", "add", link.phy, "type", "veth", "peer", "name",
                   link.phy, "netns", b.name], f"test link {link.pair_name}")
        for host, side in ((a, "a"), (b, "b")):
            self._ns(host, ["ip", "link", "set", link.phy, "up"], "test link up")
            if ad.max_mtu:
                # The driver's limit: a macvlan cannot exceed its lower device's MTU, so the
                # kernel refuses a larger one with its own "Invalid argument".
                self._ns(host, ["ip", "link", "set", link.phy, "mtu", str(ad.max_mtu)],
                         "fixed MTU")
                self._ns(host, ["ip", "link", "add", link.ifname, "link", link.phy, "type",
                                "macvlan", "mode", "bridge"], "macvlan adapter")
                self._ns(host, ["ip", "link", "set", link.ifname, "up"], "adapter up")
            for dev in {link.phy, link.ifname}:
                # Offloads off, so the qdisc and the tools see real wire-sized frames.
                self._ns(host, ["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"],
                         "offloads off")
            self._ns(host, ["ip", "addr", "add", f"{link.address(side)}/24", "dev", link.ifname],
                     "test address")
            self._shape(host, link, ad.shaped_rate)
            rules = []
            if ad.stall_above:
                # Large pings get through (the path check proves the MTU), large data frames
                # never do: the driver "hangs mid-test", as in the Feb 2003 review. (A rate
                # limit on every large frame let the path check pass or fail by whether the
                # stalled trial before had used up its burst: the same card read "stalled"
                # in one run and "path check failed" in the next.)
                rules.append(f"meta length > {ad.stall_above} ip protocol != icmp drop")
            if ad.loss_per_mille:
                rules.append(f"numgen random mod 1000 < {ad.loss_per_mille} drop")
            if rules:
                self._nft(host, link, rules)

    def _shape(self, host: LabHost, link: LabLink, rate: str) -> None:
        ad = link.adapter
        bps = rate_bps(rate)
        largest = (ad.max_mtu + 14 + WIRE_OVERHEAD_BYTES) if ad.max_mtu else LARGEST_FRAME
        burst = max(int(bps * BURST_SECONDS / 8), BURST_FRAMES * largest)
        # tbf's own "overhead" counts the per-frame wire bytes; a "stab overhead" in front
        # of tbf (as in docs/lab.md) was measured to have no effect here: MTU 1500 gave
        # 955 Mbit/s (1.5 % over theory) with it, 940.8 (-0.07 %) with this.
        self._ns(host, ["tc", "qdisc", "replace", "dev", link.phy, "root", "tbf", "rate",
                        rate, "burst", str(burst), "latency", SHAPING_LATENCY,
                        "overhead", str(WIRE_OVERHEAD_BYTES)],
                 "shaping")

    def shape(self, key: str, ceiling: str | None) -> LabSpec:
        """Cap adapter ``key``'s links at ``ceiling`` (tc syntax), or with None give them
        back their own rate, on the hosts and in state.json (a later ``up`` rebuilds
        them so); returns the lab's spec as it is now."""
        self.preflight()
        with self._locked():
            state = self.read_state()
            if state is None or not self._healthy(state):
                raise LabError(f"no lab is up in {self.dir} (nicbench lab up first)")
            ceilings = {k: v for k, v in self.spec.ceilings.items() if k != key}
            if key not in self.spec.adapters:
                raise LabError(f"no adapter {key!r} in this lab (it has "
                               f"{', '.join(self.spec.adapters)})")
            if ceiling is not None:
                ceilings[key] = ceiling
            spec = replace(self.spec, ceilings=ceilings)
            for link in spec.links():
                if link.adapter.key == key:
                    self.reshape(link)
            self.spec = spec
            state.spec = spec.to_json()
            self._save(state)
            return spec

    def reshape(self, link: LabLink, rate: str | None = None) -> None:
        """Shape ``link`` to ``rate`` (tc syntax) both ways, or back to its adapter's own
        rate: a test that makes a link's rate change during a run."""
        for host in (link.host_a, link.host_b):
            self._shape(host, link, rate or link.adapter.shaped_rate)

    @contextmanager
    def shaped(self, link: LabLink, rate: str) -> Iterator[None]:
        """``link`` shaped to ``rate`` while the block runs, then back to its own rate,
        also when the block fails."""
        self.reshape(link, rate)
        try:
            yield
        finally:
            self.reshape(link)

    def _nft(self, host: LabHost, link: LabLink, rules: list[str]) -> None:
        # On ingress, where packets are the frames that crossed the wire. On the output
        # hook TCP's packets are still GSO super-packets (Linux always uses software GSO
        # for TCP), so a length rule there dropped 64 KB skbs and stalled MTU 1500 too.
        table = f"nbfault_{link.ifname}"
        script = (f"table netdev {table} {{\n chain in {{\n"
                  f"  type filter hook ingress device \"{link.phy}\" priority 0; "
                  f"policy accept;\n"
                  + "".join(f"  {r}\n" for r in rules) + " }\n}\n")
        path = self.host_dir(host) / f"{table}.nft"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(script)
        self._ns(host, ["nft", "-f", str(path)], "fault rule")

    def _make_ssh(self, state: LabState) -> None:
        if not self.client_key.exists():
            self._run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "nicbench-lab",
                       "-f", str(self.client_key)], "client key")
        (self.dir / "authorized_keys").write_text(
            (self.dir / "id_ed25519.pub").read_text())
        os.chmod(self.dir / "authorized_keys", 0o600)
        known = []
        Path("/run/sshd").mkdir(exist_ok=True)
        for host in self.spec.hosts():
            hdir = self.host_dir(host)
            hdir.mkdir(parents=True, exist_ok=True)
            hkey = hdir / "ssh_host_ed25519_key"
            if not hkey.exists():
                self._run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", host.name,
                           "-f", str(hkey)], f"host key of {host.name}")
            pub = (hdir / "ssh_host_ed25519_key.pub").read_text().split()
            known.append(f"{host.address} {pub[0]} {pub[1]}")
            cfg = hdir / "sshd_config"
            pidfile = self.sshd_pidfile(host)
            cfg.write_text("\n".join([
                f"ListenAddress {host.address}", "Port 22",
                f"HostKey {hkey}", f"PidFile {pidfile}",
                f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
                "StrictModes no", "PermitRootLogin prohibit-password",
                "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
                "PrintMotd no", "MaxSessions 100", "MaxStartups 100:30:200",
                # A controller that vanished (kill -9, a pulled cable) never closes its
                # connection: drop such clients after 3 unanswered probes 5 s apart, so
                # their session processes do not live on.
                "ClientAliveInterval 5", "ClientAliveCountMax 3",
                # bash sources ~/.bashrc for every sshd command when SHLVL starts at 0; a
                # heavy .bashrc (pyenv init: ~85 ms) would then cost that on every call.
                "SetEnv SHLVL=1",
                "Subsystem sftp internal-sftp", ""]))
            state.sshd_pidfiles.append(str(pidfile))
            self._save(state)
            self._ns(host, ["/usr/sbin/sshd", "-f", str(cfg), "-E", str(hdir / "sshd.log")],
                     f"sshd on {host.name}")
        self.known_hosts.write_text("\n".join(known) + "\n")

    def _wait_sshd(self, timeout_s: float = 10.0) -> None:
        for host in self.spec.hosts():
            if not poll_until(partial(_listens, host.address, 22), timeout_s, 0.05):
                raise LabError(f"sshd on {host.name} ({host.address}:22) did not start; "
                               f"see {self.host_dir(host) / 'sshd.log'}")

    def _wait_links(self, timeout_s: float = 10.0) -> None:
        """A fresh macvlan can drop the first packets for a moment: the lab is up only
        when every test link carries a ping both ways."""
        for link in self.spec.links():
            for host, peer in ((link.host_a, link.address("b")), (link.host_b, link.address("a"))):
                argv = ["ip", "netns", "exec", host.name, "ping", "-n", "-q", "-c", "1", "-W",
                        "1", "-I", link.ifname, peer]
                if not poll_until(partial(self._succeeds, argv, 5),
                                  timeout_s, 0.1):
                    raise LabError(f"test link {link.pair_name}: {host.name} cannot reach "
                                   f"{peer} after {timeout_s:g} s")

    def _save(self, state: LabState) -> None:
        write_atomic(self.state_file, json.dumps(asdict(state), indent=1))

    def _healthy(self, state: LabState) -> bool:
        if not set(state.namespaces) <= self.existing_namespaces():
            return False
        return all(_pid_alive(p) for p in state.sshd_pidfiles) and self.client_key.exists()

    # -- down ---------------------------------------------------------------------
    def down(self) -> list[str]:
        """Remove the lab; returns what was removed."""
        self.preflight()
        with self._locked():
            state = self.read_state()
            if state is None:
                self._refuse_a_lab_owned_elsewhere()
            return self._teardown(state)

    def _teardown(self, state: LabState | None) -> list[str]:
        removed: list[str] = []
        spec_hosts = self.spec.hosts()
        namespaces = set(state.namespaces if state else [])
        # Names the spec would make count as ours too (a crash before state was written).
        namespaces |= {h.name for h in spec_hosts}
        root_links = set(state.root_links if state else []) | {h.mgmt_if for h in spec_hosts}
        pidfiles = set(state.sshd_pidfiles if state else []) | {
            str(self.sshd_pidfile(h)) for h in spec_hosts}
        listeners = []
        for pidfile in sorted(pidfiles):
            pid = _pid_alive(pidfile)
            if pid:
                try:
                    os.kill(pid, 15)
                    removed.append(f"sshd {pid}")
                    listeners.append(pid)
                except ProcessLookupError:
                    pass
        # Let the listeners go before what is left in the namespaces is counted (else the
        # first namespace's one, still exiting, reads as "1 processes" left behind).
        poll_until(lambda: all(_zombie(str(pid)) for pid in listeners), 2.0, 0.02)
        present = self.existing_namespaces()
        for ns in sorted(namespaces & present):
            # Deleting a namespace does not end what runs in it: a connection's sshd
            # session, a tool left running would live on, unreachable, forever.
            ended = self._end_processes(ns)
            if ended:
                removed.append(f"{ended} processes in {ns}")
            self.local.run(["ip", "netns", "del", ns], warn=True)
            removed.append(f"namespace {ns}")
        for link in sorted(root_links):
            res = self.local.run(["ip", "link", "del", link], warn=True)
            if res.ok:
                removed.append(f"link {link}")
        for path in [self.state_file, self.known_hosts, self.inventory_file,
                     self.dir / "authorized_keys", self.client_key,
                     self.dir / "id_ed25519.pub"]:
            path.unlink(missing_ok=True)
        for h in spec_hosts:
            shutil.rmtree(self.host_dir(h), ignore_errors=True)
        try:
            if Path(self.owner_file.read_text().strip()) == self.dir.resolve():
                self.owner_file.unlink()
        except OSError:
            pass
        with contextlib.suppress(OSError):  # not empty: something else lives there, leave it
            self.dir.rmdir()
        return removed

    def _end_processes(self, ns: str, grace_s: float = 2.0) -> int:
        """TERM every process in namespace ``ns``, KILL what is left after ``grace_s``;
        returns how many there were."""
        def pids() -> list[int]:
            res = self.local.run(["ip", "netns", "pids", ns], warn=True, timeout=10)
            return [int(p) for p in res.stdout.split() if p.isdigit() and not _zombie(p)]

        first = pids()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in pids():
                with suppress(ProcessLookupError):
                    os.kill(pid, sig)
            if poll_until(lambda: not pids(), grace_s, 0.05):
                break
        return len(first)

    # -- status -------------------------------------------------------------------
    def status(self) -> list[dict]:
        present = self.existing_namespaces()
        rows = []
        for host in self.spec.hosts():
            pid = _pid_alive(str(self.sshd_pidfile(host)))
            rows.append({"host": host.name, "namespace": host.name in present,
                         "address": host.address, "sshd_pid": pid})
        return rows

    # -- inventory ----------------------------------------------------------------
    def _write_inventory(self) -> None:
        self.inventory_file.write_text(render_inventory(self.spec, key_dir=str(self.dir)))


def _zombie(pid: str) -> bool:
    """An ended process PID 1 has not reaped yet (it may take seconds): nothing to end."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True      # gone already


def _listens(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=1):
            return True
    except OSError:
        return False


def _pid_alive(pidfile: str) -> int | None:
    try:
        pid = int(Path(pidfile).read_text().split()[0])
        os.kill(pid, 0)
    except (FileNotFoundError, ValueError, IndexError, ProcessLookupError, PermissionError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if b"sshd" in cmdline else None


def _q(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML double-quoted scalar


def render_inventory(spec: LabSpec, key_dir: str) -> str:
    """The inventory that describes a lab (the repository's inventory.yaml is this text
    for the default lab, with key_dir '.lab')."""
    lines = [
        "# nicbench inventory: hosts, adapters and the pairs that test them.",
        "# This one describes the local lab made by `nicbench lab up` (see README.md).",
        "# Every adapter below is EMULATED: a shaped veth link, not hardware.",
        "format_version: 1", "", "hosts:"]
    for host in spec.hosts():
        lines += [f"  - name: {host.name}", f"    address: {host.address}", "    os: linux",
                  "    ssh:", "      user: root", f"      key_file: {key_dir}/id_ed25519",
                  f"      known_hosts: {key_dir}/known_hosts"]
    lines += ["", "adapters:"]
    for key in spec.adapters:
        a = spec.adapter(key)
        lines += [f"  - id: lab-{a.key}", f"    vendor: {_q(a.vendor)}", f"    model: {_q(a.model)}",
                  f"    chipset: {_q(a.chipset)}", f"    bus: {_q(a.bus)}",
                  f"    driver: {{name: {a.driver}, version: {a.driver_version}}}",
                  f"    notes: {_q(a.notes)}", "    emulated: true",
                  f"    link_rate: {a.rate}"]
    lines += ["", "pairs:"]
    for link in spec.links():
        lines += [f"  - name: {link.pair_name}", f"    adapter: lab-{link.adapter.key}",
                  f"    a: {{host: {link.host_a.name}, interface: {link.ifname}, "
                  f"address: {link.address('a')}}}",
                  f"    b: {{host: {link.host_b.name}, interface: {link.ifname}, "
                  f"address: {link.address('b')}}}",
                  "    receiver: a"]
    return "\n".join(lines) + "\n"
