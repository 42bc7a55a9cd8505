#!/usr/bin/env bash
# Makes throwaway TLS certificates for tests in DIR (openssl, EC P-256, valid 30 days):
#   ca.pem ca.key              a CA
#   server.pem server.key      signed by it, for localhost and 127.0.0.1
#   client.pem client.key      a client certificate signed by it (CN=idforge)
#   stranger.pem stranger.key  a client certificate from another CA (to be refused)
# Keys are written readable by their owner only; PostgreSQL refuses a key others can read.
#
#   ci/install/tls-certs.sh DIR
set -euo pipefail
dir=${1:?usage: ci/install/tls-certs.sh DIR}
mkdir -p "$dir"
cd "$dir"
umask 077
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() { # ca NAME CN
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 30 -out "$1.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
}
issue() { # issue NAME CA CN EXTENSIONS
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$3" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$4" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 30 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
ca ca "idforge test CA"
ca other-ca "another test CA"
issue server ca localhost "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth
basicConstraints=CA:FALSE"
issue client ca idforge "extendedKeyUsage=clientAuth
basicConstraints=CA:FALSE"
issue stranger other-ca idforge "extendedKeyUsage=clientAuth
basicConstraints=CA:FALSE"
chmod 644 ./*.pem
