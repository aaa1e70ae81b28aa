# $1: the directory to make for the command; "$@" after it: the command (see start_bg).
# Prints "<pid> <dir>".
start_bg "$@"
