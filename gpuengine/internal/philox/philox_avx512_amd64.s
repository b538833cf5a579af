//go:build amd64 && !purego

#include "textflag.h"

// Philox4x32-10 on 16 counters at a time, AVX-512F: the AVX2 routine
// (philox_avx2_amd64.s, which explains the 64-bit-lane layout and the register
// rotation) on ZMM registers, with VPTERNLOGQ for the three-way XORs, round keys
// broadcast from laneState, and mask registers for the counter carry.
//
// Registers: X = Z0-Z5, Y = Z6-Z11, counters n/b in Z12/Z14 (X) and Z13/Z15 (Y),
// multipliers Z16/Z17, stepN Z18, stepB Z19, nb−1 Z20, nb Z21, 1 in Z22.
// laneState offsets: n 0 (X lanes 0-7, Y lanes 8-15), b 128, stepN 256,
// stepB 288, nbm1 320, nb 352, keys 384 + 64·round (k0), +32 (k1).

DATA mulA512<>+0(SB)/8, $0xD2511F53
GLOBL mulA512<>(SB), RODATA|NOPTR, $8
DATA mulB512<>+0(SB)/8, $0xCD9E8D57
GLOBL mulB512<>(SB), RODATA|NOPTR, $8
DATA one64<>+0(SB)/8, $1
GLOBL one64<>(SB), RODATA|NOPTR, $8

#define ROUND(c0, c1, c2, c3, t1, t2, key) \
	VPMULUDQ        Z16, c0, t1;              \
	VPMULUDQ        Z17, c2, t2;              \
	VPSRLQ          $32, t2, c0;              \
	VPTERNLOGQ.BCST $0x96, key(SI), c1, c0;   \
	VPSRLQ          $32, t1, c2;              \
	VPTERNLOGQ.BCST $0x96, key+32(SI), c3, c2

#define ROUND2(x1, x3, xt1, xt2, y1, y3, yt1, yt2, key) \
	ROUND(Z0, x1, Z2, x3, xt1, xt2, key); \
	ROUND(Z6, y1, Z8, y3, yt1, yt2, key)

// ROUND0: c0 = n, c1 = n_hi, c2 = b, c3 = 0; leaves c1 in t2, c3 in t1.
#define ROUND0(n, b, c0, tmp, c2, t1, t2) \
	VPMULUDQ        Z16, n, t1;             \
	VPMULUDQ        Z17, b, t2;             \
	VPSRLQ          $32, t2, c0;            \
	VPSRLQ          $32, n, tmp;            \
	VPTERNLOGQ.BCST $0x96, 384(SI), tmp, c0; \
	VPSRLQ          $32, t1, c2;            \
	VPXORQ.BCST     416(SI), c2, c2

#define ADVANCE(n, b) \
	VPADDQ  Z19, b, b;         \
	VPADDQ  Z18, n, n;         \
	VPCMPUQ $6, Z20, b, K1;    \
	VPSUBQ  Z21, b, K1, b;     \
	VPADDQ  Z22, n, K1, n

// func philoxAVX512(words *uint32, groups int, st *laneState)
TEXT ·philoxAVX512(SB), NOSPLIT, $0-24
	MOVQ words+0(FP), DI
	MOVQ groups+8(FP), CX
	MOVQ st+16(FP), SI
	VMOVDQU64    0(SI), Z12
	VMOVDQU64    64(SI), Z13
	VMOVDQU64    128(SI), Z14
	VMOVDQU64    192(SI), Z15
	VPBROADCASTQ mulA512<>(SB), Z16
	VPBROADCASTQ mulB512<>(SB), Z17
	VPBROADCASTQ 256(SI), Z18
	VPBROADCASTQ 288(SI), Z19
	VPBROADCASTQ 320(SI), Z20
	VPBROADCASTQ 352(SI), Z21
	VPBROADCASTQ one64<>(SB), Z22

loop:
	ROUND0(Z12, Z14, Z0, Z1, Z2, Z4, Z5)
	ROUND0(Z13, Z15, Z6, Z7, Z8, Z10, Z11)
	ADVANCE(Z12, Z14)
	ADVANCE(Z13, Z15)
	ROUND2(Z5, Z4, Z1, Z3, Z11, Z10, Z7, Z9, 448)
	ROUND2(Z3, Z1, Z5, Z4, Z9, Z7, Z11, Z10, 512)
	ROUND2(Z4, Z5, Z3, Z1, Z10, Z11, Z9, Z7, 576)
	ROUND2(Z1, Z3, Z4, Z5, Z7, Z9, Z10, Z11, 640)
	ROUND2(Z5, Z4, Z1, Z3, Z11, Z10, Z7, Z9, 704)
	ROUND2(Z3, Z1, Z5, Z4, Z9, Z7, Z11, Z10, 768)
	ROUND2(Z4, Z5, Z3, Z1, Z10, Z11, Z9, Z7, 832)
	ROUND2(Z1, Z3, Z4, Z5, Z7, Z9, Z10, Z11, 896)
	ROUND2(Z5, Z4, Z1, Z3, Z11, Z10, Z7, Z9, 960)

	// c0 = Z0/Z6, c1 = Z3/Z9, c2 = Z2/Z8, c3 = Z1/Z7.
	VSHUFPS   $0x88, Z6, Z0, Z0
	VSHUFPS   $0x88, Z9, Z3, Z3
	VSHUFPS   $0x88, Z8, Z2, Z2
	VSHUFPS   $0x88, Z7, Z1, Z1
	VMOVDQU32 Z0, 0(DI)
	VMOVDQU32 Z3, 64(DI)
	VMOVDQU32 Z2, 128(DI)
	VMOVDQU32 Z1, 192(DI)
	ADDQ      $256, DI
	DECQ      CX
	JNZ       loop

	VMOVDQU64 Z12, 0(SI)
	VMOVDQU64 Z13, 64(SI)
	VMOVDQU64 Z14, 128(SI)
	VMOVDQU64 Z15, 192(SI)
	VZEROUPPER
	RET
