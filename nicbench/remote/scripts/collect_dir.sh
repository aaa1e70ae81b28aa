# collect_dir DIR: a background command's output, error output and exit status, in three
# sections with NUL-free markers (PosixShell.parse_collected reads them), then its CPU
# time in clock ticks in a fourth (``collected_ticks``); the status and the CPU time are
# empty while the command runs or after it was killed. Each head is a fork and an exec:
# the error output is usually empty, the status one word, so those are read without.
# Of the output, one byte more than nicbench keeps of a tool's output is sent (so the
# controller can tell it went over), of the error output at most what the controller
# reads beside it (limits.py: the numbers are put in as the script is loaded).
collect_dir() {
    head -c @MAX_OUTPUT_BYTES_AND_ONE@ "$1/out" 2>/dev/null
    printf '\n@@nicbench-err@@\n'
    [ -s "$1/err" ] && head -c @ERROR_BYTES@ "$1/err"
    printf '\n@@nicbench-rc@@\n'
    rc=
    [ -s "$1/rc" ] && read -r rc <"$1/rc"
    echo "$rc"
    printf '@@nicbench-cpu@@\n'
    c=
    [ -e "$1/cpu" ] && read -r c <"$1/cpu"
    echo "$c"
}
