#!/usr/bin/env bash
# Unpacks Prometheus' `promtool` into DEST (default build/_deps/promtool) without installing
# Debian's prometheus package, which would also install (and on a systemd machine start) a
# Prometheus server. `apt-get download` fetches the .deb; dpkg-deb unpacks it; only promtool
# is kept. Used by tests/integration/watch.sh to check `plumb watch`'s /metrics.
set -euo pipefail
dest=${1:-build/_deps/promtool}
if [[ -x "$dest/promtool" ]]; then exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt's _apt user must be able to write the download here
( cd "$tmp" && apt-get download -qq prometheus 2>/dev/null ) || {
  apt-get update -qq && ( cd "$tmp" && apt-get download -qq prometheus )
}
dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
mkdir -p "$dest"
cp "$tmp/x/usr/bin/promtool" "$dest/promtool"
cp "$tmp/x/usr/share/doc/prometheus/copyright" "$dest/COPYRIGHT" 2>/dev/null || true
echo "fetch-promtool: $dest/promtool"
