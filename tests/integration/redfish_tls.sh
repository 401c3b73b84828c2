#!/bin/bash
# BMC TLS is verified: the testbed CA or a pinned certificate fingerprint is accepted; a wrong
# CA, an unknown (self-signed) certificate, a name mismatch and a wrong pin are refused;
# there is no way to turn verification off (no --insecure), plain http and URLs with user:password
# are refused. Credentials: env:/file: references, a group-readable file
# refused, a wrong password reported; the planted password is in no output.
source "$PLUMB_SRC/tests/integration/lib/redfish.sh"
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/^.*=/sha256:/'; }
C="file:$RF_WORK/cred"
cp "$RF_WORK/pw" "$RF_WORK/cred"; chmod 600 "$RF_WORK/cred"

rf_up --count 1 --vendor dmtf
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/ca.pem"
check "the testbed CA is accepted (rc=$rc)" [ "$rc" = 0 ]
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/wrong-ca.pem"
check "a wrong CA is refused (rc=$rc)" [ "$rc" = 3 ]
check "  as a TLS error" has "http.tls" "$OUT"
pbr inventory --credentials "$C"
check "no CA given: the system store does not know the testbed cert (rc=$rc)" [ "$rc" = 3 ]
pbr inventory --credentials "$C" --fingerprint "$(fp "$RF_RUN/certs/server.pem")"
check "the pinned certificate fingerprint is accepted (rc=$rc)" [ "$rc" = 0 ]
pbr inventory --credentials "$C" --fingerprint "$(fp "$RF_RUN/certs/wrong.pem")"
check "a different pin is refused (rc=$rc)" [ "$rc" = 3 ]
check "  as a TLS error" has "http.tls" "$OUT"
pbr inventory --credentials "$C" --fingerprint "sha256:12:34"
check "a malformed pin is an error, not 'no pin' (rc=$rc)" [ "$rc" = 1 ]
pbr inventory --credentials "$C" --insecure
check "there is no --insecure: verification cannot be turned off (rc=$rc)" [ "$rc" != 0 ]
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/ca.pem" --fingerprint "$(fp "$RF_RUN/certs/server.pem")"
check "--ca and --fingerprint together are refused, not both dropped (rc=$rc)" [ "$rc" = 1 ]
# Plain http and a URL carrying user:password are refused before anything is sent.
inventory_of() { # TARGETS_FILE: plumb bmc inventory over those targets; sets rc, OUT, ERR
  n=$((n + 1))
  OUT=$RF_OUT/$n.out ERR=$RF_OUT/$n.err
  set +e
  "$PLUMB" bmc inventory --targets "$1" --credentials "$C" --ca "$RF_RUN/certs/ca.pem" \
    --format json >"$OUT" 2>"$ERR"
  rc=$?
  set -e
}
read -r name url _ <"$RF_RUN/bmcs.txt"
printf '%s %s\n' "$name" "${url/https:/http:}" >"$RF_WORK/http-targets.txt"
inventory_of "$RF_WORK/http-targets.txt"
check "an http:// BMC URL is refused before anything is sent (rc=$rc)" [ "$rc" = 1 ]
check "  saying it must be https" grep -q "must be https" "$OUT" "$ERR"
printf '%s %s\n' "$name" "${url/https:\/\//https://admin:$PLANTED@}" >"$RF_WORK/userinfo-targets.txt"
inventory_of "$RF_WORK/userinfo-targets.txt"
check "a BMC URL with user:password is refused (rc=$rc)" [ "$rc" = 1 ]
check "  and the password in it is not echoed" bash -c "! grep -q '$PLANTED' '$OUT' '$ERR'"

PLUMB_TEST_BMC_CRED="$(cat "$RF_WORK/pw")" pbr inventory --credentials env:PLUMB_TEST_BMC_CRED --ca "$RF_RUN/certs/ca.pem" -v
check "env: credentials work (rc=$rc)" [ "$rc" = 0 ]
chmod 644 "$RF_WORK/cred"
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/ca.pem"
check "a group/other-readable credentials file is refused (rc=$rc)" [ "$rc" = 1 ]
check "  with the fix in the hint" has "chmod 600" "$ERR"
printf 'admin:wrong-%s\n' "$PLANTED" >"$RF_WORK/cred"; chmod 600 "$RF_WORK/cred"
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/ca.pem" -v --format json
check "a wrong password is reported as an auth error (rc=$rc)" [ "$rc" = 3 ]
check "  code bmc.auth" has "bmc.auth" "$OUT"
cp "$RF_WORK/pw" "$RF_WORK/cred"; chmod 600 "$RF_WORK/cred"
rf_down

rf_up --count 1 --vendor dmtf --tls wrong-name
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/ca.pem"
check "right CA but wrong host name is refused (rc=$rc)" [ "$rc" = 3 ]
rf_down

rf_up --count 1 --vendor ilo --tls self-signed
pbr inventory --credentials "$C" --ca "$RF_RUN/certs/ca.pem"
check "an unknown self-signed certificate is refused (rc=$rc)" [ "$rc" = 3 ]
pbr inventory --credentials "$C" --fingerprint "$(fp "$RF_RUN/certs/self-signed.pem")"
check "the same certificate, pinned, is accepted (rc=$rc)" [ "$rc" = 0 ]
check "no session left behind (live: $(rf_sessions))" [ "$(rf_sessions)" = 0 ]
rf_finish
