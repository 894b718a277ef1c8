# SPDX-License-Identifier: GPL-2.0-only
# Sourced: a private apt setup for the packages of any architecture and suite, of Debian or
# of Ubuntu (whose 5.15 kernel is OpenWrt 23.05's series), which leaves the system's apt
# configuration alone (its own sources list, lists and cache, no status file: nothing counts
# as installed).
#
#   debian_apt_setup ARCH SUITE DIR    sets apt_opts for apt-get and apt-cache, and updates
#   ubuntu_apt_setup SUITE DIR         the same for Ubuntu's amd64 packages
#
# Environment: DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR, UBUNTU_MIRROR, UBUNTU_SECURITY_MIRROR.

# Ubuntu's archive keys, from Ubuntu's own package of them: Debian 12 has none. The
# package is taken by its checksum, so that what signs the lists is known here.
ubuntu_keyring_deb=pool/main/u/ubuntu-keyring/ubuntu-keyring_2021.03.26_all.deb
ubuntu_keyring_sha256=0d0e7ed6b112f5d03eabf3c7eb01ebdacf9c57714b279e90495cfc58c8c4520f

debian_apt_setup() {
	local arch=$1 suite=$2 apt_dir=$3
	local mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
	local security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg

	mkdir -p "$apt_dir"
	cat >"$apt_dir/sources.list" <<SRC
deb [signed-by=$keyring] $mirror $suite main
deb [signed-by=$keyring] $security $suite-security main
SRC
	private_apt_update "$arch" "$apt_dir"
}

ubuntu_apt_setup() {
	local suite=$1 apt_dir=$2
	local mirror=${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
	local security=${UBUNTU_SECURITY_MIRROR:-http://security.ubuntu.com/ubuntu}
	local keyring=$apt_dir/ubuntu-archive.gpg

	mkdir -p "$apt_dir/keyring"
	# apt-helper checks the hash and fails on a mismatch.
	/usr/lib/apt/apt-helper -qq -o APT::Sandbox::User=root download-file \
		"$mirror/$ubuntu_keyring_deb" "$apt_dir/keyring/keyring.deb" \
		"SHA256:$ubuntu_keyring_sha256"
	dpkg -x "$apt_dir/keyring/keyring.deb" "$apt_dir/keyring"
	cp "$apt_dir/keyring/usr/share/keyrings/ubuntu-archive-keyring.gpg" "$keyring"
	rm -rf "$apt_dir/keyring"
	cat >"$apt_dir/sources.list" <<SRC
deb [signed-by=$keyring] $mirror $suite main
deb [signed-by=$keyring] $mirror $suite-updates main
deb [signed-by=$keyring] $security $suite-security main
SRC
	private_apt_update amd64 "$apt_dir"
}

private_apt_update() { # ARCH DIR: apt_opts for DIR/sources.list, and its lists
	local arch=$1 apt_dir=$2

	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
		-o "Dir::State::status=/dev/null" -o "APT::Architecture=$arch"
		-o "APT::Architectures::=$arch" -o Debug::NoLocking=1 -o APT::Sandbox::User=root
		-o Acquire::Retries=3)
	apt-get "${apt_opts[@]}" -qq update && return
	# A mirror caught in a sync serves an index that its Release file does not describe,
	# and apt refuses the whole update: seen here with bookworm-security's armhf
	# index, which failed CI's cross build on a fresh machine. Once more after a pause,
	# then without the security suites: their packages are newer versions of the main
	# suites' ones, which a sysroot, a guest's root and a guest's kernel can do with.
	sleep 5
	apt-get "${apt_opts[@]}" -qq update 2>/dev/null && return
	grep -q -- '-security ' "$apt_dir/sources.list" || return 1
	echo "debian-apt.sh: the security suite's $arch index is unusable here (a mirror" \
		"in sync?): its main suite alone" >&2
	sed -i '/-security /d' "$apt_dir/sources.list"
	apt-get "${apt_opts[@]}" -qq update
}
