#!/bin/bash
# mkcerts.sh DIR ADDR...: a fresh per-run CA and the BMC server certificates, with openssl.
#   DIR/ca.pem             the CA the client trusts (give its path to the client)
#   DIR/server.{pem,key}   signed by that CA; IP SANs for every ADDR (+127.0.0.1, localhost)
#   DIR/wrong-ca.pem, DIR/wrong.{pem,key}       same SANs, signed by a different CA
#   DIR/wrong-name.{pem,key}  signed by the right CA, but for 127.0.0.254 only (name mismatch)
#   DIR/self-signed.{pem,key} a self-signed server certificate (no CA at all)
#   DIR/<cert>.sha256      its SHA-256 fingerprint as "sha256:AB:CD:..." (for pinning)
# EC P-256 keys: TLS handshakes are cheap enough for 1024 BMCs in one process.
set -euo pipefail
dir=${1:?usage: mkcerts.sh DIR ADDR...}; shift
mkdir -p "$dir"; chmod 700 "$dir"
cd "$dir"
san="IP:127.0.0.1,DNS:localhost"
declare -A seen=([127.0.0.1]=1)
for a in "$@"; do
  [ -n "${seen[$a]:-}" ] && continue; seen[$a]=1
  san="$san,IP:$a"
done
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; chmod 600 "$1"; }
ca() { # name subject
  ec "$1.key"
  openssl req -x509 -new -key "$1.key" -sha256 -days 30 -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$1.pem" 2>/dev/null
}
leaf() { # name ca san
  ec "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=plumb-testbed-bmc" -out "$1.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 30 -sha256 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
ca ca "plumb testbed BMC CA $(date +%s)-$$"
ca wrong-ca "plumb testbed WRONG CA $$"
leaf server ca "$san"
leaf wrong wrong-ca "$san"
leaf wrong-name ca "IP:127.0.0.254"
ec self-signed.key
openssl req -x509 -new -key self-signed.key -sha256 -days 30 -subj "/CN=plumb-selfsigned-bmc" \
  -addext "subjectAltName=$san" -out self-signed.pem 2>/dev/null
rm -f ./*.srl
# Fingerprints in inventory.yaml's form (bmc.fingerprint: "sha256:AB:CD:..."), for pinning tests.
for c in server wrong wrong-name self-signed; do
  fp=$(openssl x509 -in "$c.pem" -noout -fingerprint -sha256 | sed 's/^.*=//')
  echo "sha256:$fp" >"$c.sha256"
done
