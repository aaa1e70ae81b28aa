# End a tool's server after its client, collect its output and remove its directory, in
# one call. $1: directory, $2: exits|report|settle, $3: report regex (POSIX ERE),
# $4: report lines wanted, $5: polls of the wait, $6: signal to stop it with, $7: seconds
# per poll. $PG is the server's process group.
# exits: wait for it to end; report: wait until its output holds N lines matching RE;
# settle: wait the polls out. Then, if it still runs, signal it (and KILL it after a
# second). A tool that has ended has closed its sockets; should anything still hold the
# port (a child it left), the next trial's server_start.sh waits for it. Prints the first
# line of /proc/stat (the host's CPU time as the transfer has just ended) after a marker, then
# the output, error output and exit status (empty if it was stopped) in sections.
d=$1; mode=$2; re=$3; n=$4; polls=$5; sig=$6; poll=$7
read -r stat </proc/stat
echo "@@nicbench-cpu1@@ $stat"
k=0
while [ "$k" -lt "$polls" ]; do
    [ -e "$d/rc" ] && break
    if [ "$mode" = report ]; then
        c=$(grep -cE -- "$re" "$d/out" 2>/dev/null)
        [ "${c:-0}" -ge "$n" ] && break
    fi
    k=$((k + 1))
    [ $((k % 10)) -eq 0 ] && { alive || break; }
    sleep "$poll"
done
if [ ! -e "$d/rc" ]; then
    # Signal the tool itself: its wrapper then writes "rc", which is cheap to wait for
    # (asking whether the group is alive reads every /proc/*/stat). The group is killed
    # only if that does not end it within a second.
    read -r cpid <"$d/cpid" 2>/dev/null
    [ -n "$cpid" ] && kill -"$sig" "$cpid" 2>/dev/null
    # Most tools are gone within a few ms of the signal: look often at first.
    k=0
    while [ ! -e "$d/rc" ] && [ "$k" -lt 10 ]; do k=$((k + 1)); sleep 0.001; done
    while [ ! -e "$d/rc" ] && [ "$k" -lt 110 ]; do k=$((k + 1)); sleep 0.01; done
    [ -e "$d/rc" ] || kill -KILL -"$PG" 2>/dev/null || kill -KILL "$PG" 2>/dev/null
fi
printf '@@nicbench-out@@\n'
collect_dir "$d"
rm -rf -- "$d"
true
