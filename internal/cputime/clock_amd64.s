//go:build amd64

#include "textflag.h"

// func addChain(loops int) int
//
// loops × 100 additions of DX (= 1) into AX, each waiting for the one
// before: 100 cycles a loop on a core with 1-cycle integer adds. The loop
// counter runs beside the chain. Returns AX, loops × 100.
#define ADD10 \
	ADDQ DX, AX; ADDQ DX, AX; ADDQ DX, AX; ADDQ DX, AX; ADDQ DX, AX; \
	ADDQ DX, AX; ADDQ DX, AX; ADDQ DX, AX; ADDQ DX, AX; ADDQ DX, AX

TEXT ·addChain(SB), NOSPLIT, $0-16
	MOVQ loops+0(FP), CX
	XORQ AX, AX
	MOVQ $1, DX
	TESTQ CX, CX
	JLE  done

loop:
	ADD10; ADD10; ADD10; ADD10; ADD10
	ADD10; ADD10; ADD10; ADD10; ADD10
	DECQ CX
	JNZ  loop

done:
	MOVQ AX, ret+8(FP)
	RET
