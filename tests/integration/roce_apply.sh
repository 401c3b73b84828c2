#!/usr/bin/env bash
# The roce module end to end on a testbed node with two RoCE netdevs (fake mlnx_qos and ECN
# sysfs, tests/testbed/README.md), no Slurm (drain: none):
#   - gather reads both netdevs at the driver's defaults (pcp trust, no PFC, ECN everywhere);
#   - a fabric.roce pin plans trust, PFC and ECN per netdev, with their disruption (exit 2);
#   - apply converges: mlnx_qos and the ECN files on the node say what the pin says, and drift
#     is clean (exit 0);
#   - each setting is also kept in /etc/plumb/roce.d and plumb-roce.service is enabled: after a
#     reboot the unit has put them back, and drift is clean;
#   - a kept file removed by hand is drift of its own; apply writes it back without touching the
#     NIC; the unit disabled by hand is drift too, and apply enables it again.
. "$(dirname "$0")/lib/gather.sh"
GT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/plumb-it.XXXXXX")
TB_RUN=$GT_TMP/$(basename "$GT_TMP")   # its netns is named after it: unique
export TB_RUN
trap gt_down EXIT
"$TB" up 1 >/dev/null
# The RoCE netdevs are rendered at boot.
"$TB" state n1 "roce_ifaces=ens1f0np0 ens1f1np1" >/dev/null
"$TB" ctl reboot n1 >/dev/null
"$TB" ctl wait-up n1 >/dev/null
JOURNAL=$GT_TMP/journal.db

cat >"$GT_TMP/roce.yaml" <<'EOF'
fabric:
  roce: { trust: dscp, pfc: [3], ecn: [3] }
EOF
printf 'drain: { scheduler: none }\nmax_unavailable: 1\ncanary: 1\n' >"$GT_TMP/none.yaml"
REPO=$GT_TMP/repo
"$TB" cluster-repo "$REPO" --stack "$GT_TMP/roce.yaml" --rollout "$GT_TMP/none.yaml" >/dev/null

run() { # run ARGS...: plumb in the testbed netns; stdout $OUT, stderr $ERR, rc $RC
  OUT=$GT_TMP/out ERR=$GT_TMP/err
  set +e
  "$TB" exec env PLUMB_JOURNAL="$JOURNAL" "$PLUMB" "$@" >"$OUT" 2>"$ERR"
  RC=$?
  set -e
}
rc_is() { [[ $RC == "$1" ]] || { echo "     exit $RC, wanted $1"; sed 's/^/     | /' "$OUT" "$ERR" | head -30; false; }; }
qos() { "$TB" ssh n1 mlnx_qos -i "$1"; }
ecn_of() { "$TB" ssh n1 "cat /sys/class/net/$1/ecn/roce_np/enable/* /sys/class/net/$1/ecn/roce_rp/enable/*" | tr -d '\n'; }

run gather --repo "$REPO" --format json
check "gather reads the node whole (exit 0)" rc_is 0
check "both RoCE netdevs at the driver's defaults" py '[(i["name"], i["trust"], i["pfc"], i["ecn_np"]) for i in j["nodes"]["n1"]["facts"]["roce"]["interfaces"]] == [("ens1f0np0", "pcp", [], list(range(8))), ("ens1f1np1", "pcp", [], list(range(8)))]'

run plan --no-scheduler --repo "$REPO" --detailed-exitcode
check "plan: changes (exit 2)" rc_is 2
check "plan shows the trust change with its disruption" grep -qE 'fabric\.roce\.trust \[ens1f0np0\]: pcp -> dscp +\(service.restart' "$OUT"
check "plan shows the PFC change, per netdev" grep -qF 'fabric.roce.pfc [ens1f1np1]: [] -> [3]' "$OUT"
check "plan shows the ECN change, per netdev" grep -qF 'fabric.roce.ecn [ens1f0np0]: [0,1,2,3,4,5,6,7] -> [3]' "$OUT"
check "plan installs the restore unit" grep -qF 'fabric.roce.restore_unit: not-found -> enabled  (none' "$OUT"

run apply --repo "$REPO" --ref HEAD --auto-approve
check "apply exits 0" rc_is 0
check "mlnx_qos on the node: dscp trust" bash -c "$(declare -f qos); TB=$TB; qos ens1f0np0 | grep -qx 'Priority trust state: dscp'"
check "mlnx_qos on the node: PFC on priority 3 only" bash -c "$(declare -f qos); TB=$TB; qos ens1f1np1 | grep -qP '^\tenabled +0 +0 +0 +1 +0 +0 +0 +0 +$'"
check "ECN files on the node: priority 3 only, both halves" bash -c "[[ \$($(declare -f ecn_of); TB=$TB; ecn_of ens1f1np1) == 0001000000010000 ]]"
check "the node logged the changes" grep -q 'mlnx_qos ens1f0np0 trust=dscp' "$TB_RUN/nodes/n1/state/events.log"

run drift --repo "$REPO" --ref HEAD
check "drift after apply: clean (exit 0)" rc_is 0

check "each setting kept for the boot-time restore" bash -c "[[ \$('$TB' ssh n1 'ls /etc/plumb/roce.d' | tr '\n' ' ') == 'ens1f0np0.ecn.sh ens1f0np0.pfc.sh ens1f0np0.trust.sh ens1f1np1.ecn.sh ens1f1np1.pfc.sh ens1f1np1.trust.sh ' ]]"
check "the restore unit is enabled" bash -c "'$TB' ssh n1 systemctl is-enabled plumb-roce.service | grep -qx enabled"

"$TB" ctl reboot n1 >/dev/null
"$TB" ctl wait-up n1 >/dev/null
check "at boot the unit put the settings back" grep -q 'boot: plumb-roce restored' "$TB_RUN/nodes/n1/state/events.log"
since_boot() { awk '/ boot id=/{n=NR} {l[NR]=$0} END{for(i=n;i<=NR;i++) print l[i]}' "$TB_RUN/nodes/n1/state/events.log"; }
check "... by running mlnx_qos after this boot" bash -c "$(declare -f since_boot); TB_RUN=$TB_RUN; since_boot | grep -q 'mlnx_qos ens1f0np0 trust=dscp'"
check "... dscp trust again after the reboot" bash -c "$(declare -f qos); TB=$TB; qos ens1f0np0 | grep -qx 'Priority trust state: dscp'"
check "... ECN on priority 3 only again" bash -c "[[ \$($(declare -f ecn_of); TB=$TB; ecn_of ens1f0np0) == 0001000000010000 ]]"
run drift --repo "$REPO" --ref HEAD
check "drift after the reboot: clean (exit 0)" rc_is 0

# A kept file removed by hand: the NIC is right, the next boot would not be.
"$TB" ssh n1 rm /etc/plumb/roce.d/ens1f1np1.pfc.sh
run drift --repo "$REPO" --ref HEAD
check "a removed kept file is drift (exit 2)" rc_is 2
check "... on that setting only" bash -c "grep -qF 'fabric.roce.pfc [ens1f1np1]: not persisted -> [3]' '$OUT' && [[ \$(grep -c 'fabric\.roce' '$OUT') == 1 ]]"
run drift --repo "$REPO" --ref HEAD --format json
check "... the JSON names the file and what it costs" grep -qF 'ens1f1np1: pfc [3] is set but not kept in /etc/plumb/roce.d/ens1f1np1.pfc.sh: the NIC loses it at the next reboot' "$OUT"
qos_events() { grep -c 'mlnx_qos' "$TB_RUN/nodes/n1/state/events.log"; }
before=$(qos_events)
run apply --repo "$REPO" --ref HEAD --auto-approve
check "apply writes it back (exit 0)" rc_is 0
check "... without touching the NIC" bash -c "[[ \$(grep -c mlnx_qos '$TB_RUN/nodes/n1/state/events.log') == $before ]]"
check "... the file is back" bash -c "'$TB' ssh n1 cat /etc/plumb/roce.d/ens1f1np1.pfc.sh | grep -qxF \"mlnx_qos -i 'ens1f1np1' --pfc '0,0,0,1,0,0,0,0'\""

"$TB" ssh n1 systemctl disable plumb-roce.service 2>/dev/null
run drift --repo "$REPO" --ref HEAD
check "the unit disabled by hand is drift (exit 2)" rc_is 2
check "... saying so, as a finding of its own" grep -qF 'fabric.roce.restore_unit: disabled -> enabled' "$OUT"
# With the unit disabled a reboot really resets the NIC (what the unit is there for).
"$TB" ctl reboot n1 >/dev/null
"$TB" ctl wait-up n1 >/dev/null
check "a reboot without the unit: the NIC is back at pcp trust" bash -c "$(declare -f qos); TB=$TB; qos ens1f0np0 | grep -qx 'Priority trust state: pcp'"
run drift --repo "$REPO" --ref HEAD
check "... and drift says so" grep -qE 'fabric\.roce\.trust \[ens1f[01]np[01]\]: pcp -> dscp' "$OUT"
run apply --repo "$REPO" --ref HEAD --auto-approve
check "apply enables it again (exit 0)" rc_is 0
run drift --repo "$REPO" --ref HEAD
check "drift: clean (exit 0)" rc_is 0
gt_finish
