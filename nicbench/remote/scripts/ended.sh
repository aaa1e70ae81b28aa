# $1: a background command's directory, $2: polls of 10 ms. "rc" appears when the
# command ends (exits, or is killed alone). Testing for it is one short call; asking
# whether the group is alive reads every /proc/*/stat (20-30 ms on a busy machine).
i=0
while [ ! -s "$1/rc" ]; do
    i=$((i + 1))
    [ "$i" -gt "$2" ] && exit 1
    sleep 0.01
done
