#!/usr/bin/env bash
# --store / PLUMB_STORE: runs, history and audit read a PostgreSQL store given as a URL, and a
# URL's password never reaches any output (it is shown as ***), even when the server cannot be
# reached. Runs beside a PostgreSQL server of its own (tests/store/with_postgres.sh).
set -euo pipefail
: "${PLUMB:?}" "${PLUMB_SRC:?}"
if [[ -z ${PLUMB_TEST_PG_HOST:-} ]]; then
  exec bash "$PLUMB_SRC/tests/store/with_postgres.sh" bash "$0" "$@"
fi
pass=0 fail=0
check() { local d=$1; shift; if "$@"; then echo "ok   $d"; pass=$((pass + 1)); else echo "FAIL $d"; fail=$((fail + 1)); fi; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() { set +e; "$PLUMB" "$@" >"$T/out" 2>"$T/err"; RC=$?; set -e; }

run runs --store "$PLUMB_TEST_STORE"
check "runs --store URL: an empty store (exit $RC)" bash -c "test $RC = 0 && grep -qi 'no runs' '$T/out' '$T/err'"
run history --store "$PLUMB_TEST_STORE" --verify
check "history --verify on the new store: its chain verifies (exit $RC)" test "$RC" = 0
PLUMB_STORE=$PLUMB_TEST_STORE run runs --format json
check "PLUMB_STORE is the default store (exit $RC)" bash -c "test $RC = 0 && grep -q '\\[' '$T/out'"
run audit export --store "$PLUMB_TEST_STORE" --since 2026-01-01 --format json --out "$T/audit.json"
check "audit export reads it too (exit $RC)" bash -c "test $RC = 0 && grep -q plumb.audit/v1 '$T/audit.json'"

# A password in the URL: never printed, whatever goes wrong.
bad="postgresql://plumb:S3cr3tPw@/plumb?host=$T/no-such-dir&port=1"
PLUMB_STORE_RETRY_S=1 run runs --store "$bad"
check "an unreachable store is an error (exit $RC)" test "$RC" = 1
check "the error names the store with its password hidden" grep -qF 'postgresql://plumb:***@/plumb' "$T/err"
check "the password appears in no output" bash -c "! grep -q S3cr3tPw '$T/out' '$T/err'"
PLUMB_STORE_RETRY_S=1 run runs --store "postgresql:///plumb?host=$T/none&password=S3cr3tPw&port=1"
check "a password= parameter is hidden too" bash -c "test $RC = 1 && grep -qF 'password=***' '$T/err' && ! grep -q S3cr3tPw '$T/out' '$T/err'"
# Look-alikes are refused, never taken for a file name (which would be a local journal with the
# password in its directory's name); a password libpq cannot decode is not quoted back.
for bad in "pgsql://plumb:S3cr3tPw@db/plumb" "host=$T user=plumb password=S3cr3tPw" "postgresql://plumb:p%zzS3cr3tPw@/plumb"; do
  (cd "$T" && PLUMB_STORE_RETRY_S=1 "$PLUMB" runs --store "$bad" >"$T/out" 2>"$T/err"; echo $? >"$T/rc") || true
  check "refused: '${bad:0:12}...' (exit $(cat "$T/rc")), the password nowhere" \
    bash -c "test \$(cat '$T/rc') = 1 && ! grep -q S3cr3tPw '$T/out' '$T/err' && ! find '$T' -path '*S3cr3tPw*' | grep -q ."
done
(cd "$T" && "$PLUMB" runs --store "POSTGRESQL:///plumb?host=$PLUMB_TEST_PG_HOST&port=$PLUMB_TEST_PG_PORT&user=plumb" >"$T/out" 2>&1; echo $? >"$T/rc") || true
check "the scheme in capitals is the same store (exit $(cat "$T/rc"))" test "$(cat "$T/rc")" = 0
# A server over TCP must prove who it is: no sslmode that skips the check.
(PLUMB_STORE_RETRY_S=0 "$PLUMB" runs --store "postgresql://plumb:S3cr3tPw@127.0.0.1:1/plumb?sslmode=disable" >"$T/out" 2>"$T/err"; echo $? >"$T/rc") || true
check "sslmode=disable over TCP is refused before any connection (store.tls)" \
  bash -c "test \$(cat '$T/rc') = 1 && grep -q 'does not verify the server' '$T/err' && ! grep -q S3cr3tPw '$T/err'"
echo "$pass passed, $fail failed"
((fail == 0))
