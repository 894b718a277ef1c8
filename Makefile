# SPDX-License-Identifier: GPL-2.0-only
# xdp-fastpath build. `make` builds the binary, `make test` runs every test (root; with
# `make test-kernels`, the tests on other kernels in qemu guests; `make cross`, the builds for
# arm64, armhf, mipsel and s390x),
# `make bench-prog` prints the datapath's per-packet cost, `make install` installs.

CC	?= gcc
CLANG	?= clang
BPFTOOL ?= bpftool
LLVM_OBJDUMP ?= llvm-objdump
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/sbin
MANDIR	?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
DESTDIR ?=

BUILD	:= build

# Cross builds: CROSS_COMPILE=s390x-linux-gnu- (or aarch64-linux-gnu-, arm-linux-gnueabihf-)
# and SYSROOT, a directory with the target's libraries and headers (tests/cross/build.sh
# makes one from Debian's packages and builds).
CROSS_COMPILE ?=
ifneq ($(CROSS_COMPILE),)
CC	:= $(CROSS_COMPILE)gcc
endif
SYSROOT ?=
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
PKG_CONFIG := pkg-config
ifneq ($(SYSROOT),)
SYSROOT_ABS := $(abspath $(SYSROOT))
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT_ABS) \
	      PKG_CONFIG_LIBDIR=$(SYSROOT_ABS)/usr/lib/$(MULTIARCH)/pkgconfig pkg-config
LDFLAGS += -Wl,-rpath-link,$(SYSROOT_ABS)/usr/lib/$(MULTIARCH):$(SYSROOT_ABS)/lib/$(MULTIARCH)
endif

# The BPF object's byte order is that of the machine the command is built for: bpfeb for a
# big-endian target (ath79's MIPS, s390x), bpfel otherwise. `-target bpf` would take the
# build machine's, wrong when cross-building for a big-endian router.
TARGET_ENDIAN := $(shell $(CC) -dM -E - </dev/null 2>/dev/null | \
		   awk '$$2 == "__BYTE_ORDER__" { print $$3 }')
BPF_TARGET ?= bpf$(if $(filter __ORDER_BIG_ENDIAN__,$(TARGET_ENDIAN)),eb,el)
# bpftool's byte order: that of the machine that builds.
BUILD_ENDIAN := $(shell $(CLANG) -dM -E -x c /dev/null 2>/dev/null | \
		  awk '$$2 == "__BYTE_ORDER__" { print $$3 }')
BUILD_BPF_TARGET := bpf$(if $(filter __ORDER_BIG_ENDIAN__,$(BUILD_ENDIAN)),eb,el)

# The BPF object: -O2 -g for BTF (named fields in bpftool), warnings are errors. Its
# includes (asm/types.h) are the build machine's: the BPF target has no multiarch of its own.
BPF_MULTIARCH := $(shell $(CLANG) -print-multiarch 2>/dev/null)
BPF_CFLAGS := -target $(BPF_TARGET) -O2 -g -Wall -Werror \
	      -Iinclude -Ibpf $(if $(BPF_MULTIARCH),-I/usr/include/$(BPF_MULTIARCH))

CFLAGS	?= -O2 -g
CFLAGS	+= $(EXTRA_CFLAGS) -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	   -Iinclude -I$(BUILD) -Iloader -D_GNU_SOURCE
PKGS	:= libbpf libmnl libnetfilter_conntrack
CFLAGS	+= $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
LDLIBS	+= $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null || \
	     echo -lbpf -lelf -lz -lmnl -lnetfilter_conntrack -lnfnetlink)

BPF_SRC   := bpf/xdp_fastpath.bpf.c
BPF_HDRS  := $(wildcard bpf/*.h bpf/asm/*.h) include/xdp_fastpath.h
BPF_OBJ   := $(BUILD)/xdp_fastpath.bpf.o
SKEL	  := $(BUILD)/xdp_fastpath.skel.h $(BUILD)/probe.skel.h

LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(LOADER_SRCS:loader/%.c=$(BUILD)/loader/%.o)
LOADER_LIB  := $(filter-out $(BUILD)/loader/cli.o,$(LOADER_OBJS))
TEST_SRCS   := $(wildcard tests/*.c)
TEST_OBJS   := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%.o)

BIN	  := $(BUILD)/xdp-fastpath
TEST_BIN  := $(BUILD)/fp-test
UDP_BIN	  := $(BUILD)/fp-udp
TAP_BIN	  := $(BUILD)/fp-tap
BENCH_BIN := $(BUILD)/fp-bench

.PHONY: all test test-kernels cross bench bench-prog bpf-byte-orders sanitize fuzz install uninstall clean format
all: $(BIN) $(UDP_BIN) $(TAP_BIN) $(BUILD)/xdp_pass.bpf.o

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Both byte orders of the datapath and the probes compile: the big-endian ones are what
# ath79's routers load. Compiled and checked for their byte order here; running them needs a
# big-endian kernel.
bpf-byte-orders: $(foreach o,bpfel bpfeb,$(BUILD)/$(o)/xdp_fastpath.bpf.o $(BUILD)/$(o)/probe.bpf.o)

# What the 32-bit JITs of routers' kernels cannot take, in either byte order's object: a
# division (32-bit ARM's JIT compiles none before Linux 6.7, and the program would run in
# the interpreter there), and a 64-bit == or != with a negative constant (32-bit MIPS's JIT,
# 5.16 on, compiles it wrongly: README, "Architectures").
define check_32bit_jits
	@if $(LLVM_OBJDUMP) -d $@ | grep -E ' s?[/%]= '; then \
		echo "$@: a division, which 32-bit ARM's JIT cannot compile" >&2; rm $@; exit 1; fi
	@if $(LLVM_OBJDUMP) -d $@ | grep -E 'if r[0-9]+ [!=]= -[0-9]'; then \
		echo "$@: a 64-bit == or != with a negative constant, which 32-bit MIPS's JIT" \
			"compiles wrongly (compare 32 bits, or with a register)" >&2; rm $@; exit 1; fi
endef

$(BUILD)/bpfel/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -target bpfel $(filter-out -target $(BPF_TARGET),$(BPF_CFLAGS)) -c $< -o $@
	readelf -h $@ | grep -q 'little endian'
	$(check_32bit_jits)

$(BUILD)/bpfeb/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -target bpfeb $(filter-out -target $(BPF_TARGET),$(BPF_CFLAGS)) -c $< -o $@
	readelf -h $@ | grep -q 'big endian'
	$(check_32bit_jits)

# Kept after the build: make would delete them as intermediates, and every later make would
# then rebuild the skeletons and everything that includes them.
.SECONDARY: $(SKEL) $(SKEL:.skel.h=.bpf.o)

ifeq ($(BPF_TARGET),$(BUILD_BPF_TARGET))
$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $* > $@.tmp && mv $@.tmp $@
else
# The other byte order than bpftool's (a big-endian router built on x86): see the script.
$(BUILD)/%.skel.h: $(BUILD)/$(BUILD_BPF_TARGET)/%.bpf.o $(BUILD)/%.bpf.o scripts/skel-embed.sh
	BPFTOOL=$(BPFTOOL) scripts/skel-embed.sh $* $< $(word 2,$^) > $@.tmp && mv $@.tmp $@
endif

$(BUILD)/loader/%.o: loader/%.c $(SKEL) include/xdp_fastpath.h $(wildcard loader/*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c $(SKEL) include/xdp_fastpath.h \
		$(wildcard tests/*.h tests/bench/*.h loader/*.h) | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -c $< -o $@

$(BIN): $(LOADER_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(TEST_BIN): $(TEST_OBJS) $(LOADER_LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(UDP_BIN): tests/e2e/fp_udp.c tests/e2e/payload.h | $(BUILD)
	$(CC) $(CFLAGS) $< -o $@

# It frames and checks its datagrams with fp-test's packet helpers.
$(TAP_BIN): tests/e2e/fp_tap.c tests/packet.c tests/packet.h tests/e2e/payload.h | $(BUILD)
	$(CC) $(CFLAGS) -Itests $(filter %.c,$^) -o $@

# The e2e testbed's endpoints, on kernels before 5.13 (see the source).
$(BUILD)/xdp_pass.bpf.o: tests/e2e/xdp_pass.bpf.c | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench.bpf.o: tests/bench/bench.bpf.c tests/bench/bench.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -Itests/bench -c $< -o $@

$(BUILD)/bench.skel.h: $(BUILD)/bench.bpf.o
	$(BPFTOOL) gen skeleton $< name bench > $@.tmp && mv $@.tmp $@

$(BUILD)/chase.bpf.o: tests/bench/chase.bpf.c tests/bench/chase.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -Itests/bench -c $< -o $@

$(BUILD)/chase.skel.h: $(BUILD)/chase.bpf.o
	$(BPFTOOL) gen skeleton $< name chase > $@.tmp && mv $@.tmp $@

$(BENCH_BIN): tests/bench/fp_bench.c tests/bench/bench.h tests/bench/chase.h $(BUILD)/bench.skel.h \
	      $(BUILD)/chase.skel.h
	$(CC) $(CFLAGS) $(LDFLAGS) -Itests/bench $< -o $@ $(LDLIBS)

# The command and the unit tests built with ASan and UBSan (make test runs them too).
SAN_DIR	  := $(BUILD)/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_BIN	  := $(SAN_DIR)/xdp-fastpath $(SAN_DIR)/fp-test

sanitize: # a build of its own, in $(SAN_DIR)
	$(MAKE) --no-print-directory BUILD=$(SAN_DIR) EXTRA_CFLAGS="$(SAN_FLAGS)" $(SAN_BIN)

# Fuzz targets (clang, libFuzzer, ASan+UBSan): tests/fuzz/run.sh runs them.
FUZZ_DIR    := $(BUILD)/fuzz
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	       -Iinclude -Iloader -Itests/fuzz -D_GNU_SOURCE \
	       -fsanitize=address,undefined -fno-sanitize-recover=all $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# The sync's requests and the route lookup's replies go through these (see the targets).
FUZZ_WRAP   := -Wl,--wrap=mnl_socket_sendto,--wrap=mnl_socket_recvfrom
FUZZ_BIN    := $(addprefix $(FUZZ_DIR)/,fuzz-ctnetlink fuzz-rtnetlink fuzz-cli fp-fuzz-seeds)

$(FUZZ_DIR)/%.o: loader/%.c include/xdp_fastpath.h $(wildcard loader/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/%.o: tests/fuzz/%.c tests/fuzz/fuzz.h include/xdp_fastpath.h $(wildcard loader/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz-ctnetlink: $(addprefix $(FUZZ_DIR)/,fuzz_ctnetlink.o fake_instance.o \
			      fuzz_util.o conntrack_sync.o ct_request.o ctnetlink.o conntable.o flowmap.o slottable.o \
			      offload_policy.o ipsec_watch.o ports.o qdisc.o topology.o veth_peer.o \
			      xdp_features.o util.o)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_WRAP) $^ -o $@ $(LDLIBS)

$(FUZZ_DIR)/fuzz-rtnetlink: $(addprefix $(FUZZ_DIR)/,fuzz_rtnetlink.o fuzz_util.o route_watch.o \
			      topology.o veth_peer.o xdp_features.o util.o)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_WRAP) $^ -o $@ $(LDLIBS)

$(FUZZ_DIR)/fuzz-cli: $(addprefix $(FUZZ_DIR)/,fuzz_cli.o fuzz_util.o options.o util.o)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS)

# The command line's target over given inputs, without libFuzzer: for the cross builds,
# whose machines have no libFuzzer here (tests/cross/run.sh runs it under qemu-user).
$(BUILD)/fuzz-cli-replay: tests/fuzz/replay.c tests/fuzz/fuzz_cli.c tests/fuzz/fuzz_util.c \
			  loader/options.c loader/util.c tests/fuzz/fuzz.h $(wildcard loader/*.h)
	$(CC) $(CFLAGS) -Itests/fuzz $(LDFLAGS) $(filter %.c,$^) -o $@ $(LDLIBS)

$(FUZZ_DIR)/fp-fuzz-seeds: tests/fuzz/make_seeds.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LDLIBS)

fuzz: $(FUZZ_BIN)

$(BUILD):
	mkdir -p $@

test: $(BIN) $(TEST_BIN) $(UDP_BIN) $(TAP_BIN) $(BENCH_BIN) $(BUILD)/xdp_pass.bpf.o sanitize fuzz bpf-byte-orders
	tests/run-all.sh

# fp-test on the 5.10, 5.15, 6.1 and 6.12 kernels in qemu, and the end-to-end tests of
# tests/vm/matrix.sh's plan (make test runs it too).
test-kernels: $(BIN) $(TEST_BIN) $(UDP_BIN) $(BUILD)/xdp_pass.bpf.o
	tests/vm/matrix.sh

# The command and fp-test cross-built for arm64, armhf, mipsel and s390x (build/ARCH), and
# what of them runs under qemu-user (make test runs it too; fp-test of s390x, armhf and
# mipsel runs in test-kernels).
cross:
	tests/cross/run.sh

# The full benchmark (root, several minutes): kernel NAT vs xdp-fastpath vs the XDP ceiling.
bench: all $(BENCH_BIN) $(TEST_BIN)
	tests/bench/run.sh

bench-prog: $(TEST_BIN) $(BUILD)/bench.bpf.o
	$(TEST_BIN) --bench $(BUILD)/bench.bpf.o

install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/xdp-fastpath
	install -D -m 0644 docs/xdp-fastpath.8 $(DESTDIR)$(MANDIR)/man8/xdp-fastpath.8
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|/usr/local/sbin|$(BINDIR)|g' scripts/systemd/xdp-fastpath.service \
		>$(DESTDIR)$(UNITDIR)/xdp-fastpath.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xdp-fastpath $(DESTDIR)$(MANDIR)/man8/xdp-fastpath.8 \
		$(DESTDIR)$(UNITDIR)/xdp-fastpath.service

format:
	clang-format -i $(wildcard bpf/*.bpf.c) $(BPF_HDRS) $(LOADER_SRCS) $(wildcard loader/*.h) \
		$(TEST_SRCS) $(wildcard tests/*.h tests/fuzz/*.c tests/fuzz/*.h)

clean:
	rm -rf $(BUILD)
