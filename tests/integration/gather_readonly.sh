#!/usr/bin/env bash
# Read-only guarantee: a gather (twice, text and json) changes nothing on any node: every file of
# every node's state dir (events.log included) and of its writable filesystem layer is
# byte-identical before and after.
. "$(dirname "$0")/lib/gather.sh"
gt_up 8
snapshot() { # checksums of every node's state and writable layer (overlay internals excluded)
  (cd "$TB_RUN/nodes" && find . -path '*/fs/.work-*' -prune -o -path '*/state/*' -type f -print \
    -o -path '*/fs/*' -type f -print | LC_ALL=C sort | xargs -d '\n' sha256sum)
}
before=$(snapshot)
check "the snapshot covers every node's events.log" test "$(grep -c '/state/events.log$' <<<"$before")" = 8
gather
check "gather read all 8 nodes" test "$RC" = 0
gather --format json --facts-out "$GT_TMP/facts.json"
check "second gather (json) read all 8 nodes" test "$RC" = 0
after=$(snapshot)
check "no node's state or filesystem changed" test "$before" = "$after"
if [[ $before != "$after" ]]; then diff <(echo "$before") <(echo "$after") | head -20; fi
check "the facts snapshot was written" test -s "$GT_TMP/facts.json"
gt_finish
