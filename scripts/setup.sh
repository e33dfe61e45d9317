#!/usr/bin/env bash
# Installs what uvevent needs to build, only when it is missing: Debian's
# libuv1-dev (libuv >= 1.44, with its static library) and pkg-config.
# Says what it did. Run by `make setup`.
set -euo pipefail

need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if ! { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists 'libuv-static >= 1.44'; }; then
  need+=(libuv1-dev)
fi
command -v gcc >/dev/null 2>&1 || need+=(gcc)

if [ ${#need[@]} -eq 0 ]; then
  echo "setup: libuv $(pkg-config --modversion libuv-static) and pkg-config are present; nothing to install"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to install: ${need[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${need[*]} with apt-get"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
pkg-config --exists 'libuv-static >= 1.44' || { echo "setup: libuv-static >= 1.44 still not found by pkg-config" >&2; exit 1; }
echo "setup: installed; libuv $(pkg-config --modversion libuv-static)"
