// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the BPF objects the command loads must not contain, whatever the compiler chose:
 * instructions that a JIT of a kernel routers run compiles wrongly.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "probe.skel.h"
#include "testlib.h"
#include "tests.h"
#include "xdp_fastpath.skel.h"

/*
 * 32-bit MIPS's JIT (Linux 5.16 on, still in 6.1.176 and in OpenWrt's backports) compares
 * the high word of a 64-bit register with a negative constant's sign extension by adding
 * register 1 (the assembler's temporary) where it means the number 1: `if r0 != -22` then
 * depends on whatever that register held. The probe of BPF_FIB_LOOKUP_MARK made such a
 * comparison, and took Linux 6.1 on MIPS for 6.10. A 32-bit comparison (w registers) and a
 * comparison with a register are compiled right.
 */
static bool mips32_jit_miscompiles(const struct bpf_insn *insn)
{
	__u8 op = BPF_OP(insn->code);

	return BPF_CLASS(insn->code) == BPF_JMP && BPF_SRC(insn->code) == BPF_K &&
	       (op == BPF_JEQ || op == BPF_JNE) && insn->imm < 0;
}

static void check_object(struct bpf_object *obj, const char *name)
{
	struct bpf_program *prog;

	CHECK(obj, "%s: cannot open the object", name);
	if (!obj)
		return;
	bpf_object__for_each_program(prog, obj) {
		const struct bpf_insn *insns = bpf_program__insns(prog);
		size_t count = bpf_program__insn_cnt(prog);

		for (size_t i = 0; i < count; i++)
			CHECK(!mips32_jit_miscompiles(&insns[i]),
			      "%s: %s, instruction %zu: a 64-bit == or != with %d, which 32-bit "
			      "MIPS's JIT compiles wrongly (compare 32 bits, or with a register)",
			      name, bpf_program__name(prog), i, insns[i].imm);
	}
}

void test_bpf_objects(void)
{
	struct xdp_fastpath *datapath = xdp_fastpath__open();
	struct probe *probe = probe__open();

	tl_case_begin("no instruction that 32-bit MIPS's JIT compiles wrongly");
	check_object(datapath ? datapath->obj : NULL, "the datapath");
	check_object(probe ? probe->obj : NULL, "the probes");
	tl_case_end();
	xdp_fastpath__destroy(datapath);
	probe__destroy(probe);
}
