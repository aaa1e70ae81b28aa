# listening PORT tcp|udp: does a socket listen on the port (TCP state LISTEN, or a bound
# UDP socket), on any address, IPv4 or IPv6?
# ss asks the kernel over netlink for listening sockets only: one fork and an exec, about
# 2 ms. Reading /proc/net/tcp instead costs more than that even with no fork: the kernel
# walks the whole established-connection hash table (hundreds of thousands of buckets on a
# host with a few GiB) for every read, and this shell's read builtin reads a byte at a
# time. /proc is the fallback for hosts without ss.
listening() {
    if command -v ss >/dev/null 2>&1; then
        if [ "$2" = udp ]; then
            found=$(ss -Hlun "sport = :$1" 2>/dev/null)
        else
            found=$(ss -Hltn "sport = :$1" 2>/dev/null)
        fi
        [ -n "$found" ]
        return
    fi
    hex=$(printf '%04X' "$1")
    for f in "/proc/net/$2" "/proc/net/${2}6"; do
        [ -r "$f" ] || continue
        while read -r _ local _ st _; do
            case $local in
                *:"$hex")
                    [ "$2" = udp ] && return 0
                    [ "$st" = 0A ] && return 0 ;;
            esac
        done <"$f"
    done
    return 1
}
# held_by PORT tcp|udp PID: does process PID itself listen on the port? ss -p names the
# process of each listener (it reads every process's fds: about twice a plain look, so
# only where it matters). No where ss is missing or may not say.
held_by() {
    command -v ss >/dev/null 2>&1 || return 1
    if [ "$2" = udp ]; then
        owner=$(ss -Hlunp "sport = :$1" 2>/dev/null)
    else
        owner=$(ss -Hltnp "sport = :$1" 2>/dev/null)
    fi
    case $owner in *"pid=$3,"*) return 0 ;; esac
    return 1
}
