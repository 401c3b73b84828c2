# shellcheck shell=bash
# The node's kernel log since boot, for the fake dmesg and journalctl. Sourced
# after lib.sh, never run. kmsg_lines prints "SECONDS<TAB>MESSAGE" lines: a few
# boot lines, the NVIDIA driver's load line (when a driver is loaded), and one
# XID per entry of the knob
#   xid=CODE:GPU[,CODE:GPU...]   e.g. xid=79:3 (GPU 3 fell off the bus)
# in the forms of tests/data/gpu_health (the real lines of SOURCES.md there;
# codes without a captured line get "Xid CODE (testbed)"). The log lasts a
# boot like the real one only if the test says so: a key left in current.conf
# is there after a reboot too (put "xid=" in pending.conf to clear it at the
# next boot, as a fault that does not come back).
kmsg_lines() {
  st_load
  local drv=${_ST[driver]:-} T=$'\t' k=0 e code g bus pci t pid
  printf '0.000000%sLinux version %s (buildd@lcy02-amd64-080) %s\n' \
    "$T" "${_ST[kernel]:-5.15.0-105-generic}" "${_ST[kernel_build]:-#115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024}"
  if [[ -n $drv ]]; then
    printf '5.424621%sNVRM: loading NVIDIA UNIX x86_64 Kernel Module  %s  %s\n' "$T" "$drv" "${_ST[driver_date]:-Tue Mar  5 21:56:49 UTC 2024}"
    printf '5.661922%snvidia_uvm: module uses symbols from proprietary module nvidia, inheriting taint.\n' "$T"
    printf '5.675466%snvidia-uvm: Loaded the UVM driver, major device number 502.\n' "$T"
  fi
  for e in ${_ST[xid]//,/ }; do
    code=${e%%:*} g=${e#*:}
    [[ $code =~ ^[0-9]+$ && $g =~ ^[0-9]+$ ]] || continue
    bus=$(gpu_bus "$g")
    pci=0000:${bus,,}:00
    t=$((612 + k)).345678
    pid=$((240000 + g))
    case $code in
      79)
        printf '%s%sNVRM: GPU at PCI:%s: %s\n' "$t" "$T" "$pci" "$(gpu_uuid "$g")"
        printf '%s%sNVRM: GPU Board Serial Number: %s\n' "$t" "$T" "$(gpu_serial "$g")"
        printf "%s%sNVRM: Xid (PCI:%s): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\\n" "$t" "$T" "$pci"
        printf '%s%sNVRM: GPU %s.0: GPU has fallen off the bus.\n' "$t" "$T" "$pci" ;;
      13) printf "%s%sNVRM: Xid (PCI:%s): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\\n" "$t" "$T" "$pci" ;;
      31) printf '%s%sNVRM: Xid (PCI:%s): 31, pid=%d, name=python3, Ch 00000023, intr 00000000. MMU Fault: ENGINE CE0 HUBCLIENT_HSCE0 faulted @ 0x0_0abe0000. Fault is of type FAULT_PTE ACCESS_TYPE_VIRT_READ\n' "$t" "$T" "$pci" "$pid" ;;
      45) printf '%s%sNVRM: Xid (PCI:%s): 45, pid=%d, name=python3, Ch 00000001 caused by previous Xid 149\n' "$t" "$T" "$pci" "$pid" ;;
      94) printf '%s%sNVRM: Xid (PCI:%s): 94, pid=%d, name=python3, Contained ECC error\n' "$t" "$T" "$pci" "$pid" ;;
      109) printf '%s%sNVRM: Xid (PCI:%s): 109, pid=%d, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005\n' "$t" "$T" "$pci" "$pid" ;;
      149) printf '%s%sNVRM: Xid (PCI:%s): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n' "$t" "$T" "$pci" ;;
      *) printf "%s%sNVRM: Xid (PCI:%s): %d, pid='<unknown>', name=<unknown>, Xid %d (testbed)\\n" "$t" "$T" "$pci" "$code" "$code" ;;
    esac
    k=$((k + 1))
  done
}
# The epoch second the node booted (its uptime is the time namespace's).
kmsg_boot_epoch() {
  local up now
  read -r up _ </proc/uptime
  printf -v now '%(%s)T' -1
  echo $((now - ${up%.*}))
}
