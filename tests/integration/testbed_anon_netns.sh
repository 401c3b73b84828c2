#!/usr/bin/env bash
# The testbed in anonymous mode: the whole run under `unshare --net` with
# TB_NETNS empty, as a CI job that wants everything to die with one process
# would use it. Two nodes: up, ssh with host-key checking, a reboot, down with
# nothing left. Prints "N passed, N failed".
# shellcheck disable=SC2016  # the inner script is single-quoted on purpose
set -uo pipefail
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
export TB_RUN=${TB_RUN:-$(mktemp -d "${TMPDIR:-/tmp}/plumb-tb-anon.XXXXXX")}
out=$(unshare --net -- env TB_NETNS= TB_DOWNTIME=1 TB="$src/tests/testbed/tb" bash -c '
  set -u
  "$TB" up 2 >/dev/null 2>&1 || { echo "up failed"; exit 1; }
  echo "hosts=$("$TB" ssh n1 hostname) $("$TB" ssh n2 hostname)"
  echo "netns=$([ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ] && echo host || echo private)"
  b0=$("$TB" ssh n2 cat /proc/sys/kernel/random/boot_id)
  "$TB" ctl reboot n2 && sleep 0.3 && "$TB" ctl wait-up n2 >/dev/null
  echo "reboot=$([ "$("$TB" ssh n2 cat /proc/sys/kernel/random/boot_id)" != "$b0" ] && echo new-boot-id)"
  pids=$(cut -d" " -f1 "$TB_RUN"/pids/*.pid | xargs)
  "$TB" down >/dev/null 2>&1
  left=""
  for p in $pids; do s=$(cat /proc/$p/stat 2>/dev/null) || continue; s=${s##*) }; [ "${s:0:1}" = Z ] || left+=" $p"; done
  echo "left=${left:-none} rundir=$([ -e "$TB_RUN" ] && echo kept || echo gone)"
' 2>&1)
echo "$out"
pass=0 fail=0
for want in "hosts=n1 n2" "netns=private" "reboot=new-boot-id" "left=none rundir=gone"; do
  if grep -qxF "$want" <<<"$out"; then pass=$((pass + 1)); echo "PASS: $want"; else fail=$((fail + 1)); echo "FAIL: $want"; fi
done
echo "$pass passed, $fail failed"
((fail == 0))
