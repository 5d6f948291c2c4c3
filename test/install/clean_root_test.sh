#!/usr/bin/env bash
# The self-contained wheel on a clean system (run as root):
#
#   test/install/clean_root_test.sh wheelhouse/tinymlir-*.whl
#
# Makes a fresh Debian 12 root with debootstrap (minbase: no LLVM, MLIR,
# OpenBLAS or libomp, checked), installs Python there, then in a chroot the
# wheel and NumPy, pytest and numba from PyPI, and runs clean_root_checks.py
# (the README's example, tinymlir.gpt2, a cold start and the disk cache, numba
# in the same process) and the seeds' examples (test/pytest/test_seeds.py).
# /proc and /dev/shm are mounted in the root; a trap unmounts them and
# removes the root. Needs debootstrap and the network (Debian's archive, PyPI).
set -euo pipefail
if (($# != 1)) || [[ ! -f $1 ]]; then
  echo "usage: $0 WHEEL" >&2
  exit 2
fi
wheel=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
command -v debootstrap >/dev/null || apt-get install -y -o DPkg::Lock::Timeout=600 debootstrap
root=$(mktemp -d /tmp/tinymlir-clean-root.XXXXXX)
cleanup() {
  for m in dev/shm proc; do
    mountpoint -q "$root/$m" && umount -l "$root/$m"
  done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
start=$SECONDS
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" \
  http://deb.debian.org/debian >"$root.debootstrap.log" 2>&1 || {
  tail -20 "$root.debootstrap.log"
  exit 1
}
rm -f "$root.debootstrap.log"
echo "debootstrap: $((SECONDS - start)) s"
mount -t proc proc "$root/proc"
mkdir -p "$root/dev/shm"
mount -t tmpfs shm "$root/dev/shm"
# The host's network: its resolver, and its CA bundle (a proxy may re-sign
# PyPI's certificates with a CA the host trusts).
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$root/etc/ssl/certs/ca-certificates.crt"
if chroot "$root" dpkg -l | grep -E '^ii +(llvm|libllvm|mlir|libmlir|libopenblas|libomp|libblas|liblapack|libgfortran)'; then
  echo "the clean root has LLVM, MLIR, BLAS or OpenMP packages" >&2
  exit 1
fi
mkdir -p "$root/check"
cp "$wheel" "$root/check/"
cp "$here/clean_root_checks.py" "$repo/test/pytest/test_seeds.py" "$repo/test/pytest/conftest.py" \
  "$root/check/"
# Nothing of the host's environment but the network's settings.
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
  PIP_DEFAULT_TIMEOUT="${PIP_DEFAULT_TIMEOUT:-60}" PIP_DISABLE_PIP_VERSION_CHECK=1 \
  ${HTTPS_PROXY:+HTTPS_PROXY=$HTTPS_PROXY} ${https_proxy:+https_proxy=$https_proxy} \
  ${HTTP_PROXY:+HTTP_PROXY=$HTTP_PROXY} ${http_proxy:+http_proxy=$http_proxy} \
  chroot "$root" /bin/bash -euo pipefail -c "
  python3 -m venv /opt/venv
  /opt/venv/bin/pip install --quiet /check/$(basename "$wheel") 'numpy>=2' pytest numba
  cd /check
  /opt/venv/bin/python clean_root_checks.py
  TINYMLIR_CACHE_DIR=/tmp/seeds-kernels /opt/venv/bin/python -m pytest -q -p no:cacheprovider test_seeds.py
"
echo "clean root: every check passed in $((SECONDS - start)) s"
