# Start a tool's server and wait until it listens, in one call.
# $1: the directory to make (journaled by the controller before this runs), $2: port,
# $3: tcp|udp, $4: polls to wait for a listener (a poll is one `listening`, about 2 ms, with
# no sleep: a tool listens within a few ms, and a sleep is one more fork); "$@" after: the
# command.
# Starts it as background.sh does (start_bg), then waits until something listens on the
# port, and prints:
# "<pid> <dir>", "listening yes|no", "ended yes|no", the first line of /proc/stat (the
# host's CPU time as the transfer is about to start). A port held when this starts is
# given a second to come free. When something still holds it, "listening" proves
# nothing: then the server is given up to a second to fail to bind and end ("ended
# yes"), so a client never measures whatever else listens there.
d=$1; port=$2; proto=$3; polls=$4
shift 4
# The directory is made while the port is looked at (a fork and an exec each, on a
# machine with more than one core).
mkdir -m 700 -- "$d" &
made=$!
taken=no
if listening "$port" "$proto"; then
    # Most often the previous trial's server, or a child it left, letting go: give it a
    # second.
    i=0
    while [ "$i" -lt 100 ] && listening "$port" "$proto"; do i=$((i + 1)); sleep 0.01; done
    listening "$port" "$proto" && taken=yes
fi
wait "$made" || exit 97
start_in "$d" "$@"
i=0
up=no
while [ "$i" -lt "$polls" ]; do
    if listening "$port" "$proto"; then
        up=yes
        break
    fi
    [ -e "$d/rc" ] && break
    i=$((i + 1))
done
if [ "$taken" = yes ]; then
    i=0
    while [ ! -e "$d/rc" ] && [ "$i" -lt 200 ]; do i=$((i + 1)); sleep 0.005; done
fi
echo "listening $up"
if [ -e "$d/rc" ]; then echo "ended yes"; else echo "ended no"; fi
read -r stat </proc/stat
echo "$stat"
