//go:build amd64 && !purego

#include "textflag.h"

// Philox4x32-10 on 8 counters at a time, AVX2. Each counter word lives in a
// 64-bit lane: VPMULUDQ multiplies the low 32 bits of each lane into the full
// 64-bit product, so the product's low half is the round's lo word and a
// 32-bit right shift gives the hi word. The upper half of a lane may hold
// garbage (a product's hi word, n_hi): VPMULUDQ never reads it, XOR keeps the
// halves apart, and the final packing takes only the low halves.
//
// Registers X (Y0-Y5, counters Y12/Y14) and Y (Y6-Y11, counters Y13/Y15) hold
// 4 counters each. A round maps (c0, c1, c2, c3) to
// (hi(B·c2)^c1^k0, lo(B·c2), hi(A·c0)^c3^k1, lo(A·c0)); instead of moving the
// lo words back, the names of c1, c3 and the two scratch registers rotate with
// period 4 through the unrolled rounds.
//
// laneState offsets (simd_amd64.go): n 0, b 128, stepN 256, stepB 288,
// nbm1 320, nb 352, keys 384 + 64·round (k0), +32 (k1).

DATA mulA<>+0x00(SB)/8, $0xD2511F53
DATA mulA<>+0x08(SB)/8, $0xD2511F53
DATA mulA<>+0x10(SB)/8, $0xD2511F53
DATA mulA<>+0x18(SB)/8, $0xD2511F53
GLOBL mulA<>(SB), RODATA|NOPTR, $32

DATA mulB<>+0x00(SB)/8, $0xCD9E8D57
DATA mulB<>+0x08(SB)/8, $0xCD9E8D57
DATA mulB<>+0x10(SB)/8, $0xCD9E8D57
DATA mulB<>+0x18(SB)/8, $0xCD9E8D57
GLOBL mulB<>(SB), RODATA|NOPTR, $32

// ROUND is rounds 1..9 of one register set; t1 and t2 are free on entry and
// hold lo(A·c0) and lo(B·c2), the next c3 and c1, on exit.
#define ROUND(c0, c1, c2, c3, t1, t2, key) \
	VPMULUDQ mulA<>(SB), c0, t1; \
	VPMULUDQ mulB<>(SB), c2, t2; \
	VPSRLQ   $32, t2, c0;        \
	VPXOR    c1, c0, c0;         \
	VPXOR    key(SI), c0, c0;    \
	VPSRLQ   $32, t1, c2;        \
	VPXOR    c3, c2, c2;         \
	VPXOR    key+32(SI), c2, c2

#define ROUND2(x1, x3, xt1, xt2, y1, y3, yt1, yt2, key) \
	ROUND(Y0, x1, Y2, x3, xt1, xt2, key); \
	ROUND(Y6, y1, Y8, y3, yt1, yt2, key)

// ROUND0 starts from c0 = n (its upper half n_hi is garbage here), c1 = n_hi,
// c2 = b, c3 = 0; it leaves c1 in t2 = Y5/Y11 and c3 in t1 = Y4/Y10.
#define ROUND0(n, b, c0, tmp, c2, t1, t2) \
	VPMULUDQ mulA<>(SB), n, t1; \
	VPMULUDQ mulB<>(SB), b, t2; \
	VPSRLQ   $32, t2, c0;       \
	VPSRLQ   $32, n, tmp;       \
	VPXOR    tmp, c0, c0;       \
	VPXOR    384(SI), c0, c0;   \
	VPSRLQ   $32, t1, c2;       \
	VPXOR    416(SI), c2, c2

// ADVANCE moves one register's counters on by a group of 8 slots:
// b += stepB, n += stepN, and one carry from b into n when b reaches nb.
#define ADVANCE(n, b, m, t) \
	VPADDQ   288(SI), b, b; \
	VPADDQ   256(SI), n, n; \
	VPCMPGTQ 320(SI), b, m; \
	VPAND    352(SI), m, t; \
	VPSUBQ   t, b, b;       \
	VPSUBQ   m, n, n

// func philoxAVX2(words *uint32, groups int, st *laneState)
TEXT ·philoxAVX2(SB), NOSPLIT, $0-24
	MOVQ words+0(FP), DI
	MOVQ groups+8(FP), CX
	MOVQ st+16(FP), SI
	VMOVDQU 0(SI), Y12
	VMOVDQU 32(SI), Y13
	VMOVDQU 128(SI), Y14
	VMOVDQU 160(SI), Y15

loop:
	ROUND0(Y12, Y14, Y0, Y1, Y2, Y4, Y5)
	ROUND0(Y13, Y15, Y6, Y7, Y8, Y10, Y11)
	ADVANCE(Y12, Y14, Y1, Y3)
	ADVANCE(Y13, Y15, Y7, Y9)

	// (c1, c3, free, free) rotate (Y5, Y4, Y1, Y3) → (Y3, Y1, Y5, Y4) →
	// (Y4, Y5, Y3, Y1) → (Y1, Y3, Y4, Y5) → (Y5, Y4, Y1, Y3); Y7.. likewise.
	ROUND2(Y5, Y4, Y1, Y3, Y11, Y10, Y7, Y9, 448)
	ROUND2(Y3, Y1, Y5, Y4, Y9, Y7, Y11, Y10, 512)
	ROUND2(Y4, Y5, Y3, Y1, Y10, Y11, Y9, Y7, 576)
	ROUND2(Y1, Y3, Y4, Y5, Y7, Y9, Y10, Y11, 640)
	ROUND2(Y5, Y4, Y1, Y3, Y11, Y10, Y7, Y9, 704)
	ROUND2(Y3, Y1, Y5, Y4, Y9, Y7, Y11, Y10, 768)
	ROUND2(Y4, Y5, Y3, Y1, Y10, Y11, Y9, Y7, 832)
	ROUND2(Y1, Y3, Y4, Y5, Y7, Y9, Y10, Y11, 896)
	ROUND2(Y5, Y4, Y1, Y3, Y11, Y10, Y7, Y9, 960)

	// Now c0 = Y0/Y6, c1 = Y3/Y9, c2 = Y2/Y8, c3 = Y1/Y7. Pack the low
	// halves: per 128-bit chunk, X's two lanes then Y's two.
	VSHUFPS $0x88, Y6, Y0, Y0
	VSHUFPS $0x88, Y9, Y3, Y3
	VSHUFPS $0x88, Y8, Y2, Y2
	VSHUFPS $0x88, Y7, Y1, Y1
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y3, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y1, 96(DI)
	ADDQ    $128, DI
	DECQ    CX
	JNZ     loop

	VMOVDQU Y12, 0(SI)
	VMOVDQU Y13, 32(SI)
	VMOVDQU Y14, 128(SI)
	VMOVDQU Y15, 160(SI)
	VZEROUPPER
	RET
