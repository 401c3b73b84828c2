#!/usr/bin/env bash
# Unpacks valijson's headers into DEST (default build/_deps/valijson) without installing the
# Debian package: libvalijson-dev depends on Qt5 and Poco dev packages (~100 packages) for
# adapters plumb does not use. `apt-get download` fetches just the .deb; dpkg-deb unpacks it.
set -euo pipefail
dest=${1:-build/_deps/valijson}
if [[ -f "$dest/include/valijson/validator.hpp" ]]; then exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # apt's _apt user must be able to write the download here
( cd "$tmp" && apt-get download -qq libvalijson-dev 2>/dev/null ) || {
  apt-get update -qq && ( cd "$tmp" && apt-get download -qq libvalijson-dev )
}
dpkg-deb -x "$tmp"/libvalijson-dev_*.deb "$tmp/x"
mkdir -p "$dest"
rm -rf "$dest/include"
cp -r "$tmp/x/usr/include" "$dest/include"
cp "$tmp/x/usr/share/doc/libvalijson-dev/copyright" "$dest/COPYRIGHT" 2>/dev/null || true
echo "fetch-valijson: headers in $dest/include"
