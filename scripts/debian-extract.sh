#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Downloads Debian packages of one architecture and unpacks them into a directory, without
# touching the system's apt setup (a private sources list, lists and cache) and without
# installing anything: the cross builds' sysroots and the big-endian guest's root are made of
# it.
#
#   scripts/debian-extract.sh ARCH DIR PACKAGE...
#
# ARCH is a Debian architecture (s390x, arm64, armhf, ...). The packages are taken as named,
# without their dependencies: the caller lists what it needs, and checks what is missing.
# Environment: DEBIAN_SUITE (bookworm), DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR.
set -euo pipefail

arch=${1:?usage: debian-extract.sh ARCH DIR PACKAGE...}
dir=$(realpath -m "${2:?usage: debian-extract.sh ARCH DIR PACKAGE...}")
shift 2
[ $# -gt 0 ] || {
	echo "usage: debian-extract.sh ARCH DIR PACKAGE..." >&2
	exit 2
}
suite=${DEBIAN_SUITE:-bookworm}

# shellcheck source=scripts/debian-apt.sh
. "$(dirname "$0")/debian-apt.sh"
apt_dir=$dir.apt
mkdir -p "$apt_dir/debs" "$dir"
debian_apt_setup "$arch" "$suite" "$apt_dir"
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download "$@")
for deb in "$apt_dir"/debs/*.deb; do
	dpkg -x "$deb" "$dir"
done
rm -rf "$apt_dir"
