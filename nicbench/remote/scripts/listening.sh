# listening PORT_HEX tcp|udp: does a socket listen on the port (TCP state LISTEN, or a
# bound UDP socket), on any address, IPv4 or IPv6? Reads /proc/net in this shell, with no
# external program: ss would cost a fork and an exec on every poll.
listening() {
    for f in "/proc/net/$2" "/proc/net/${2}6"; do
        [ -r "$f" ] || continue
        while read -r _ local _ st _; do
            case $local in
                *:"$1")
                    [ "$2" = udp ] && return 0
                    [ "$st" = 0A ] && return 0 ;;
            esac
        done <"$f"
    done
    return 1
}
