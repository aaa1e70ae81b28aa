# starttime PID: set ST to the process's start time in clock ticks since boot
# (/proc/PID/stat field 22; empty where there is none). With the pid it names one process
# for good. No command substitution and no external program: each would fork.
starttime() {
    ST=
    read -r l <"/proc/$1/stat" 2>/dev/null || return 0
    r=${l##*) }
    # shellcheck disable=SC2086  # split the stat fields on purpose
    set -- $r
    ST=${20}
}
