# $1: a file a tool wrote; print it, then remove it (no error if it is not there).
cat "$1" 2>/dev/null
rm -f "$1"
