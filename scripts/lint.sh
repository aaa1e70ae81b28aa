#!/usr/bin/env bash
# Static checks, run by .ci/run before the tests: ruff (defects, not layout), mypy (the
# package's types and seams), shellcheck (every shell script nicbench ships or sends to a
# host, as sent). Needs the test extras (scripts/setup.sh) and shellcheck (apt).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
py=.venv/bin/python
fail=0

echo "lint: ruff"
.venv/bin/ruff check --quiet nicbench tests bench || fail=1

echo "lint: mypy"
.venv/bin/mypy --no-error-summary || fail=1

echo "lint: shellcheck"
sent=$(mktemp -d) || exit 1
trap 'rm -rf "$sent"' EXIT
"$py" -m nicbench.remote.shell "$sent" || fail=1
shellcheck -s sh "$sent"/*.sh || fail=1
shellcheck scripts/*.sh .ci/run || fail=1

if [ "$fail" -ne 0 ]; then
    echo "lint: FAILED" >&2
    exit 1
fi
echo "lint: clean"
