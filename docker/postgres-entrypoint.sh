#!/bin/bash
# Entrypoint of the air-gapped PostgreSQL base image (localhost/gw-base-postgres:15, made by
# docker/build-airgapped-images.sh from Debian's postgresql-15). It behaves like the official
# `postgres` image's entrypoint for what docker-compose.yml and the tests rely on:
#   POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE (a file holding it, read as root; required
#   unless POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER
#   (default postgres), POSTGRES_DB (default $POSTGRES_USER), POSTGRES_INITDB_ARGS,
#   POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), PGDATA (default /var/lib/postgresql/data);
#   initdb on an empty data directory, *.sql and *.sh from /docker-entrypoint-initdb.d once,
#   then `postgres` listening on every address, port 5432, as the postgres user.
# Arguments starting with '-' are passed to postgres (`command: -c fsync=off`), like upstream.
set -euo pipefail

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
POSTGRES_USER="${POSTGRES_USER:-postgres}"
POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"

log() { printf 'postgres-entrypoint: %s\n' "$*" >&2; }

if [[ "${1:-}" == -* ]]; then
  set -- postgres "$@"
fi

if [[ "${1:-}" != postgres ]]; then
  exec "$@"
fi

# POSTGRES_PASSWORD_FILE, as upstream's file_env: the file's content (trailing newlines cut)
# becomes POSTGRES_PASSWORD; both set is an error. Read before privileges are dropped.
if [[ -n "${POSTGRES_PASSWORD_FILE:-}" ]]; then
  if [[ -n "${POSTGRES_PASSWORD:-}" ]]; then
    log 'both POSTGRES_PASSWORD and POSTGRES_PASSWORD_FILE are set (but are exclusive)'
    exit 1
  fi
  POSTGRES_PASSWORD="$(<"$POSTGRES_PASSWORD_FILE")"
  export POSTGRES_PASSWORD
  unset POSTGRES_PASSWORD_FILE
fi

if [[ "$(id -u)" == 0 ]]; then
  # As root: make the data and socket directories the postgres user's, then drop privileges.
  mkdir -p "$PGDATA" /var/run/postgresql
  if [[ "$(stat -c %U "$PGDATA")" != postgres ]]; then
    chown -R postgres:postgres "$PGDATA"
  fi
  chown postgres:postgres /var/run/postgresql
  chmod 700 "$PGDATA"
  chmod 2775 /var/run/postgresql
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  auth_method="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
  if [[ -z "${POSTGRES_PASSWORD:-}" && "$auth_method" != trust ]]; then
    log 'the database is uninitialized and POSTGRES_PASSWORD is not set'
    log 'set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust, for tests only)'
    exit 1
  fi
  log "initializing ${PGDATA} for user ${POSTGRES_USER}, database ${POSTGRES_DB}"
  pwfile="$(mktemp)"
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of words, as upstream
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
    --auth-host="$auth_method" --encoding=UTF8 --locale=C.UTF-8 ${POSTGRES_INITDB_ARGS:-} >&2
  rm -f "$pwfile"
  printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  printf 'host all all all %s\n' "$auth_method" >>"$PGDATA/pg_hba.conf"

  # A temporary server on the Unix socket only, for the database and the init scripts.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >&2
  psql_cmd=(psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER")
  if [[ "$POSTGRES_DB" != postgres ]]; then
    db_ident="\"${POSTGRES_DB//\"/\"\"}\""
    "${psql_cmd[@]}" --dbname postgres -c "CREATE DATABASE ${db_ident}" >&2
  fi
  shopt -s nullglob
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
    *.sh) log "running $f" && bash "$f" ;;
    *.sql) log "running $f" && "${psql_cmd[@]}" --dbname "$POSTGRES_DB" -f "$f" >&2 ;;
    *) log "ignoring $f" ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >&2
  log 'initialization complete'
fi

exec "$@"
