# alive: is any process of group $PG still there? A group is alive while any of its
# processes is not a zombie. Orphans are reaped by PID 1, sometimes seconds later, and
# "kill -0" succeeds on a zombie, so it would report a finished tool as running. /proc
# where there is one, kill -0 elsewhere. Prepended to the scripts that use it, with PG set.
alive() {
    if [ -d /proc/self ]; then
        for f in /proc/[0-9]*/stat; do
            read -r l < "$f" 2>/dev/null || continue
            r=${l##*) }
            # shellcheck disable=SC2086  # split the stat fields on purpose
            set -- $r
            [ "$1" != Z ] && [ "$3" = "$PG" ] && return 0
        done
        return 1
    fi
    kill -0 -"$PG" 2>/dev/null
}
