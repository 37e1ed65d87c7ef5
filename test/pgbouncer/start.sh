#!/usr/bin/env bash
# Starts PgBouncer (transaction mode, 127.0.0.1:6433, test/pgbouncer/pgbouncer.ini) in front of the
# local PostgreSQL unless something already answers there, then waits until
# `psql -h 127.0.0.1 -p 6433 -U postgres test -c 'select 1'` works (30 s at most).
# PgBouncer refuses to run as root: as root it runs as the `postgres` user.
# Stop it with: kill "$(cat /tmp/geneva-drive-pgbouncer/pgbouncer.pid)"
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Must match logfile, pidfile and auth_file in pgbouncer.ini.
RUN_DIR=/tmp/geneva-drive-pgbouncer
PORT=6433

answers() {
  psql -h 127.0.0.1 -p "${PORT}" -U postgres test -Atc 'select 1' >/dev/null 2>&1
}

if answers; then
  echo "PgBouncer already listening on 127.0.0.1:${PORT}"
  exit 0
fi

if ! command -v pgbouncer >/dev/null 2>&1; then
  echo "pgbouncer is not installed (apt-get install -y pgbouncer)" >&2
  exit 1
fi

mkdir -p "${RUN_DIR}"
cp "${HERE}/pgbouncer.ini" "${HERE}/userlist.txt" "${RUN_DIR}/"
chmod 600 "${RUN_DIR}/userlist.txt"
if [ "$(id -u)" -eq 0 ]; then
  chown -R postgres:postgres "${RUN_DIR}"
  (cd "${RUN_DIR}" && runuser -u postgres -- pgbouncer -d "${RUN_DIR}/pgbouncer.ini")
else
  (cd "${RUN_DIR}" && pgbouncer -d "${RUN_DIR}/pgbouncer.ini")
fi

for _ in $(seq 1 30); do
  if answers; then
    echo "PgBouncer is ready on 127.0.0.1:${PORT}"
    exit 0
  fi
  sleep 1
done
echo "PgBouncer did not answer on 127.0.0.1:${PORT} within 30 s; its log:" >&2
tail -n 20 "${RUN_DIR}/pgbouncer.log" >&2 || true
exit 1
