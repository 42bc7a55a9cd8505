#!/usr/bin/env bash
# Starts and stops throwaway PostgreSQL, MariaDB, Redis and etcd servers on 127.0.0.1 (and, when
# IDFORGE_BIN names the idforge binary, an `idforge serve`) for the tests of the server and of the
# segment sources in every language (never mocks). Each gets a fresh data dir under DIR and is
# stopped by its PID.
#
#   ci/services.sh start DIR   # prints `export IDFORGE_TEST_POSTGRES_URL=…` lines: _MYSQL_URL,
#                              # _REDIS_URL, _ETCD_URL, and _IDFORGE_URL (with the password in it)
#   ci/services.sh stop DIR
#
# Every service also speaks TLS, with certificates of ci/install/tls-certs.sh in DIR/certs
# (IDFORGE_TEST_TLS_DIR): PostgreSQL and MariaDB on their port (users `tlsonly`, refused without
# TLS, and `idforge`, who must show the client certificate), Redis on its port + 1 (client
# certificate required), etcd on its port + 2 (https). Their URLs: IDFORGE_TEST_POSTGRES_TLS_URL,
# _POSTGRES_MTLS_URL, _MYSQL_TLS_URL, _MYSQL_MTLS_URL, _REDIS_TLS_URL, _ETCD_TLS_URL.
#
# Ports: $IDFORGE_PG_PORT (25432), $IDFORGE_MYSQL_PORT (23306), $IDFORGE_REDIS_PORT (26379),
# $IDFORGE_SERVE_PORT (27379), $IDFORGE_ETCD_PORT (22379, and the next one for its peers): all
# below Linux's ephemeral range (32768-60999), where a client socket or one in TIME_WAIT left by
# an earlier run could hold the port and fail the bind. Needs the `services` group of
# ci/install/install-deps.sh. PostgreSQL
# refuses to run as root, so as root it runs as user postgres.
set -euo pipefail

cmd=${1:?usage: ci/services.sh start|stop DIR}
dir=$(realpath -m "${2:?usage: ci/services.sh start|stop DIR}")
pg_port=${IDFORGE_PG_PORT:-25432}
my_port=${IDFORGE_MYSQL_PORT:-23306}
redis_port=${IDFORGE_REDIS_PORT:-26379}
serve_port=${IDFORGE_SERVE_PORT:-27379}
etcd_port=${IDFORGE_ETCD_PORT:-22379}

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

wait_for() { # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

start_postgres() {
  local bin data=$dir/pg/data
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  mkdir -p "$dir/pg"
  [ "$(id -u)" -ne 0 ] || chown postgres "$dir" "$dir/pg"
  as_pg "$bin/initdb" -D "$data" --auth=trust -U postgres >"$dir/pg/initdb.log" 2>&1
  # TLS: the key must belong to the server's user and be private. `tlsonly` is refused without
  # TLS; `idforge` logs in with its client certificate (CN=idforge) only.
  cp "$certs/server.pem" "$certs/server.key" "$certs/ca.pem" "$data/"
  [ "$(id -u)" -ne 0 ] || chown postgres "$data/server.pem" "$data/server.key" "$data/ca.pem"
  chmod 600 "$data/server.key"
  { printf 'hostnossl all tlsonly,idforge all reject\nhostssl all idforge all cert\n'; cat "$data/pg_hba.conf"; } \
    >"$data/pg_hba.new"
  mv "$data/pg_hba.new" "$data/pg_hba.conf"
  [ "$(id -u)" -ne 0 ] || chown postgres "$data/pg_hba.conf"
  as_pg "$bin/pg_ctl" -D "$data" -l "$dir/pg/log" -w -t 60 start \
    -o "-p $pg_port -k $dir/pg -c listen_addresses=127.0.0.1 -c fsync=on -c ssl=on \
        -c ssl_cert_file=server.pem -c ssl_key_file=server.key -c ssl_ca_file=ca.pem" >/dev/null
  head -1 "$data/postmaster.pid" >"$dir/pg.pid"
  as_pg psql -q -h "$dir/pg" -p "$pg_port" -U postgres -d postgres \
    -c 'CREATE ROLE tlsonly LOGIN SUPERUSER' -c 'CREATE ROLE idforge LOGIN SUPERUSER' >/dev/null
  local tls="sslmode=verify-full&sslrootcert=$certs/ca.pem"
  echo "export IDFORGE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$pg_port/postgres"
  echo "export IDFORGE_TEST_POSTGRES_TLS_URL='postgres://tlsonly@127.0.0.1:$pg_port/postgres?$tls'"
  echo "export IDFORGE_TEST_POSTGRES_MTLS_URL='postgres://idforge@127.0.0.1:$pg_port/postgres?$tls&sslcert=$certs/client.pem&sslkey=$certs/client.key'"
}

start_mariadb() {
  mkdir -p "$dir/my"
  mariadb-install-db --no-defaults --datadir="$dir/my/data" --user="$(id -un)" \
    --auth-root-authentication-method=normal >"$dir/my/install.log" 2>&1
  mariadbd --no-defaults --datadir="$dir/my/data" --user="$(id -un)" --port="$my_port" \
    --bind-address=127.0.0.1 --socket="$dir/my/sock" --pid-file="$dir/my.pid" \
    --ssl-cert="$certs/server.pem" --ssl-key="$certs/server.key" --ssl-ca="$certs/ca.pem" \
    --skip-name-resolve >"$dir/my/log" 2>&1 &
  wait_for 60 mariadb --no-defaults -uroot -h127.0.0.1 -P"$my_port" -e 'SELECT 1' || {
    cat "$dir/my/log" >&2
    return 1
  }
  mariadb --no-defaults -uroot -h127.0.0.1 -P"$my_port" -e "CREATE DATABASE IF NOT EXISTS idforge;
    CREATE USER tlsonly@'%' REQUIRE SSL; GRANT ALL ON *.* TO tlsonly@'%';
    CREATE USER idforge@'%' REQUIRE SUBJECT '/CN=idforge' AND ISSUER '/CN=idforge test CA';
    GRANT ALL ON *.* TO idforge@'%';"
  local tls="ssl-mode=VERIFY_IDENTITY&ssl-ca=$certs/ca.pem"
  echo "export IDFORGE_TEST_MYSQL_URL=mysql://root@127.0.0.1:$my_port/idforge"
  echo "export IDFORGE_TEST_MYSQL_TLS_URL='mysql://tlsonly@127.0.0.1:$my_port/idforge?$tls'"
  echo "export IDFORGE_TEST_MYSQL_MTLS_URL='mysql://idforge@127.0.0.1:$my_port/idforge?$tls&ssl-cert=$certs/client.pem&ssl-key=$certs/client.key'"
}

start_redis() {
  mkdir -p "$dir/redis"
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$dir/redis" --save "" \
    --appendonly no --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis/log" \
    --tls-port "$((redis_port + 1))" --tls-cert-file "$certs/server.pem" \
    --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.pem" --tls-auth-clients yes
  wait_for 30 redis-cli -p "$redis_port" PING || {
    cat "$dir/redis/log" >&2
    return 1
  }
  echo "export IDFORGE_TEST_REDIS_URL=redis://127.0.0.1:$redis_port"
  echo "export IDFORGE_TEST_REDIS_TLS_URL='rediss://127.0.0.1:$((redis_port + 1))?tls_ca=$certs/ca.pem&tls_cert=$certs/client.pem&tls_key=$certs/client.key'"
}

start_etcd() {
  mkdir -p "$dir/etcd"
  # Short heartbeat and election timeout: etcd then grants 1 s leases (its floor is 1.5 election
  # timeouts), which the servers' elections use.
  etcd --name s1 --data-dir "$dir/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port,https://127.0.0.1:$((etcd_port + 2))" \
    --cert-file "$certs/server.pem" --key-file "$certs/server.key" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 1))" \
    --initial-cluster "s1=http://127.0.0.1:$((etcd_port + 1))" \
    --heartbeat-interval 50 --election-timeout 500 >"$dir/etcd/log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  wait_for 30 env ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$etcd_port" endpoint health || {
    cat "$dir/etcd/log" >&2
    return 1
  }
  echo "export IDFORGE_TEST_ETCD_URL=etcd://127.0.0.1:$etcd_port"
  echo "export IDFORGE_TEST_ETCD_TLS_URL='etcds://127.0.0.1:$((etcd_port + 2))?tls_ca=$certs/ca.pem'"
}

start_idforge() {
  mkdir -p "$dir/idforge"
  "$IDFORGE_BIN" serve --port "$serve_port" --data-dir "$dir/idforge" --requirepass idfpass \
    >"$dir/idforge/log" 2>&1 &
  echo $! >"$dir/idforge.pid"
  wait_for 30 redis-cli -p "$serve_port" -a idfpass --no-auth-warning PING || {
    cat "$dir/idforge/log" >&2
    return 1
  }
  echo "export IDFORGE_TEST_IDFORGE_URL=idforge://default:idfpass@127.0.0.1:$serve_port"
}

stop_pid() { # stop_pid FILE: SIGTERM, then SIGKILL after 20 s
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(head -1 "$file")
  kill "$pid" 2>/dev/null || { rm -f "$file"; return 0; }
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}

case $cmd in
  start)
    mkdir -p "$dir"
    certs=$dir/certs
    bash "$(dirname "${BASH_SOURCE[0]}")/install/tls-certs.sh" "$certs"
    echo "export IDFORGE_TEST_TLS_DIR=$certs"
    start_postgres
    start_mariadb
    start_redis
    start_etcd
    if [ -n "${IDFORGE_BIN:-}" ]; then start_idforge; fi
    ;;
  stop)
    stop_pid "$dir/pg.pid"
    stop_pid "$dir/my.pid"
    stop_pid "$dir/redis.pid"
    stop_pid "$dir/etcd.pid"
    stop_pid "$dir/idforge.pid"
    ;;
  *)
    echo "usage: ci/services.sh start|stop DIR" >&2
    exit 2
    ;;
esac
