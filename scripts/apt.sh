# Sourced by scripts/deps.sh: apt-get that waits for another apt.
#
# Another apt or dpkg (unattended-upgrades on a fresh machine, a package
# manager window) holds dpkg's lock for seconds to minutes; apt-get then
# fails at once with "Could not get lock ..." / "Unable to acquire the dpkg
# frontend lock". apt_get says so once, retries every RL_APT_RETRY seconds
# (default 5) for up to RL_APT_WAIT seconds (default 600), then stops
# saying what holds it. Any other failure is apt-get's own, shown as is.
# SUDO is deps.sh's: () as root, (sudo) otherwise.

apt_get() {
    local wait=${RL_APT_WAIT:-600} retry=${RL_APT_RETRY:-5} waited=0 out rc
    while :; do
        out=$("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" 2>&1) && rc=0 || rc=$?
        if [ "$rc" -eq 0 ]; then
            [ "$waited" -gt 0 ] && echo "deps: the other apt is done; apt-get $1 went through" >&2
            return 0
        fi
        if ! grep -qE 'Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock' <<<"$out"; then
            printf '%s\n' "$out" >&2
            return "$rc"
        fi
        if [ "$waited" -eq 0 ]; then
            echo "deps: another apt or dpkg is running (it holds dpkg's lock, e.g. unattended-upgrades); waiting up to ${wait} s for it to finish, retrying apt-get $1 every ${retry} s" >&2
        fi
        if [ "$waited" -ge "$wait" ]; then
            echo "deps: another apt or dpkg still holds dpkg's lock after ${waited} s; see what runs (ps -C apt,apt-get,dpkg,unattended-upgr -o pid,etime,args), wait for it, then run make deps again. apt-get said: $(grep -m1 -E 'lock' <<<"$out")" >&2
            return 1
        fi
        sleep "$retry"
        waited=$((waited + retry))
    done
}
