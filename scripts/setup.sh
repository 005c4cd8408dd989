#!/usr/bin/env bash
# Installs the Debian packages AccelKV needs to build, test and benchmark.
# Idempotent: does nothing when everything is already there.
set -euo pipefail
pkgs=(build-essential cmake libgtest-dev libxxhash-dev clang-format
      librocksdb-dev libleveldb-dev libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev
      libgflags-dev python3-matplotlib)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
