#!/usr/bin/env bash
# The Debian package, as a user gets it. cpack builds it from the build dir into a scratch dir
# (the build dir gets only its install_manifest.txt). The .deb depends on the library packages
# of what the binary links; its binary is stripped and its debug info is in the -dbgsym .ddeb
# under the same build id. dpkg installs it into a scratch root (never /): the binary runs from
# there, every man page formats, the completions load, the schemas are JSON, an installed example
# validates, and dpkg removes it all again. Also `cmake --install` into a prefix.
# Prints "N passed, N failed"; exit 77 (skip) when a tool is missing: scripts/install-deps.sh
# installs each of them.
set -u
: "${PLUMB:?path to the plumb binary}" "${PLUMB_SRC:?source root}" "${PLUMB_BUILD:?build dir}"
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
tmp=$E2E_TMP
pass=0 fail=0
# check DESCRIPTION COMMAND...: COMMAND's exit status is the verdict; its output shows on failure.
check() {
  local desc=$1; shift
  if "$@" >"$E2E_OUT" 2>"$E2E_ERR"; then pass=$((pass + 1)); echo "ok   $desc"; else
    fail=$((fail + 1)); echo "FAIL $desc"; sed 's/^/    | /' "$E2E_OUT" "$E2E_ERR" | head -30; fi
}
done_() { echo "$pass passed, $fail failed"; ((fail == 0)); exit; }

for tool in cpack dpkg dpkg-deb dpkg-shlibdeps readelf file man gzip python3; do
  command -v "$tool" >/dev/null || { echo "skip: no $tool (scripts/install-deps.sh installs it)"; exit 77; }
done
[[ -f $PLUMB_BUILD/CPackConfig.cmake ]] || { echo "FAIL no $PLUMB_BUILD/CPackConfig.cmake"; echo "0 passed, 1 failed"; exit 1; }

version=$("$PLUMB" version | sed -n 's/^plumb \([0-9][0-9.]*\)$/\1/p')
arch=$(dpkg --print-architecture)
deb=$tmp/pkg/plumb_${version}_$arch.deb
ddeb=$tmp/pkg/plumb-dbgsym_${version}_$arch.ddeb

echo "# cpack from the build dir into a scratch dir"
start=$SECONDS
check "cpack exits 0" cpack --config "$PLUMB_BUILD/CPackConfig.cmake" -B "$tmp/pkg"
echo "     (cpack took $((SECONDS - start)) s)"
check "it wrote plumb_${version}_$arch.deb" test -s "$deb"
check "and plumb-dbgsym_${version}_$arch.ddeb" test -s "$ddeb"
[[ -s $deb && -s $ddeb ]] || done_

echo "# the control fields"
dpkg-deb -f "$deb" > "$tmp/control"
check "Package: plumb, Version: $version, Architecture: $arch" \
  bash -c "grep -qx 'Package: plumb' '$tmp/control' && grep -qx 'Version: $version' '$tmp/control' \
    && grep -qx 'Architecture: $arch' '$tmp/control'"
check "Section: admin" grep -qx 'Section: admin' "$tmp/control"
check "a Maintainer and a Description" \
  bash -c "grep -q '^Maintainer: .*@' '$tmp/control' && grep -q '^Description: .*GPU cluster' '$tmp/control'"
depends=$(sed -n 's/^Depends: //p' "$tmp/control")
echo "     Depends: $depends"
echo "$depends" > "$tmp/depends"
# The library package names are Debian's (libssh-4, libcurl4, libgit2-1.5, libssl3 on 12).
for pair in "libssh:libssh-[0-9]+" "libcurl:libcurl[0-9]+(-gnutls|-openssl)?" "libgit2:libgit2-[0-9.]+" \
            "libssl:libssl[0-9.]+" "libc:libc6" "libstdc++:libstdc\+\+6"; do
  check "Depends names ${pair%%:*} with a version (dpkg-shlibdeps on the binary)" \
    grep -qE "(^|, )${pair#*:} \(>= [^)]+\)(,|$)" "$tmp/depends"
done

echo "# a stripped binary, its debug info in the dbgsym package"
dpkg-deb -x "$deb" "$tmp/x"
dpkg-deb -x "$ddeb" "$tmp/dbg"
bin=$tmp/x/usr/bin/plumb
check "usr/bin/plumb is in the package" test -x "$bin"
check "file says it is stripped" bash -c "file -b '$bin' | grep -q ', stripped'"
check "no .debug_info section in it" bash -c "! readelf -S '$bin' | grep -q '\.debug_info'"
built_size=$(stat -c %s "$PLUMB") packed_size=$(stat -c %s "$bin")
echo "     build binary $((built_size / 1048576)) MB, packaged $((packed_size / 1048576)) MB," \
     ".deb $(($(stat -c %s "$deb") / 1024)) KB, .ddeb $(($(stat -c %s "$ddeb") / 1024)) KB"
check "packaged binary under a quarter of the build's" test $((packed_size * 4)) -lt "$built_size"
build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p'; }
id=$(build_id "$bin")
check "the packaged binary has a build id" test -n "$id"
check "the build's binary has the same one" test "$(build_id "$PLUMB")" = "$id"
debug=$tmp/dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
check "dbgsym holds usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" test -s "$debug"
check "that file's build id is the binary's" test "$(build_id "$debug")" = "$id"
check "it has the debug info (.debug_info)" bash -c "readelf -S '$debug' | grep -q '\.debug_info'"
check "the binary's .gnu_debuglink names it" \
  bash -c "readelf -p .gnu_debuglink '$bin' | grep -qF '${id:2}.debug'"
check "dbgsym depends on plumb (= $version)" \
  bash -c "dpkg-deb -f '$ddeb' Depends | grep -qxF 'plumb (= $version)'"

echo "# dpkg -i into a scratch root"
# No maintainer scripts: dpkg --root as non-root could only run them chrootless, against the
# host's /. If the package ever gains one, this test must change, not run it.
check "the package has no maintainer scripts" \
  bash -c "! dpkg-deb -I '$deb' | grep -Eq '^ +[0-9]+ bytes, +[0-9]+ lines +\*? *(pre|post)(inst|rm)'"
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: > "$root/var/lib/dpkg/status"
host_before=$(dpkg-query -W -f='${Status} ${Version}' plumb 2>&1)
# --force-depends: the libraries are the host's, not in the scratch root. --path-include='*':
# a host dpkg.cfg.d that drops /usr/share/man (container images do) must not drop our pages.
dpkg_root() {
  dpkg --root="$root" --log="$tmp/dpkg.log" --force-not-root "$@"
}
check "dpkg --root installs it" dpkg_root --force-depends --path-include='*' -i "$deb"
check "the host's dpkg database is untouched" \
  test "$(dpkg-query -W -f='${Status} ${Version}' plumb 2>&1)" = "$host_before"
check "dpkg -s: install ok installed" bash -c "dpkg --root='$root' -s plumb | grep -qx 'Status: install ok installed'"
dpkg --root="$root" -L plumb > "$tmp/files"
for f in /usr/bin/plumb /usr/share/man/man1/plumb.1.gz /usr/share/man/man5/plumb-repo.5.gz \
         /usr/share/bash-completion/completions/plumb /usr/share/zsh/vendor-completions/_plumb \
         /usr/share/fish/vendor_completions.d/plumb.fish /usr/share/plumb/schemas/plan.schema.json \
         /usr/share/plumb/schemas/rules/compat.yaml /usr/share/doc/plumb/README.md \
         /usr/share/doc/plumb/examples/h100-pod/inventory.yaml; do
  check "dpkg -L lists $f, and it is there" bash -c "grep -qxF '$f' '$tmp/files' && test -s '$root$f'"
done
check "nothing outside /usr" bash -c "! grep -v '^/usr\(/\|$\)' '$tmp/files' | grep -vx '/\.'"

echo "# the installed binary"
check "plumb version exits 0" bash -c "'$root/usr/bin/plumb' version > '$tmp/version.out'"
check "... and prints plumb $version" grep -qx "plumb $version" "$tmp/version.out"
check "plumb --help exits 0" bash -c "'$root/usr/bin/plumb' --help > '$tmp/help.out'"
check "... and lists the commands" grep -qE '^  validate ' "$tmp/help.out"
make_cluster_repo "$root/usr/share/doc/plumb/examples/h100-pod" "$tmp/pod" >/dev/null
check "it validates the installed h100-pod example (schemas built in, no source tree)" \
  bash -c "cd / && '$root/usr/bin/plumb' validate --repo '$tmp/pod'"

echo "# man pages"
man_text() { MANWIDTH=80 LC_ALL=C.UTF-8 man -P cat -l "$1" 2>&1; }
check "man -l plumb.1.gz has NAME: plumb" \
  bash -c "$(declare -f man_text); man_text '$root/usr/share/man/man1/plumb.1.gz' | grep -A1 '^NAME' | grep -q '^ *plumb '"
check "man -l plumb-repo.5.gz has NAME: plumb-repo" \
  bash -c "$(declare -f man_text); man_text '$root/usr/share/man/man5/plumb-repo.5.gz' | grep -A1 '^NAME' | grep -q 'plumb-repo'"
pages=("$root"/usr/share/man/man1/plumb-*.1.gz)
bad=()
for p in "${pages[@]}"; do
  verb=$(basename "$p" .1.gz); verb=${verb#plumb-}
  man_text "$p" | grep -A1 '^NAME' | grep -q "plumb-$verb" || bad+=("$verb")
done
check "each of the ${#pages[@]} verb pages has its NAME${bad:+ (not: ${bad[*]})}" test "${#bad[@]}" = 0
check "gzip -9n: best compression, no name or time stamp in any .gz" \
  bash -c "for p in '$root'/usr/share/man/man*/*.gz; do gzip -t \"\$p\" || exit 1;
    [[ \$(od -An -tu1 -j8 -N1 \"\$p\" | tr -d ' ') == 2 ]] || { echo \"\$p: not -9\"; exit 1; }
    [[ \$(od -An -tu4 -j4 -N4 \"\$p\" | tr -d ' ') == 0 ]] || { echo \"\$p: mtime set\"; exit 1; }
    (( \$(od -An -tu1 -j3 -N1 \"\$p\") & 8 )) && { echo \"\$p: name set\"; exit 1; }; done; true"
# Every verb plumb --help lists has a page.
awk '/^[A-Za-z]+:$/ {s=$0} s ~ /^(SUBCOMMANDS|Subcommands|COMMANDS|Commands):/ && /^  [a-z]/ {print $1}' \
  "$tmp/help.out" > "$tmp/verbs"
missing=$(while read -r v; do [[ -f $root/usr/share/man/man1/plumb-$v.1.gz ]] || echo "$v"; done < "$tmp/verbs")
check "every verb in plumb --help ($(wc -l < "$tmp/verbs")) has a page${missing:+ (missing: $missing)}" \
  test -s "$tmp/verbs" -a -z "$missing"

echo "# completions"
comp=$root/usr/share/bash-completion/completions/plumb
check "bash -n parses the bash completion" bash -n "$comp"
check "sourcing it registers a completion for plumb" bash -c "source '$comp' && complete -p plumb"
check "the zsh one is autoloadable (#compdef plumb)" bash -c "head -1 '$root/usr/share/zsh/vendor-completions/_plumb' | grep -q '^#compdef plumb'"
check "the fish one completes plumb" grep -q 'complete -c plumb' "$root/usr/share/fish/vendor_completions.d/plumb.fish"
for sh in zsh fish; do
  command -v $sh >/dev/null || continue
  f=$root/usr/share/zsh/vendor-completions/_plumb; [[ $sh == fish ]] && f=$root/usr/share/fish/vendor_completions.d/plumb.fish
  check "$sh -n parses its completion" $sh -n "$f"
done

echo "# schemas and rule data"
# What the binary carries (`plumb schemas`): the stack schema is composed from each module's
# folder and the facts schemas live there too, so schemas/ in the source tree is not the list.
"$PLUMB" schemas | sort >"$tmp/schemas-built"
(cd "$root/usr/share/plumb/schemas" && find . -type f | sed 's|^\./||' | sort) >"$tmp/schemas-installed"
check "all $(wc -l <"$tmp/schemas-built") schema and rule files installed, as plumb carries them" \
  diff "$tmp/schemas-built" "$tmp/schemas-installed"
check "the installed stack schema is the composed one" \
  cmp "$root/usr/share/plumb/schemas/stack.schema.json" <("$PLUMB" schemas --print stack.schema.json)
check "every installed .json parses" python3 -c '
import json, pathlib, sys
files = list(pathlib.Path(sys.argv[1]).rglob("*.json"))
assert files, "no json"
for f in files: json.load(open(f))' "$root/usr/share/plumb/schemas"
check "no C++ under share/plumb" bash -c "! find '$root/usr/share/plumb' -name '*.cc' -o -name '*.h' | grep -q ."

echo "# dpkg -r removes it all"
check "dpkg --root -r plumb" dpkg_root -r plumb
check "no file of it is left" bash -c "! find '$root/usr' -type f | grep -q ."

echo "# cmake --install into a prefix"
check "cmake --install --prefix exits 0" cmake --install "$PLUMB_BUILD" --prefix "$tmp/prefix"
check "bin/plumb, the man page, the completion and a schema are there" bash -c "cd '$tmp/prefix' &&
  test -x bin/plumb && test -s share/man/man1/plumb.1.gz && test -s share/bash-completion/completions/plumb &&
  test -s share/plumb/schemas/inventory.schema.json && test -s share/doc/plumb/examples/minimal/inventory.yaml"

done_
