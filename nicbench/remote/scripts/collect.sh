# $1: a background command's directory. Three sections with NUL-free markers; rc is
# empty while the command runs or after it was killed.
cat "$1/out" 2>/dev/null
printf '\n@@nicbench-err@@\n'
cat "$1/err" 2>/dev/null
printf '\n@@nicbench-rc@@\n'
cat "$1/rc" 2>/dev/null
true
