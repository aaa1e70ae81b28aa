# start_bg DIR COMMAND...: make DIR (named by the controller, which journals it before
# this runs) and start COMMAND in the background in a new session (so the whole group can
# be signalled), its output in files of DIR. The command runs as a child of a small
# wrapper that keeps its pid in "cpid" and, when it ends (by itself or by a signal sent
# to that pid), writes its CPU time to "cpu" (the wrapper's cutime + cstime, /proc/$$/stat
# fields 16 and 17, in clock ticks: the command is its only child) and then its exit
# status to "rc" (readers test it with -s, not -e: the shell creates the file before it
# writes the status, and a wrapper preempted in between, on a loaded host, left an empty
# "rc" read as "stopped, no status"); "<pid> <start time>" of the group's leader
# goes to "pid", so a later `reap` can tell it from another process that reused the pid.
# Sets PID; prints "<pid> <dir>". Exits 97 if DIR cannot be made.
start_bg() {
    mkdir -m 700 -- "$1" || exit 97
    start_in "$@"
    echo "$PID $d"
}
# start_in DIR COMMAND...: as start_bg, in a DIR this script has made; prints nothing.
start_in() {
    d=$1
    shift
    # shellcheck disable=SC2016  # expanded by the inner sh, not here
    setsid sh -c '"$@" >"$0/out" 2>"$0/err" </dev/null & echo "$!" >"$0/cpid"; wait "$!"
rc=$?; read -r l <"/proc/$$/stat"; set -- ${l##*) }; echo "$((${14} + ${15}))" >"$0/cpu"
echo "$rc" >"$0/rc"' "$d" "$@" >/dev/null 2>&1 </dev/null &
    PID=$!
    # setsid takes effect in the child some time after the fork: until then the group
    # PID has no member, and "alive" would call a command that has not begun yet ended
    # (seen once on a loaded host). Wait for it to lead its group, or to be gone: at most
    # 200 polls of 10 ms; where there is no /proc, not at all.
    n=0
    while [ "$n" -lt 200 ] && read -r l 2>/dev/null <"/proc/$PID/stat"; do
        # shellcheck disable=SC2086  # split the stat fields on purpose
        set -- ${l##*) }
        [ "$3" = "$PID" ] && break
        n=$((n + 1))
        sleep 0.01
    done
    starttime "$PID"
    echo "$PID $ST" >"$d/pid"
}
