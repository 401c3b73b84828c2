# shellcheck shell=bash
# Shared setup of the Redfish integration tests: a private run directory, the BMC emulator on
# loopback ports, a PLANTED password, and `pb` running `plumb bmc` with every output captured
# under $RF_OUT so rf_finish can prove the password appears in none of them.
set -euo pipefail
: "${PLUMB:?set PLUMB to the plumb binary}" "${PLUMB_SRC:?set PLUMB_SRC to the source root}"
RF_BMC="$PLUMB_SRC/tests/testbed/redfish/bmc"
# The mockups are third-party data outside the project: skip (77, with a message naming them and
# where they are expected) when absent. rf_need_mockups NAME... for others than the vendor modes'.
rf_need_mockups() { "$RF_BMC" mockups "$@" >/dev/null || exit 77; }
read -ra rf_mockups <<<"${RF_MOCKUPS:-}"   # RF_MOCKUPS: names a test needs, set before sourcing
rf_need_mockups "${rf_mockups[@]}"
RF_WORK=$(mktemp -d "${TMPDIR:-/tmp}/plumb-rf.XXXXXX")
RF_RUN=$RF_WORK/run
RF_OUT=$RF_WORK/out
mkdir -p "$RF_OUT"
PLANTED="Pl4nted-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')-pw"
printf 'admin:%s\n' "$PLANTED" >"$RF_WORK/pw"
chmod 600 "$RF_WORK/pw"
rf_cleanup() { "$RF_BMC" down --run "$RF_RUN" >/dev/null 2>&1 || true; rm -rf "$RF_WORK"; }
trap rf_cleanup EXIT
fails=0
ok() { echo "ok   - $*"; }
not_ok() { echo "FAIL - $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

rf_up() { # bmc up options (--count, --vendor, --tls, --option...)
  local base=$((20000 + (RANDOM % 4000) * 8))
  "$RF_BMC" up --run "$RF_RUN" --ports "$base" --password-file "$RF_WORK/pw" "$@" 2>>"$RF_OUT/bmc-up.log"
}
rf_down() { "$RF_BMC" down --run "$RF_RUN" >/dev/null 2>&1 || true; rm -rf "$RF_RUN"; }
rf_fault() { "$RF_BMC" fault --run "$RF_RUN" "$@" >/dev/null; }
rf_sessions() { "$RF_BMC" status --run "$RF_RUN" | awk '{s += $6} END {print s + 0}'; }
rf_sync() { sleep 0.4; }   # the emulator flushes its request log every 0.2 s
rf_state() { "$RF_BMC" state --run "$RF_RUN" "$1"; }

n=0
# `apply` runs the Redfish modules' Apply straight against the BMCs with the test tool
# bmc_module_apply (tests/tools): plumb itself changes nodes only through its engine (plumb bmc
# apply is plumb apply of the Redfish modules; tests/integration/apply_bmc_rolling.sh).
: "${PLUMB_BMC_MODULE_APPLY:=$(dirname "$PLUMB")/tests/bmc_module_apply}"
pbr() { # plumb bmc SUB ARGS... (raw: only --targets added); sets rc, OUT, ERR
  n=$((n + 1))
  local sub=$1; shift
  OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
  local cmd=("$PLUMB" bmc "$sub")
  [[ $sub != apply && $sub != reset ]] || cmd=("$PLUMB_BMC_MODULE_APPLY" "$sub")
  set +e
  "${cmd[@]}" --targets "$RF_RUN/bmcs.txt" "$@" >"$OUT" 2>"$ERR"
  rc=$?
  set -e
}
pb() { # plumb bmc SUB with the testbed's CA and credentials (and -v: notes must be clean too)
  local sub=$1; shift
  pbr "$sub" --ca "$RF_RUN/certs/ca.pem" --credentials "file:$RF_RUN/credentials" -v "$@"
}
has() { grep -qF -- "$1" "$2"; }
json_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $1" "$OUT"; }

rf_finish() {
  if grep -rqF -- "$PLANTED" "$RF_OUT"; then
    not_ok "planted BMC password leaked into plumb output"
    grep -rlF -- "$PLANTED" "$RF_OUT" | sed 's/^/  in /'
  else
    ok "planted BMC password appears in none of plumb's $(ls "$RF_OUT" | wc -l) outputs"
  fi
  if [ "$fails" -eq 0 ]; then echo "all passed"; else echo "$fails failed"; exit 1; fi
}
