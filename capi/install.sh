#!/usr/bin/env bash
# Installs telamalloc's C library into PREFIX (Linux): builds it in release, then writes
#   PREFIX/include/telamalloc.h
#   PREFIX/lib/libtelamalloc_c.so.VERSION, with the links libtelamalloc_c.so.ABI and .so
#   PREFIX/lib/libtelamalloc_c.a                     (link with -lpthread -ldl -lm besides)
#   PREFIX/lib/pkgconfig/telamalloc.pc               (pkg-config --cflags --libs telamalloc)
#   PREFIX/lib/cmake/telamalloc/telamalloc{Config,ConfigVersion}.cmake
#                                                    (find_package(telamalloc), the targets
#                                                    telamalloc::telamalloc and ..._static)
# ABI is MAJOR, or 0.MINOR before 1.0: the releases that keep the ABI share it.
#
# Usage: capi/install.sh PREFIX       (from anywhere; needs cargo)
# With TELAMALLOC_LIB_DIR=DIR set, installs the libraries already built in DIR instead of
# building (capi/tests/install.rs does, since it runs inside cargo's own build).
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 PREFIX" >&2
  exit 2
fi
if [ "$(uname -s)" != Linux ]; then
  echo "$0: only Linux is supported (the shared library's name and links are Linux's)" >&2
  exit 2
fi
capi=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$capi")
mkdir -p "$1"
prefix=$(cd "$1" && pwd)

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$capi/Cargo.toml" | head -n 1)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
abi=$major
if [ "$major" = 0 ]; then
  abi=0.$minor
fi

if [ -n "${TELAMALLOC_LIB_DIR:-}" ]; then
  libs=$TELAMALLOC_LIB_DIR
else
  (cd "$root" && cargo build --release --locked -p telamalloc-capi)
  libs=${CARGO_TARGET_DIR:-$root/target}/release
fi

include=$prefix/include
lib=$prefix/lib
install -d "$include" "$lib/pkgconfig" "$lib/cmake/telamalloc"
install -m 644 "$capi/include/telamalloc.h" "$include/telamalloc.h"
install -m 644 "$libs/libtelamalloc_c.a" "$lib/libtelamalloc_c.a"
install -m 755 "$libs/libtelamalloc_c.so" "$lib/libtelamalloc_c.so.$version"
ln -sfn "libtelamalloc_c.so.$version" "$lib/libtelamalloc_c.so.$abi"
ln -sfn "libtelamalloc_c.so.$abi" "$lib/libtelamalloc_c.so"

cat >"$lib/pkgconfig/telamalloc.pc" <<EOF
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: telamalloc
Description: Memory planning for ML compilers: buffer offsets from C and C++
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -ltelamalloc_c
Libs.private: -lpthread -ldl -lm
EOF

# The CMake package finds its prefix from where it lies, so the prefix can move.
cat >"$lib/cmake/telamalloc/telamallocConfig.cmake" <<EOF
# telamalloc $version: find_package(telamalloc) defines telamalloc::telamalloc (the shared
# library) and telamalloc::telamalloc_static (the static one), each with the header's folder.
get_filename_component(_telamalloc_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET telamalloc::telamalloc)
  add_library(telamalloc::telamalloc SHARED IMPORTED)
  set_target_properties(telamalloc::telamalloc PROPERTIES
    IMPORTED_LOCATION "\${_telamalloc_prefix}/lib/libtelamalloc_c.so.$version"
    IMPORTED_SONAME "libtelamalloc_c.so.$abi"
    INTERFACE_INCLUDE_DIRECTORIES "\${_telamalloc_prefix}/include")
endif()
if(NOT TARGET telamalloc::telamalloc_static)
  add_library(telamalloc::telamalloc_static STATIC IMPORTED)
  set_target_properties(telamalloc::telamalloc_static PROPERTIES
    IMPORTED_LOCATION "\${_telamalloc_prefix}/lib/libtelamalloc_c.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_telamalloc_prefix}/include"
    INTERFACE_LINK_LIBRARIES "pthread;dl;m")
endif()
unset(_telamalloc_prefix)
EOF

# A request for MAJOR.MINOR accepts this version when it is not older and keeps the ABI (the
# same MAJOR, and before 1.0 the same MINOR).
cat >"$lib/cmake/telamalloc/telamallocConfigVersion.cmake" <<EOF
set(PACKAGE_VERSION "$version")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
if(PACKAGE_FIND_VERSION)
  if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION
     OR NOT PACKAGE_FIND_VERSION_MAJOR EQUAL $major
     OR ($major EQUAL 0 AND NOT PACKAGE_FIND_VERSION_MINOR EQUAL $minor))
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  elseif(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
EOF

echo "installed telamalloc $version into $prefix"
