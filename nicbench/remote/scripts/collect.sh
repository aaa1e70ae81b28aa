# $1: a background command's directory: what collect_dir prints.
collect_dir "$1"
true
