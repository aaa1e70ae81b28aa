# "$@": paths nicbench left on this host: a background command's directory (holding
# "pid"), a pid file of pid_tracked.sh (named *.pid), or a file a tool wrote. Stop the
# process group a directory or pid file names, if that process still runs (same pid and
# start time), then remove the path. Prints one line per path: "stopped PATH", "gone PATH"
# (nothing ran any more) or "none PATH" (no such path).
for p in "$@"; do
    f=
    if [ -d "$p" ]; then
        f="$p/pid"
    else
        case $p in *.pid) f=$p ;; esac
    fi
    if [ ! -e "$p" ]; then
        echo "none $p"
        continue
    fi
    what=gone
    if [ -n "$f" ] && [ -f "$f" ]; then
        read -r pid st <"$f" || true
        case $pid in
            ''|*[!0-9]*) ;;
            *)
                starttime "$pid"
                if [ -n "$pid" ] && [ "$ST" = "$st" ]; then
                    kill -KILL -"$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
                    what=stopped
                fi ;;
        esac
    fi
    rm -rf -- "$p"
    echo "$what $p"
done
