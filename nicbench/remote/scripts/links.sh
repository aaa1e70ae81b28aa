# links TAG: one line per network interface of the host but lo, "TAG IF CC DOWNS STATE
# TX RX": its carrier changes and carrier-down count, operstate, and the bytes it sent and
# received (/sys/class/net/IF; "-" for what the kernel does not have). Read with
# builtins, no process more; every interface is read, since the scripts that print these
# are not told which one is the test link (their arguments stay what a plan shows). Its
# variables start with "l_", apart from those of the scripts it is part of.
links() {
    for l_p in /sys/class/net/*; do
        [ -e "$l_p/operstate" ] || continue
        l_i=${l_p##*/}
        [ "$l_i" = lo ] && continue
        l_cc=-; l_cd=-; l_os=-; l_tx=-; l_rx=-
        { read -r l_cc <"$l_p/carrier_changes"; } 2>/dev/null
        { read -r l_cd <"$l_p/carrier_down_count"; } 2>/dev/null
        { read -r l_os <"$l_p/operstate"; } 2>/dev/null
        { read -r l_tx <"$l_p/statistics/tx_bytes"; } 2>/dev/null
        { read -r l_rx <"$l_p/statistics/rx_bytes"; } 2>/dev/null
        echo "$1 $l_i ${l_cc:--} ${l_cd:--} ${l_os:--} ${l_tx:--} ${l_rx:--}"
    done
}
