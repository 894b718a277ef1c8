# SPDX-License-Identifier: GPL-2.0-only
# Sourced: a private apt setup for Debian's packages of any architecture and suite, which
# leaves the system's apt configuration alone (its own sources list, lists and cache, no
# status file: nothing counts as installed).
#
#   debian_apt_setup ARCH SUITE DIR    sets apt_opts for apt-get and apt-cache, and updates
#
# Environment: DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR.

debian_apt_setup() {
	local arch=$1 suite=$2 apt_dir=$3
	local mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg

	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	cat >"$apt_dir/sources.list" <<SRC
deb [signed-by=$keyring] $mirror $suite main
deb [signed-by=$keyring] $security $suite-security main
SRC
	apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
		-o "Dir::State::status=/dev/null" -o "APT::Architecture=$arch"
		-o "APT::Architectures::=$arch" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
	apt-get "${apt_opts[@]}" -qq update
}
