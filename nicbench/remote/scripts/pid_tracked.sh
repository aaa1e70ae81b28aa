# $1: a file to hold "<pid> <start time>" of this command while it runs (journaled by the
# controller before this runs, so a controller that dies leaves a way to stop it); the
# command follows. Prints the pid on the first line, as pid_exec.sh, then runs the command
# in this same process group and removes the file when it ends.
pf=$1
shift
starttime "$$"
echo "$$ $ST" >"$pf" || exit 97
echo "$$"
"$@"
rc=$?
rm -f -- "$pf"
exit "$rc"
