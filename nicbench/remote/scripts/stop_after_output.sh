# Poll the output until it holds N lines matching RE, then signal the group and wait
# until it is gone. Exit 0: seen and stopped; 4: seen, but the group outlived the
# signal; 3: the command ended without it; 1: not seen within the polls. "alive" (the
# group) is asked only every 10th poll: it reads every /proc/*/stat.
# $1 RE (POSIX ERE), $2 directory, $3 N, $4 polls, $5 signal, $6 seconds per poll.
RE="$1"; D="$2"; N="$3"; I="$4"; SIG="$5"; POLL="$6"; k=0
while :; do
    c=$(grep -cE -- "$RE" "$D/out" 2>/dev/null)
    [ "${c:-0}" -ge "$N" ] && break
    [ -s "$D/rc" ] && exit 3
    k=$((k + 1))
    [ $((k % 10)) -eq 0 ] && { alive || exit 3; }
    [ "$k" -ge "$I" ] && exit 1
    sleep "$POLL"
done
kill -"$SIG" -"$PG" 2>/dev/null || kill -"$SIG" "$PG" 2>/dev/null
k=0
while alive; do
    k=$((k + 1))
    [ "$k" -ge 100 ] && exit 4
    sleep 0.01
done
