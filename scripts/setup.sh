#!/usr/bin/env bash
# Install what nicbench needs on Debian 12, idempotently; run as root from anywhere.
#
#   1. the Debian packages of the tools and the lab (skipped when all are installed)
#   2. a virtualenv in .venv at the top of the clone (made once)
#   3. nicbench itself, editable, with its test extras (skipped when pyproject.toml is
#      unchanged since the last successful install)
#
# Later steps of the README (lab up, check, run, report) all use .venv/bin/nicbench.
set -euo pipefail

PACKAGES=(iproute2 openssh-server openssh-client iperf iperf3 netpipe-tcp sockperf ethtool sysstat
          net-tools nftables iputils-ping procps python3-venv chromium-driver shellcheck
          poppler-utils fonts-liberation postgresql)

top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$top"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# -- 1. Debian packages -------------------------------------------------------------------
missing=()
for pkg in "${PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || die "missing packages ${missing[*]}: run this script as root"
    command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get (Debian 12 expected)"
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive   # iperf3 asks whether to start a daemon: no
    apt-get update
    apt-get install -y "${PACKAGES[@]}" </dev/null
else
    say "Debian packages already installed"
fi

# -- 2. virtualenv ------------------------------------------------------------------------
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    command -v python3 >/dev/null || die "python3 not found (apt-get install python3)"
    python3 -c 'import sys; assert sys.version_info >= (3, 11)' \
        || die "nicbench needs Python 3.11 or newer; python3 is $(python3 -V 2>&1)"
    say "creating .venv with $(python3 -V 2>&1)"
    rm -rf .venv
    python3 -m venv .venv
fi

# -- 3. nicbench --------------------------------------------------------------------------
stamp=.venv/.nicbench-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $top"
if [ -x .venv/bin/nicbench ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    say "nicbench already installed in .venv"
else
    say "installing nicbench (editable, with test extras) into .venv"
    .venv/bin/python -m pip install --disable-pip-version-check -q -e '.[test]'
    printf '%s\n' "$want" > "$stamp"
fi
say "ready: .venv/bin/nicbench $(.venv/bin/nicbench --version | cut -d' ' -f2)"
