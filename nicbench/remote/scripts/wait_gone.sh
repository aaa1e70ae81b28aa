# Return once the group is gone, polling every $1 s (the caller bounds the wait).
while alive; do sleep "$1"; done
