#!/usr/bin/env bash
# Installs JigsawDB's build and benchmark dependencies from Debian 12 packages.
# Idempotent: packages already present are not reinstalled, and apt is only
# consulted when something is missing. Must run as root (or via sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang libclang-rt-14-dev
  libpmem-dev libpmemobj-dev
  libndctl-dev libdaxctl-dev libnuma-dev liburing-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libleveldb-dev librocksdb-dev liblmdb-dev
  libxxhash-dev libisal-dev liblz4-dev libzstd-dev libcli11-dev nlohmann-json3-dev
  libraft-dev libuv1-dev
  gnuplot-nox universal-ctags python3
  python3-dev pybind11-dev python3-pytest python3-venv python3-setuptools python3-wheel python3-pip
)

# Node.js (18 or later) with its headers and npm, for the Node binding: the
# machine's own if it has one (with include/node beside it), else Debian's.
if ! command -v node >/dev/null || ! command -v npm >/dev/null ||
   [[ ! -f "$(dirname "$(dirname "$(command -v node)")")/include/node/node_api.h" ]]; then
  packages+=(nodejs npm libnode-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  SUDO=sudo
else
  SUDO=
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
