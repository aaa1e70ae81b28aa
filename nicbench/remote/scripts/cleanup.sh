# $1: a background command's directory, made by background.sh.
rm -rf -- "$1"
