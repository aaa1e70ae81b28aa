# Start a tool's server and wait until it listens, in one call.
# $1: the directory to make (journaled by the controller before this runs), $2: port as
# four upper-case hex digits (as /proc/net writes it), $3: tcp|udp, $4: polls (a look at
# /proc/net and a 1 ms sleep: about 2 ms each) to wait for a listener; "$@" after: the
# command.
# Starts it as background.sh does (start_bg), then waits until something listens on the port, and prints:
# "<pid> <dir>", "listening yes|no", "ended yes|no", the first line of /proc/stat (the
# host's CPU time as the transfer is about to start). When something held the port
# before the server started, "listening" proves nothing: then the server is given up to
# a second to fail to bind and end ("ended yes"), so a client never measures whatever
# else listens there.
d=$1; port=$2; proto=$3; polls=$4
shift 4
taken=no
listening "$port" "$proto" && taken=yes
start_bg "$d" "$@"
i=0
up=no
while [ "$i" -lt "$polls" ]; do
    if listening "$port" "$proto"; then
        up=yes
        break
    fi
    [ -e "$d/rc" ] && break
    i=$((i + 1))
    sleep 0.001
done
if [ "$taken" = yes ]; then
    i=0
    while [ ! -e "$d/rc" ] && [ "$i" -lt 200 ]; do i=$((i + 1)); sleep 0.005; done
fi
echo "listening $up"
if [ -e "$d/rc" ]; then echo "ended yes"; else echo "ended no"; fi
read -r stat </proc/stat
echo "$stat"
