# Start a tool's server and wait until it listens, in one call.
# $1: the directory to make (journaled by the controller before this runs), $2: port,
# $3: tcp|udp, $4: polls to wait for a listener (a poll is one `listening`, about 2 ms, with
# no sleep: a tool listens within a few ms, and a sleep is one more fork); "$@" after: the
# command.
# Starts it as background.sh does (start_bg), then waits until something listens on the
# port, and prints:
# "<pid> <dir>", "listening yes|no", "ended yes|no", the first line of /proc/stat (the
# host's CPU time as the transfer is about to start), then the network interfaces'
# counters (links.sh).
# There is no look at the port before the start (one exec of ss, a tenth of a trial's
# harness time): the first look after it is done before the tool can have bound (the
# wrapper's two execs, the tool's own exec and start: 4 ms and more, against about 2 ms
# for ss), so a listener seen then was there already, unless ss -p names the server's
# own process (a tool started under load can beat that look). Otherwise "listening"
# proves nothing, and the server is given up to a second to fail to bind and end. If it does, what held
# the port (most often the previous trial's server, or a child it left, letting go) is
# given a second to let go and the server is started again, once; if not, or if it is
# still held, "ended yes", so a client never measures whatever else listens there.
d=$1; port=$2; proto=$3; polls=$4
shift 4
mkdir -m 700 -- "$d" || exit 97
# await_listener: up=yes once something listens (held=yes: at the first look), up=no
# if the server ended or the polls ran out first.
await_listener() {
    up=no; held=no; i=0
    while [ "$i" -lt "$polls" ]; do
        if listening "$port" "$proto"; then
            up=yes
            [ "$i" -eq 0 ] && held=yes
            return
        fi
        [ -s "$d/rc" ] && return
        i=$((i + 1))
    done
}
start_in "$d" "$@"
await_listener
# A tool started under load can beat the first look: then ss -p names its own process.
if [ "$held" = yes ] && read -r cpid <"$d/cpid" 2>/dev/null \
        && held_by "$port" "$proto" "$cpid"; then
    held=no
fi
if [ "$held" = yes ]; then
    i=0
    while [ ! -s "$d/rc" ] && [ "$i" -lt 200 ]; do i=$((i + 1)); sleep 0.005; done
    if [ -s "$d/rc" ]; then
        i=0
        while [ "$i" -lt 100 ] && listening "$port" "$proto"; do i=$((i + 1)); sleep 0.01; done
        if ! listening "$port" "$proto"; then
            rm -f -- "$d/rc" "$d/cpu"
            start_in "$d" "$@"
            await_listener
        fi
    fi
fi
echo "$PID $d"
echo "listening $up"
if [ -s "$d/rc" ]; then echo "ended yes"; else echo "ended no"; fi
read -r stat </proc/stat
echo "$stat"
links @@nicbench-link0@@
