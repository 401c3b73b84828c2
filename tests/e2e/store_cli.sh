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

# A password on the command line is readable by every user (ps, /proc/PID/cmdline) for the
# whole run: refused, for every command that takes --store, before anything is opened.
for verb in "runs" "history" "audit export --since 2026-01-01" "apply --ref HEAD --auto-approve"; do
  # shellcheck disable=SC2086
  run $verb --store "postgresql://plumb:S3cr3tPw@/plumb?host=$PLUMB_TEST_PG_HOST&port=$PLUMB_TEST_PG_PORT"
  check "$verb --store URL-with-password is refused (exit $RC), pointing to PLUMB_STORE and ~/.pgpass" \
    bash -c "test $RC = 1 && grep -q 'a password on the command line is readable by every user' '$T/err' && grep -q PLUMB_STORE '$T/err' && grep -q pgpass '$T/err' && ! grep -q S3cr3tPw '$T/out' '$T/err'"
done
run runs --store "postgresql:///plumb?host=$PLUMB_TEST_PG_HOST&port=$PLUMB_TEST_PG_PORT&user=plumb&password=S3cr3tPw"
check "a password= parameter on the command line too (exit $RC)" bash -c "test $RC = 1 && grep -q 'a password on the command line' '$T/err'"

# A password in the URL (PLUMB_STORE, where it belongs): never printed, whatever goes wrong.
bad="postgresql://plumb:S3cr3tPw@/plumb?host=$T/no-such-dir&port=1"
PLUMB_STORE=$bad PLUMB_STORE_RETRY_S=1 run runs
check "an unreachable store is an error (exit $RC)" test "$RC" = 1
check "the error names the store with its password hidden" grep -qF 'postgresql://plumb:***@/plumb' "$T/err"
check "the password appears in no output" bash -c "! grep -q S3cr3tPw '$T/out' '$T/err'"
PLUMB_STORE="postgresql:///plumb?host=$T/none&password=S3cr3tPw&port=1" PLUMB_STORE_RETRY_S=1 run runs
check "a password= parameter is hidden too" bash -c "test $RC = 1 && grep -qF 'password=***' '$T/err' && ! grep -q S3cr3tPw '$T/out' '$T/err'"

# Errors that waiting will not fix are reported at once, with libpq's reason (the window is
# 600 s: a retried error would take that long).
PWU=$PLUMB_TEST_PG_PW_USER
at="host=$PLUMB_TEST_PG_HOST&port=$PLUMB_TEST_PG_PORT"
fast() { # DESC WANT STORE: runs against STORE (from PLUMB_STORE) fails within 60 s, saying WANT
  local t0=$SECONDS
  PLUMB_STORE=$3 PLUMB_STORE_RETRY_S=600 run runs
  check "$1: fails at once ($((SECONDS - t0))s, exit $RC) with libpq's reason" \
    bash -c "test $RC = 1 && test $((SECONDS - t0)) -lt 60 && grep -qF -- '$2' '$T/err'"
  check "$1: the password appears in no output" bash -c "! grep -q WrongPw1 '$T/out' '$T/err'"
}
fast "a wrong password" "password authentication failed for user \"$PWU\"" "postgresql:///$PWU?$at&user=$PWU&password=WrongPw1"
fast "a missing database" 'database "no_such_db" does not exist' "postgresql:///no_such_db?$at&user=plumb"
fast "sslmode=bogus" 'invalid sslmode value: "bogus"' "postgresql:///plumb?$at&user=plumb&sslmode=bogus"
# The password where libpq keeps it: its password file.
printf '*:*:%s:%s:%s\n' "$PWU" "$PWU" "$PLUMB_TEST_PG_PW" >"$T/pgpass"
chmod 600 "$T/pgpass"
PGPASSFILE=$T/pgpass run runs --store "postgresql:///$PWU?$at&user=$PWU"
check "the password from PGPASSFILE, the URL without it on the command line (exit $RC)" test "$RC" = 0
PLUMB_STORE="postgresql:///$PWU?$at&user=$PWU&password=$PLUMB_TEST_PG_PW" run runs
check "the password in PLUMB_STORE (exit $RC)" test "$RC" = 0
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
(PLUMB_STORE="postgresql://plumb:S3cr3tPw@127.0.0.1:1/plumb?sslmode=disable" PLUMB_STORE_RETRY_S=0 "$PLUMB" runs >"$T/out" 2>"$T/err"; echo $? >"$T/rc") || true
check "sslmode=disable over TCP is refused before any connection (store.tls)" \
  bash -c "test \$(cat '$T/rc') = 1 && grep -q 'does not verify the server' '$T/err' && ! grep -q S3cr3tPw '$T/err'"
echo "$pass passed, $fail failed"
((fail == 0))
