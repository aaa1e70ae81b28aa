# Wake a server_finish.sh that waits while its client runs ($1: the server's directory):
# SIGUSR1 to the pid it keeps in "finisher". One that has not written that file yet (it
# was sent a moment ago, but a loaded host may take a while to start it) is given five
# seconds to; one that has removed it is done waiting.
d=$1
i=0
p=
while [ "$i" -lt 500 ] && [ -d "$d" ]; do
    read -r p <"$d/finisher" 2>/dev/null && [ -n "$p" ] && break
    i=$((i + 1))
    sleep 0.01
done
[ -n "$p" ] && kill -USR1 "$p" 2>/dev/null
true
