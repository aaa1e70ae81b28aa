# $1: signal name, $2: process group (= the leader's pid). dash's kill takes
# "-SIG -PGID" but not "--"; fall back to the single pid.
kill -"$1" -"$2" 2>/dev/null || kill -"$1" "$2" 2>/dev/null
true
