# Run a tool's client between two readings of the host's CPU time, in one call.
# $1: a file to hold "<pid> <start time>" of this command while it runs (journaled by the
# controller before this runs; removed when the client ends; "" for none), $2: a file the client
# writes its figures to ("" for none); "$@" after: the command. The CPU readings go to
# stderr on marked lines: the host's (/proc/stat) before and after the client, and the
# client's own CPU time once it has ended (this shell's cutime + cstime, /proc/$$/stat
# fields 16 and 17, in clock ticks: the client is its only child that runs for long;
# read with builtins, no process more), each reading with the counters of every network
# interface (links.sh). The figures file, if any, follows the client's own output on
# stdout after a marker line (one byte more than nicbench keeps of it at most), and is
# removed. Exits with the client's status.
pf=$1
of=$2
shift 2
starttime "$$"
if [ -n "$pf" ]; then echo "$$ $ST" >"$pf" || exit 97; fi
read -r stat </proc/stat
links @@nicbench-link0@@ >&2
echo "@@nicbench-cpu0@@ $stat" >&2
"$@"
rc=$?
read -r stat </proc/stat
links @@nicbench-link1@@ >&2
read -r self <"/proc/$$/stat"
echo "@@nicbench-cpu1@@ $stat" >&2
r=${self##*) }
# shellcheck disable=SC2086  # split the stat fields on purpose ("$@" is done with)
set -- $r
echo "@@nicbench-tool@@ $((${14} + ${15}))" >&2
if [ -n "$of" ]; then
    printf '\n@@nicbench-outfile@@\n'
    head -c @MAX_OUTPUT_BYTES_AND_ONE@ "$of" 2>/dev/null
    rm -f -- "$of"
fi
# In the background: the reply need not wait for rm's exec.
if [ -n "$pf" ]; then rm -f -- "$pf" >/dev/null 2>&1 & fi
exit "$rc"
