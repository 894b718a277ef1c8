#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A BPF skeleton for a machine of the other byte order: bpftool before 7.5 (Debian 12 has
# 7.1) opens only objects of its own byte order, so a big-endian router's skeleton cannot be
# generated on an x86 build machine. The skeleton's code depends only on the object's BTF
# (names, map and section layouts), which is the same for both byte orders of one source:
# this generates the skeleton from the build machine's object, checks that the two objects'
# BTF agree, and embeds the target's object in it.
#
#   scripts/skel-embed.sh NAME HOST_ORDER_OBJECT TARGET_ORDER_OBJECT >SKELETON
set -euo pipefail

name=${1:?usage: skel-embed.sh NAME HOST_ORDER_OBJECT TARGET_ORDER_OBJECT}
host_obj=${2:?usage: skel-embed.sh NAME HOST_ORDER_OBJECT TARGET_ORDER_OBJECT}
target_obj=${3:?usage: skel-embed.sh NAME HOST_ORDER_OBJECT TARGET_ORDER_OBJECT}
bpftool=${BPFTOOL:-bpftool}

if ! cmp -s <("$bpftool" btf dump file "$host_obj" format c) \
	<("$bpftool" btf dump file "$target_obj" format c); then
	echo "skel-embed.sh: $host_obj and $target_obj differ in their types" >&2
	exit 1
fi
skel=$("$bpftool" gen skeleton "$host_obj" name "$name")
size=$(stat -c %s "$target_obj")
# The object is the string literal of NAME__elf_bytes(), from its "*sz = N;" to the line
# that ends it with '";'.
awk -v fn="${name}__elf_bytes" -v size="$size" -v obj="$target_obj" '
	$0 ~ "^static inline const void \\*" fn "\\(" { in_fn = 1 }
	in_fn && /^\t\*sz = [0-9]+;$/ {
		print "\t*sz = " size ";"
		print "\treturn (const void *)\"\\"
		cmd = "od -An -v -tx1 " obj
		n = 0
		line = ""
		while ((cmd | getline bytes) > 0) {
			split(bytes, b, " ")
			for (i = 1; b[i] != ""; i++) {
				line = line "\\x" b[i]
				if (++n % 32 == 0) {
					print line "\\"
					line = ""
				}
			}
		}
		close(cmd)
		print line "\";"
		skip = 1
		next
	}
	skip && /";$/ { skip = 0; in_fn = 0; next }
	skip { next }
	{ print }
' <<<"$skel"
