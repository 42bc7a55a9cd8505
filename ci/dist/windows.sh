# Sourced by ci/dist/dist.sh (after its checks and helpers): the Windows (x86_64) artifacts.
#   idforge-VERSION-x86_64-windows.zip        idforge.exe (command line and server), an example
#                                             idforge.toml, README.md (the server's manual), docs/
#   idforge-c-VERSION-x86_64-windows-gnu.zip  include/idforge.h, bin/idforge.dll, lib/libidforge.dll.a
#                                             (import library), lib/idforge.def (for MSVC's lib
#                                             /def), lib/libidforge.a, lib/pkgconfig/idforge.pc and
#                                             idforge-static.pc (MSYS2), packaging/c/windows/README.md
#   the Node addon, idforge.win32-x64-msvc.node inside the npm package (dist.sh's node section):
#   the name napi-rs's loader asks for under the official (MSVC-built) node.exe; the addon calls
#   only N-API, a C ABI, so mingw's build loads there.
# Built by Debian's Rust (std from source for x86_64-pc-windows-gnu) into the target folder it
# shares with the macOS clippy run (ci/dist/dist.sh's target_dir: the aarch64 and musl builds have
# theirs, so that the CI run builds the two at once); linked by mingw-w64. Every file is a PE of x86-64 that
# imports only Windows' own DLLs (no libgcc_s, libwinpthread or libstdc++ to ship beside it).
# Tested under Wine by ci/dist/windows-test.sh.

WIN_TRIPLE=x86_64-pc-windows-gnu
# idforge.exe's size target (bytes): 14.9 MB at first, against 10.4 MB for Linux's (thin LTO as
# there; x86-64 Windows code is larger: its unwind tables, .pdata and .xdata, are 1.3 MB).
MAX_SERVER_WINDOWS=17000000
# win_out: the folder of the Windows dist builds.
win_out() { echo "$(target_dir "$WIN_TRIPLE")/$WIN_TRIPLE/dist"; }
# win_build PACKAGE: PACKAGE for Windows with the dist profile (the server with thin LTO, as for_target
# says why).
win_build() {
  echo "==> cargo build --profile dist --target $WIN_TRIPLE -p $1"
  local thin=0 extra=()
  [ "$1" != idforge-server ] || thin=1
  # napi-build links -lnode for windows-gnu: an import library of node.exe's N-API exports
  # (scaffolding: the addon resolves them in whichever node.exe loads it).
  [ "$1" != idforge-node ] || extra=(LIBNODE_PATH="$(bash ci/windows/libnode.sh)")
  THIN="$thin" for_target "$WIN_TRIPLE" env CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
    "${extra[@]}" cargo build --locked --profile dist --target "$WIN_TRIPLE" -p "$1"
}
windows_build() {
  bash ci/install/install-deps.sh windows
  win_build idforge-server
  win_build idforge-c
  wants node && win_build idforge-node
  return 0
}

# check_pe FILE: records a problem when FILE is not a PE of x86-64 or imports a DLL that is not
# Windows' own (mingw's runtime DLLs: a user would not have them).
check_pe() {
  local format dlls
  format="$(x86_64-w64-mingw32-objdump -f "$1" 2>/dev/null | sed -n 's/.*file format //p')"
  dlls="$(x86_64-w64-mingw32-objdump -p "$1" | awk '/DLL Name:/ { print tolower($3) }' | sort -u | tr '\n' ' ')"
  printf '    %-40s %s, imports %s\n' "$(basename "$1")" "${format:-not PE}" "$dlls"
  [ "$format" = pei-x86-64 ] || problems+=("$(basename "$1") is '${format:-not PE}', not pei-x86-64")
  case " $dlls" in
    *" lib"* | *" msvcp"* | *" vcruntime"*) problems+=("$(basename "$1") imports a DLL Windows lacks: $dlls") ;;
  esac
}
# win_ship SRC DEST: SRC without its symbol table.
win_ship() {
  install -D -m 755 "$1" "$2"
  x86_64-w64-mingw32-strip --strip-unneeded "$2"
}
# zip_dir DIR ZIP: a reproducible .zip of DIR (its name as the top folder, every file dated at the
# last commit), the archive Windows opens by itself.
zip_dir() {
  python3 - "$1" "$2" "$archive_epoch" <<'EOF'
import os, sys, time, zipfile
root, out, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
stamp = time.gmtime(max(epoch, 315532800))[:6]
top = os.path.dirname(root)
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(base, name)
            info = zipfile.ZipInfo(os.path.relpath(path, top).replace(os.sep, "/"), stamp)
            info.external_attr = (0o755 if os.access(path, os.X_OK) else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(info, f.read())
EOF
}

windows_pack() {
  local name dir out
  out="$(win_out)"
  name="idforge-$version-x86_64-windows"
  dir="$stage/$name"
  install -d "$dir"
  win_ship "$out/idforge.exe" "$dir/idforge.exe"
  install -m 644 packaging/server/idforge.toml README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$dir/"
  [ ! -d docs ] || cp -r docs "$dir/docs"
  echo "==> windows: $name.zip"
  check_pe "$dir/idforge.exe"
  check_size "$dir/idforge.exe" "$MAX_SERVER_WINDOWS"
  zip_dir "$dir" "dist/$name.zip"

  name="idforge-c-$version-x86_64-windows-gnu"
  dir="$stage/$name"
  install -d "$dir/include" "$dir/bin" "$dir/lib/pkgconfig"
  install -m 644 include/idforge.h "$dir/include/"
  win_ship "$out/idforge.dll" "$dir/bin/idforge.dll"
  install -m 644 "$out/libidforge.dll.a" "$out/libidforge.a" "$dir/lib/"
  x86_64-w64-mingw32-strip --strip-debug "$dir/lib/libidforge.a"
  # MSVC's lib /def makes an import library from the DLL's exports.
  {
    echo "LIBRARY idforge.dll"
    echo "EXPORTS"
    x86_64-w64-mingw32-objdump -p "$dir/bin/idforge.dll" | awk '$NF ~ /^idforge_/ { print "    " $NF }' | sort -u
  } >"$dir/lib/idforge.def"
  local exported declared
  exported="$(grep -c '^    idforge_' "$dir/lib/idforge.def")"
  # The header's functions: each name followed by its '(' outside the comments.
  declared="$(grep -vE '^\s*(\*|/\*|//)' include/idforge.h | grep -Eo '\bidforge_[a-z0-9_]+\(' | sort -u | wc -l)"
  [ "$exported" -eq "$declared" ] || problems+=("idforge.dll exports $exported idforge_ functions, include/idforge.h declares $declared")
  for pc in idforge idforge-static; do
    sed -e 's|@PREFIX@|${pcfiledir}/../..|' -e "s|@VERSION@|$version|" "packaging/c/windows/$pc.pc.in" \
      >"$dir/lib/pkgconfig/$pc.pc"
  done
  install -m 644 CHANGELOG.md LICENSE-MIT LICENSE-APACHE packaging/c/windows/README.md "$dir/"
  echo "==> windows: $name.zip ($exported functions exported)"
  check_pe "$dir/bin/idforge.dll"
  check_size "$dir/bin/idforge.dll" "$MAX_C_SO"
  printf '    %-40s %9d bytes\n' libidforge.a "$(stat -c %s "$dir/lib/libidforge.a")"
  zip_dir "$dir" "dist/$name.zip"
}

# windows_node_addon DIR: the Windows addon into the npm package's folder DIR, added to `addons`.
windows_node_addon() {
  local addon=idforge.win32-x64-msvc.node
  win_ship "$(win_out)/idforge_node.dll" "$1/$addon"
  echo "==> node: $addon"
  check_pe "$1/$addon"
  gzip -9nc "$1/$addon" >"$stage/$addon.gz"
  check_size "$stage/$addon.gz" "$MAX_NPM"
  addons+=("$addon")
}
