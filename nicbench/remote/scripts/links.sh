# links TAG: one line per network interface of the host but lo, "TAG IF CC - STATE TX RX":
# its carrier changes, operstate, and the bytes it sent and received (/sys/class/net/IF;
# "-" for what the kernel does not have; the carrier-down count is not read: one file
# less per interface, and the changes say as much). Read with builtins, no process more,
# with one redirection for all of them (each costs an open of /dev/null); every interface
# is read, since the scripts that print these are not told which one is the test link
# (their arguments stay what a plan shows). Its variables start with "l_", apart from
# those of the scripts it is part of.
links() {
    for l_p in /sys/class/net/*; do
        l_i=${l_p##*/}
        [ "$l_i" = lo ] && continue
        l_cc=-; l_os=-; l_tx=-; l_rx=-
        read -r l_cc <"$l_p/carrier_changes"
        read -r l_os <"$l_p/operstate"
        read -r l_tx <"$l_p/statistics/tx_bytes"
        read -r l_rx <"$l_p/statistics/rx_bytes"
        echo "$1 $l_i ${l_cc:--} - ${l_os:--} ${l_tx:--} ${l_rx:--}"
    done 2>/dev/null
}
