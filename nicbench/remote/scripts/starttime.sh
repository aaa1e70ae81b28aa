# starttime PID: the process's start time in clock ticks since boot (/proc/PID/stat field
# 22), empty where there is no /proc. With the pid it names one process for good.
starttime() {
    l=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    r=${l##*) }
    # shellcheck disable=SC2086  # split the stat fields on purpose
    set -- $r
    echo "${20}"
}
