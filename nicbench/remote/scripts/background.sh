# $1: the directory to make for the command (named by the controller, which journals it
# before this runs); "$@" after it: the command. Starts it in the background in a new
# session (so the whole group can be signalled), output in files of that directory, its
# exit status written to "rc" when it ends by itself, and "<pid> <start time>" in "pid",
# so a later `reap` can tell the process from another that reused its pid.
# Prints "<pid> <dir>".
d=$1
shift
mkdir -m 700 -- "$d" || exit 97
# shellcheck disable=SC2016  # expanded by the inner sh, not here
# The command runs as a child of a small wrapper that keeps its pid in "cpid" and writes
# its exit status to "rc" when it ends, by itself or by a signal sent to that pid.
setsid sh -c '"$@" >"$0/out" 2>"$0/err" </dev/null & echo "$!" >"$0/cpid"; wait "$!"
echo "$?" >"$0/rc"' "$d" "$@" >/dev/null 2>&1 </dev/null &
pid=$!
starttime "$pid"
echo "$pid $ST" >"$d/pid"
echo "$pid $d"
