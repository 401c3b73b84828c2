#!/usr/bin/env bash
# A mixed rollout: two Ubuntu 22.04 nodes (apt) and two RHEL 9.4 nodes (dnf) in one cluster repo
# and one plan, on real Slurm. Before it, n1 has a newer kernel installed (Ubuntu's GRUB_DEFAULT=0
# would boot it) and n3 too (RHEL's UPDATEDEFAULT=yes made it the default): both are pinned to
# the older kernel they run; so has n2, whose GRUB is laid out as Debian's with
# GRUB_DISABLE_SUBMENU=y. Checks: the plan carries each node's own commands (apt-get +
# grub-set-default on Ubuntu; dnf module stream, versionlock and grubby on RHEL); apply
# converges all four through the driver's reboot; every node boots its pinned kernel, the newer
# one still installed, and again at a second reboot; the pins are held (versionlock); a second
# plan has nothing to do and drift is clean. Last, a GRUB_DEFAULT=0 in /etc/default/grub.d
# (which wins over /etc/default/grub) makes the step fail, saying so, until it is removed.
. "$(dirname "$0")/lib/apply.sh"
MX_DATA=$PLUMB_SRC/tests/integration/data/mixed_os
RHEL=$PLUMB_SRC/tests/testbed/defaults/rhel9
ap_up 4 "drain: { scheduler: slurm, timeout: 10m }
max_unavailable: 2
canary: 1
max_failures: 0"

# The cluster repo: group ubuntu (n1, n2) and rhel (n3, n4), each with its own stack.
rm -rf "$REPO"
mkdir -p "$REPO/stacks" "$REPO/rollouts"
cp "$MX_DATA"/*.yaml "$REPO/stacks/"
cp "$AP_TMP/rolling.yaml" "$REPO/rollouts/"
sed -e 's/groups: \[gpu\] }$/groups: [ubuntu] }/' -e '/^groups:/,$d' "$TB_RUN/cluster/inventory.yaml" |
  sed -E 's/(name: n[34],.*)groups: \[ubuntu\] }$/\1groups: [rhel] }/' >"$REPO/inventory.yaml"
cat >>"$REPO/inventory.yaml" <<'EOF'
groups:
  gpu: { rollout: rolling }
  ubuntu: { parents: [gpu], stack: ubuntu-2025q4 }
  rhel: { parents: [gpu], stack: rhel9-2025q4 }
EOF
git -C "$REPO" init -q
git -C "$REPO" add -A
git -C "$REPO" -c user.name=t -c user.email=t@example.invalid commit -q -m "mixed cluster"

# n3, n4 become RHEL 9.4 nodes: its os-release, rpm/dnf/grubby, the el9 packages and repo.
for n in n3 n4; do
  while IFS= read -r kv; do "$TB" state "$n" "$kv" >/dev/null; done <"$RHEL/current.conf"
  cp "$RHEL/packages" "$RHEL/repo" "$TB_RUN/nodes/$n/state/"
  "$TB" ctl reboot "$n"
done
for n in n3 n4; do "$TB" ctl wait-up "$n" >/dev/null; done
for _ in $(seq 1 120); do
  [[ $(state_of n3)$(state_of n4) == idleidle ]] && break
  sleep 1
done
S() { "$TB" ssh "$@"; }
check "n3 looks like RHEL 9.4 (os-release, rpm, no dpkg, el9_4 kernel)" \
  test "$(S n3 '. /etc/os-release; echo $ID $VERSION_ID; command -v dpkg-query || echo no-dpkg; uname -r')" \
  = "$(printf 'rhel 9.4\nno-dpkg\n5.14.0-427.13.1.el9_4.x86_64')"

# A newer kernel installed beforehand, as the distributions make it the next boot. n2's GRUB
# is laid out as Debian's with GRUB_DISABLE_SUBMENU=y (its own titles, every entry at the top):
# a menu path assumed from Ubuntu's titles would not be there.
S n2 "printf '%s\n' GRUB_DISTRIBUTOR=Debian GRUB_DISABLE_SUBMENU=y >>/etc/default/grub"
for n in n1 n2; do
  S "$n" 'DEBIAN_FRONTEND=noninteractive apt-get install -y linux-image-5.15.0-119-generic' >/dev/null 2>&1
done
S n3 'dnf install -y kernel-5.14.0-503.11.1.el9_5' >/dev/null
check "n1 (Ubuntu, GRUB_DEFAULT=0) would boot the newer 5.15.0-119 next" \
  test "$("$TB" state n1 -f pending.conf kernel)" = 5.15.0-119-generic
check "n2 (Debian titles, no submenu) would boot the newer 5.15.0-119 next" \
  test "$("$TB" state n2 -f pending.conf kernel)" = 5.15.0-119-generic
S n2 cat /boot/grub/grub.cfg >"$AP_TMP/n2.grub.cfg"
check "n2's grub.cfg has Debian's flat menu" \
  bash -c "grep -q \"^menuentry 'Debian GNU/Linux, with Linux 5.15.0-105-generic'\" $AP_TMP/n2.grub.cfg && ! grep -q '^submenu' $AP_TMP/n2.grub.cfg"
check "n3 (RHEL, UPDATEDEFAULT=yes) would boot the newer el9_5 next (grubby agrees)" \
  test "$(S n3 grubby --default-kernel)" = /boot/vmlinuz-5.14.0-503.11.1.el9_5.x86_64

# --- plan: each node's own commands ---------------------------------------------------------
set +e
plumb_in plan --repo "$REPO" --ref HEAD --out "$AP_TMP/plan.json" >"$AP_TMP/plan.txt" 2>&1
prc=$?
set -e
check "plan: changes to make (rc=$prc)" test "$prc" = 0 -o "$prc" = 2
cmds() { # NODE -> every command its planned actions carry, one a line
  python3 - "$AP_TMP/plan.json" "$1" <<'PY'
import json, sys
for n in json.load(open(sys.argv[1]))["nodes"]:
    if n["node"] == sys.argv[2]:
        for a in n["actions"]:
            for c in a["params"].get("commands", []):
                print(a["id"], c)
PY
}
for n in n1 n2 n3 n4; do cmds "$n" >"$AP_TMP/cmds.$n"; done
for n in n1 n2; do
  check "plan: $n (Ubuntu) installs with apt-get and never dnf" \
    bash -c "grep -q 'nvidia_driver.install apt-cache madison .cuda-drivers-550.' $AP_TMP/cmds.$n && grep -q \"cuda.install .*apt-get install .*'cuda-toolkit-12-4=12.4.1-1'\" $AP_TMP/cmds.$n && grep -q \"nccl.install .*apt-get install .*'libnccl2=2.21.5-1+cuda12.4'\" $AP_TMP/cmds.$n && grep -q \"packages.nvidia-container-toolkit .*apt-get install .*'nvidia-container-toolkit=1.16.2-1'\" $AP_TMP/cmds.$n && ! grep -q 'dnf\|grubby' $AP_TMP/cmds.$n"
done
for n in n1 n2; do
  check "plan: $n makes the pinned kernel GRUB's saved default (it runs it; 119 would boot next)" \
    bash -c "grep -qx 'kernel.default grub-set-default <the entry of /boot/grub/grub.cfg that boots /boot/vmlinuz-5.15.0-105-generic, read back after>' $AP_TMP/cmds.$n && grep -qx 'kernel.default update-grub' $AP_TMP/cmds.$n"
done
for n in n3 n4; do
  check "plan: $n (RHEL) enables the nvidia-driver:550-dkms stream and installs with dnf" \
    bash -c "grep -qx \"nvidia_driver.install dnf module enable -y 'nvidia-driver:550-dkms'\" $AP_TMP/cmds.$n && grep -qx \"nvidia_driver.install dnf install -y --allowerasing --disableplugin=versionlock 'nvidia-driver-550.90.07' 'cuda-drivers-550.90.07'\" $AP_TMP/cmds.$n && grep -qx \"cuda.install dnf install -y --allowerasing --disableplugin=versionlock 'cuda-toolkit-12-4-12.4.1'\" $AP_TMP/cmds.$n && grep -qx \"nccl.install dnf install -y --allowerasing --disableplugin=versionlock 'libnccl-2.21.5-1+cuda12.4' 'libnccl-devel-2.21.5-1+cuda12.4'\" $AP_TMP/cmds.$n && ! grep -q 'apt-get\|apt-cache\|update-grub' $AP_TMP/cmds.$n"
  check "plan: $n holds every pin with versionlock" \
    bash -c "grep -qx \"nvidia_driver.install dnf versionlock add 'nvidia-driver-550.90.07' 'cuda-drivers-550.90.07'\" $AP_TMP/cmds.$n && grep -qx \"packages.nvidia-container-toolkit dnf versionlock add 'nvidia-container-toolkit-1.16.2-1'\" $AP_TMP/cmds.$n"
done
check "plan: n3 sets the pinned kernel with grubby (el9_5 would boot next)" \
  grep -qx "kernel.default grubby --set-default '/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64'" "$AP_TMP/cmds.n3"
# The text a reviewer reads shows them too, under each node's own change.
check "plan text: the RHEL nodes' dnf commands under their changes" \
  grep -qF "        \$ dnf module enable -y 'nvidia-driver:550-dkms'" "$AP_TMP/plan.txt"
check "plan text: the Ubuntu nodes' apt-get commands under theirs" \
  grep -qE "^        \\$ .*apt-get install .*'cuda-toolkit-12-4=12.4.1-1'" "$AP_TMP/plan.txt"

# --- apply ----------------------------------------------------------------------------------
apply --ref HEAD --auto-approve --reboot-timeout 120 --poll-max-ms 1000
check "apply exits 0 (rc=$RC)" test "$RC" = 0
for n in n1 n2 n3 n4; do
  check "$n runs driver 550.90.07" test "$(driver_of "$n")" = 550.90.07
  check "$n back in service" test "$(state_of "$n")" = idle
done
for n in n1 n2; do
  check "$n runs the pinned 5.15.0-105-generic" test "$(S "$n" uname -r)" = 5.15.0-105-generic
  check "$n: CUDA 12.4.1, NCCL and the toolkit at their pins (dpkg)" \
    test "$(S "$n" "dpkg-query -W -f='\${Version} ' cuda-toolkit-12-4 libnccl2 nvidia-container-toolkit")" \
    = "12.4.1-1 2.21.5-1+cuda12.4 1.16.2-1 "
  check "$n: apt-get did the installs, dnf never ran" \
    bash -c "grep -q 'apt-get install nvidia-driver-550=550.90.07' $TB_RUN/nodes/$n/state/events.log && ! grep -q 'dnf ' $TB_RUN/nodes/$n/state/events.log"
done
for n in n1 n2; do
  check "$n booted the pin with the newer 5.15.0-119 still installed" \
    test "$(S "$n" "dpkg-query -W -f='\${Status}' linux-image-5.15.0-119-generic")" = "install ok installed"
done
# The pin's entry by its ids: through the submenu on n1, at the top on n2.
check "n1: GRUB_DEFAULT=saved and the pin's entry saved (the submenu's id, then the entry's)" \
  bash -c "[[ \"\$($TB ssh n1 'grep ^GRUB_DEFAULT= /etc/default/grub; grub-editenv list')\" == \$'GRUB_DEFAULT=saved\nsaved_entry=gnulinux-advanced-'*'>gnulinux-5.15.0-105-generic-advanced-'* ]]"
check "n2: the pin's own top-level entry saved" \
  bash -c "[[ \"\$($TB ssh n2 grub-editenv list)\" == 'saved_entry=gnulinux-5.15.0-105-generic-advanced-'* ]]"
for n in n3 n4; do
  check "$n runs the pinned 5.14.0-427.13.1.el9_4.x86_64" test "$(S "$n" uname -r)" = 5.14.0-427.13.1.el9_4.x86_64
  check "$n: CUDA, NCCL and the toolkit at their pins (rpm)" \
    test "$(S "$n" "rpm -q --qf '%{VERSION}-%{RELEASE} ' cuda-toolkit-12-4 libnccl libnccl-devel nvidia-container-toolkit")" \
    = "12.4.1-1 2.21.5-1+cuda12.4 2.21.5-1+cuda12.4 1.16.2-1 "
  check "$n: the driver's stream is 550-dkms" bash -c "$TB ssh $n dnf module list --enabled | grep -q '^nvidia-driver  *550-dkms \[e\]'"
  S "$n" dnf versionlock list >"$AP_TMP/locks.$n"
  check "$n: dnf versionlock list holds each pin (NAME-EPOCH:VERSION-RELEASE.*)" \
    bash -c "grep -qx 'nvidia-driver-3:550.90.07-1.el9.\*' $AP_TMP/locks.$n && grep -qx 'cuda-drivers-0:550.90.07-1.\*' $AP_TMP/locks.$n && grep -qx 'libnccl-0:2.21.5-1+cuda12.4.\*' $AP_TMP/locks.$n && grep -qx 'cuda-toolkit-12-4-0:12.4.1-1.\*' $AP_TMP/locks.$n && grep -qx 'nvidia-container-toolkit-0:1.16.2-1.\*' $AP_TMP/locks.$n && ! grep -q '535' $AP_TMP/locks.$n"
  check "$n: dnf did the installs, apt-get never ran" \
    bash -c "grep -q 'dnf install nvidia-driver=3:550.90.07-1.el9' $TB_RUN/nodes/$n/state/events.log && ! grep -q 'apt-get' $TB_RUN/nodes/$n/state/events.log"
  # held: a plain upgrade may not move a pin
  check "$n: versionlock keeps dnf from taking another version of a pin" \
    bash -c "! $TB ssh $n dnf install -y nvidia-container-toolkit-1.15.0-1 >/dev/null 2>&1"
done
plumb_in gather --repo "$REPO" --limit n3,n1 --format json >"$AP_TMP/facts.json" 2>/dev/null || true
check "gather: n3's pins are held (its versionlock list), nothing held on n1" python3 -c '
import json, sys
n = json.load(open(sys.argv[1]))["nodes"]
p3, p1 = n["n3"]["facts"]["packages"]["packages"], n["n1"]["facts"]["packages"]["packages"]
sys.exit(0 if p3["nvidia-driver"]["held"] and p3["libnccl"]["held"] and p3["cuda-toolkit-12-4"]["held"]
         and not p3["openssh-server"]["held"] and not any(v["held"] for v in p1.values()) else 1)' "$AP_TMP/facts.json"
check "n3 booted the pin with the newer el9_5 kernel still installed" \
  test "$(S n3 "rpm -q kernel | sort | xargs")" = "kernel-5.14.0-427.13.1.el9_4.x86_64 kernel-5.14.0-503.11.1.el9_5.x86_64"
check "n3: grubby's default is the pin" test "$(S n3 grubby --default-kernel)" = /boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64
check "no change happened while a job ran (no VIOLATION)" test "$(violations)" = 0

# --- converged: a second plan, drift, and another reboot ------------------------------------
set +e
plumb_in plan --repo "$REPO" --ref HEAD --detailed-exitcode >"$AP_TMP/plan2.txt" 2>&1
prc=$?
plumb_in drift --repo "$REPO" >"$AP_TMP/drift.txt" 2>&1
drc=$?
set -e
check "a second plan has no changes (rc=$prc)" test "$prc" = 0
check "drift: in sync (rc=$drc)" test "$drc" = 0
for n in n1 n2 n3; do "$TB" ctl reboot "$n"; done
for n in n1 n2 n3; do "$TB" ctl wait-up "$n" >/dev/null; done
check "another reboot: n1, n2 and n3 come back on their pins again" \
  test "$(S n1 uname -r) $(S n2 uname -r) $(S n3 uname -r)" \
  = "5.15.0-105-generic 5.15.0-105-generic 5.14.0-427.13.1.el9_4.x86_64"

# --- GRUB_DEFAULT set again in /etc/default/grub.d: saving the entry cannot take -----------
# grub-mkconfig sources grub.d after /etc/default/grub, so the drop-in's GRUB_DEFAULT=0 wins and
# the newer kernel boots next. Apply fails the step, saying so and where to look, instead of
# reporting success and planning the same change at every run.
S n2 "mkdir -p /etc/default/grub.d && echo GRUB_DEFAULT=0 >/etc/default/grub.d/60-local.cfg && update-grub 2>/dev/null"
check "n2 would boot 5.15.0-119 next (grub.d's GRUB_DEFAULT=0)" \
  test "$("$TB" state n2 -f pending.conf kernel)" = 5.15.0-119-generic
apply --ref HEAD --auto-approve --limit n2 --poll-max-ms 1000
check "apply with the override fails (rc=$RC)" test "$RC" != 0
check "the failure says the default did not take and names /etc/default/grub.d" \
  bash -c "cat $AP_TMP/out $AP_TMP/err | grep -q 'did not take effect: the next boot would run 5.15.0-119-generic' && cat $AP_TMP/out $AP_TMP/err | grep -q '/etc/default/grub.d'"
S n2 "rm /etc/default/grub.d/60-local.cfg"
apply --ref HEAD --auto-approve --limit n2 --poll-max-ms 1000
check "without it, apply sets the default (rc=$RC)" test "$RC" = 0
check "n2 boots the pin next again: its own entry saved, nothing pending" \
  bash -c "[[ \"\$($TB ssh n2 grub-editenv list)\" == 'saved_entry=gnulinux-5.15.0-105-generic-advanced-'* ]] && ! grep -q '^kernel=' $TB_RUN/nodes/n2/state/pending.conf"
check "n2 back in service" test "$(state_of n2)" = idle
ap_finish
