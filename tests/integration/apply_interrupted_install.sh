#!/usr/bin/env bash
# An interrupted install is not a finished one. plumb is killed (-9) while apt-get installs the
# driver pin's two packages on n1, and the install dies with it: cuda-drivers-550 is in,
# nvidia-driver-550 only unpacked (dpkg "iU"), and the kernel module on disk already says 550.
# --resume must see the install as unfinished (every package of the pin, dpkg's audit), repair
# dpkg (`dpkg --configure -a`), run the step again, and verify every package: not "skipped
# (already applied)".
. "$(dirname "$0")/lib/apply.sh"
ap_up 1 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 1
canary: 0
max_failures: 0
health: [ \"nvidia-smi -L\" ]
health_timeout: 1m"
# The second package of the pin is held after its unpack (dpkg lock held) until the test has
# killed plumb and the install: a state put in place, not a window timed against the load.
"$TB" state n1 'apt_hold=^nvidia-driver-550$' >/dev/null
"$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" apply --repo "$REPO" --ref HEAD --auto-approve \
  --reboot-timeout 120 --poll-max-ms 500 >"$AP_TMP/out" 2>"$AP_TMP/err" &
wrapper=$!
for _ in $(seq 1 3000); do   # a bound (5 min), not a race: the install waits at the hold
  [[ $(count_events n1 'apt-get held nvidia-driver-550') -ge 1 ]] && break
  kill -0 "$wrapper" 2>/dev/null || break
  sleep 0.1
done
check "the second package of the pin was unpacked and is held there" test "$(count_events n1 'apt-get held nvidia-driver-550')" = 1
for p in $(pgrep -f -- "--repo $REPO --ref HEAD --auto-approve" || true); do
  [[ $(cat "/proc/$p/comm" 2>/dev/null) == plumb ]] && kill -KILL "$p"
done
"$TB" ssh n1 "pkill -KILL -f '[a]pt-get install' || true" >/dev/null 2>&1 || true
set +e; wait "$wrapper"; set -e
"$TB" state n1 -apt_hold >/dev/null
pkg_state() { "$TB" ssh n1 "dpkg-query -W -f='\${db:Status-Abbrev}' $1"; }
check "cuda-drivers-550 installed" test "$(pkg_state cuda-drivers-550)" = "ii "
check "nvidia-driver-550 left unpacked, not configured (iU)" test "$(pkg_state nvidia-driver-550)" = "iU "
check "dpkg --audit reports it" bash -c "$TB ssh n1 dpkg --audit | grep -q nvidia-driver-550"

apply --resume --reboot-timeout 120 --reboot-grace 8 --poll-max-ms 500
check "--resume finishes the run (rc=$RC)" test "$RC" = 0
check "dpkg's interrupted run was repaired" test "$(count_events n1 'dpkg --configure -a')" = 1
check "nvidia-driver-550 fully installed" test "$(pkg_state nvidia-driver-550)" = "ii "
check "the install step ran again, not skipped as already applied" \
  python3 - "$JOURNAL" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "select outcome, detail from steps where node='n1' and step='apply:nvidia_driver.install' order by id").fetchall()
print(rows)
sys.exit(0 if rows and rows[-1][0] == "ok" and '"recheck"' not in rows[-1][1] else 1)
PY
check "n1 runs driver 550.90.07" test "$(driver_of n1)" = 550.90.07
check "n1 back in service" test "$(state_of n1)" = idle
plumb_in drift --repo "$REPO" >"$AP_TMP/drift.txt" 2>&1 && drc=0 || drc=$?
check "drift: in sync (rc=$drc)" test "$drc" = 0
check "no VIOLATION" test "$(violations)" = 0
ap_finish
