# $1: a file a tool wrote; print it (one byte more than nicbench keeps of it at most),
# then remove it (no error if it is not there).
head -c @MAX_OUTPUT_BYTES_AND_ONE@ "$1" 2>/dev/null
rm -f "$1"
