#!/usr/bin/env bash
# with_postgres.sh CMD...: runs CMD beside a PostgreSQL server of its own, started for it and
# stopped after: initdb in a temporary directory (as the `postgres` user: PostgreSQL refuses to
# run as root), listening on a unix socket there only (no TCP port at all), trust auth for the
# user `plumb`. CMD sees PLUMB_TEST_PG_HOST (the socket directory), PLUMB_TEST_PG_PORT,
# PLUMB_TEST_PG_DATA, PLUMB_TEST_PG_CTL (pg_ctl, run it with the same runuser prefix:
# PLUMB_TEST_PG_AS) and PLUMB_TEST_STORE (a postgresql:// URL of the database `plumb`).
# Exits with CMD's status. Skips (exit 77, a message naming what is missing) where the server
# is not installed.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [[ -z $bin || ! -x $bin/initdb ]]; then
  echo "SKIP: PostgreSQL server not installed (postgresql-15; scripts/install-deps.sh installs it)"
  exit 77
fi
as=()
if [[ $(id -u) == 0 ]]; then
  id postgres >/dev/null 2>&1 || { echo "with_postgres: no 'postgres' user to run the server as" >&2; exit 1; }
  as=(runuser -u postgres --)
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/plumb-pg.XXXXXX")
chmod 755 "$dir"
[[ ${#as[@]} == 0 ]] || chown postgres "$dir"
port=5432
stop() {
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT
"${as[@]}" "$bin/initdb" -D "$dir/data" -U plumb -A trust --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
# The password user's line first: pg_hba.conf takes the first line that matches.
"${as[@]}" sed -i '1i local all plumb_pw scram-sha-256' "$dir/data/pg_hba.conf"
# fsync off: these servers hold test data only; a crash of the machine is not what is tested.
opts="-k $dir -c listen_addresses='' -p $port -c fsync=off -c max_connections=200"
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 -o "$opts" start >/dev/null ||
  { cat "$dir/server.log" >&2; exit 1; }
"${as[@]}" "$bin/createdb" -h "$dir" -p "$port" -U plumb plumb
pw=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
"${as[@]}" "$bin/psql" -qX -h "$dir" -p "$port" -U plumb -d plumb \
  -c "CREATE ROLE plumb_pw LOGIN PASSWORD '$pw'" >/dev/null
"${as[@]}" "$bin/createdb" -h "$dir" -p "$port" -U plumb -O plumb_pw plumb_pw
export PLUMB_TEST_PG_HOST=$dir PLUMB_TEST_PG_PORT=$port PLUMB_TEST_PG_DATA=$dir/data
export PLUMB_TEST_PG_CTL=$bin/pg_ctl PLUMB_TEST_PG_AS="${as[*]}" PLUMB_TEST_PG_OPTS=$opts
export PLUMB_TEST_PG_PW_USER=plumb_pw PLUMB_TEST_PG_PW=$pw
export PLUMB_TEST_STORE="postgresql:///plumb?host=$dir&port=$port&user=plumb"
set +e
"$@"
rc=$?
set -e
exit "$rc"
