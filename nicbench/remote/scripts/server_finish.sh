# End a tool's server, collect its output and remove its directory, in one call.
# $1: directory, $2: exits|report|settle, $3: report regex (POSIX ERE), $4: report lines
# wanted, $5: polls of the wait, $6: signal to stop it with, $7: seconds per poll,
# $8: seconds to sleep first ("0": the client has ended already, see below), $9: polls in
# all ($5 of them at $7 s, the rest every 0.05 s). $PG is the server's process group.
# exits: wait for it to end; report: wait until its output holds N lines matching RE;
# settle: wait the polls out. Then, if it still runs, signal it (and KILL it after a
# second). A tool that has ended has closed its sockets; should anything still hold the
# port (a child it left), the next trial's server_start.sh waits for it. Prints the first
# line of /proc/stat (the host's CPU time as the transfer has just ended) after a marker
# and the network interfaces' counters (links.sh),
# then the output, error output, exit status (empty if it was stopped) and the server's
# CPU time in sections (collect_dir). Sent while the client runs, it first prints the
# line as its sleep starts, after a marker of its own: the receiver's CPU is then read
# over the transfer, not from the server's start.
#
# Sent while the client runs ($8 > 0), it sleeps through the transfer (one sleep: no
# polling that would load the receiver it measures), then waits for the server's end as
# above, for up to $9 polls, and stops
# the server only once that has come or it is woken: the controller sends SIGUSR1 (to the
# pid in "finisher") when the client ended and nothing came within the wait.
d=$1; mode=$2; re=$3; n=$4; polls=$5; sig=$6; poll=$7; nap=$8; hold=$9
ready() {
    [ -s "$d/rc" ] && return 0
    [ "$mode" = report ] || return 1
    c=$(grep -cE -- "$re" "$d/out" 2>/dev/null)
    [ "${c:-0}" -ge "$n" ]
}
# tool_ended PID: has the tool ended, its wrapper still to write "rc"? Its CPU time is
# written (the wrapper's line before "rc"), or it is a zombie (not reaped yet) or gone.
tool_ended() {
    [ -e "$d/cpu" ] && return 0
    [ -n "$1" ] && [ -d /proc/self ] || return 1
    read -r l <"/proc/$1/stat" 2>/dev/null || return 0
    r=${l##*) }
    [ "${r%% *}" = Z ]
}
cpu_now() {
    read -r stat </proc/stat
    echo "@@nicbench-cpu1@@ $stat"
    links @@nicbench-link1@@
}
woke=
if [ "$nap" = 0 ]; then
    cpu_now                    # the client has ended: the transfer too
else
    trap 'woke=1' USR1
    echo "$$" >"$d/finisher"
    read -r stat </proc/stat
    echo "@@nicbench-cpu0@@ $stat"
    # A trapped signal ends `wait` at once; the sleep is then not needed.
    sleep "$nap" &
    wait "$!"
    kill "$!" 2>/dev/null
fi
k=0
while [ -z "$woke" ] && [ "$k" -lt "$hold" ] && ! ready; do
    k=$((k + 1))
    [ $((k % 10)) -eq 0 ] && { alive || break; }
    if [ "$k" -le "$polls" ]; then sleep "$poll"; else sleep 0.05; fi
done
if [ "$nap" != 0 ]; then
    # From here a late wake does nothing, and its pid file is gone before this shell is.
    trap '' USR1
    rm -f -- "$d/finisher"
    cpu_now
fi
if [ ! -s "$d/rc" ]; then
    # Signal the tool itself: its wrapper then writes "rc", which is cheap to wait for
    # (asking whether the group is alive reads every /proc/*/stat). The group is killed
    # only if that does not end it within a second.
    read -r cpid <"$d/cpid" 2>/dev/null
    [ -n "$cpid" ] && kill -"$sig" "$cpid" 2>/dev/null
    # Most tools are gone within a few ms of the signal: look often at first.
    k=0
    while [ ! -s "$d/rc" ] && [ "$k" -lt 10 ]; do k=$((k + 1)); sleep 0.001; done
    while [ ! -s "$d/rc" ] && [ "$k" -lt 110 ]; do k=$((k + 1)); sleep 0.01; done
    # Ended, but its wrapper, not yet run again on a loaded host, has still to write "rc":
    # killing the group now would kill the wrapper and lose the exit status. It has
    # nothing left but two lines: wait for them (bounded: 500 polls, 5 s and more).
    if [ ! -s "$d/rc" ] && tool_ended "$cpid"; then
        k=0
        while [ ! -s "$d/rc" ] && [ "$k" -lt 500 ]; do k=$((k + 1)); sleep 0.01; done
    fi
    [ -s "$d/rc" ] || kill -KILL -"$PG" 2>/dev/null || kill -KILL "$PG" 2>/dev/null
fi
printf '@@nicbench-out@@\n'
collect_dir "$d"
# The tool and its wrapper have ended: nothing writes here any more. Removed in the
# background, which a reply need not wait for (a fork, where rm's exec and unlinks cost
# a millisecond more).
rm -rf -- "$d" >/dev/null 2>&1 &
