# Print this shell's pid on the first line of stdout, then become the command: the pid is
# the command's, and (sshd makes every exec channel a session leader) its process group.
echo "$$"
exec "$@"
