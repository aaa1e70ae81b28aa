# Start "$@" in the background in a new session (so the whole group can be signalled),
# with its output in files of a private temp directory and its exit status written to
# "rc" when it ends by itself. Prints "<pid> <dir>".
d=$(mktemp -d "${TMPDIR:-/tmp}/nicbench.XXXXXX") || exit 97
# shellcheck disable=SC2016  # expanded by the inner sh, not here
setsid sh -c '"$@" >"$0/out" 2>"$0/err" </dev/null; echo "$?" >"$0/rc"' "$d" "$@" \
    >/dev/null 2>&1 </dev/null &
echo "$! $d"
