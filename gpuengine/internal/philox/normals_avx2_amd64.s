//go:build amd64 && !purego

#include "textflag.h"

// Pair (normal.go) on 8 word pairs at a time, AVX2, with the same binary32
// operations in the same order: every VMULPS/VADDPS/VSUBPS/VDIVPS/VSQRTPS is
// one IEEE operation rounded to nearest even (MXCSR as Go leaves it), and no
// FMA is used. Why the integer-to-float steps match Go's:
//
// radius(r), m = 2r+1 < 2^33. Split m = A + B with A = m with its low 10 bits
// cleared and B = m & 0x3ff; A = float(r>>9)·1024 and B are exact (A has at
// most 23 significant bits).
//   - e = floor(log2 m) is the exponent of max(A, B): if r>>9 ≠ 0 then A ≥ 1024 >
//     B and A keeps m's leading bit, else A = 0 and B = m. So P = 2^e is
//     max(A, B) with its mantissa cleared.
//   - Go folds when top > 0xb504f3, top = the 24 leading bits of m; for an
//     integer m that is m ≥ T = 0xb504f4·2^(e−23), the float with exponent e and
//     mantissa 0x3504f4. A and T, or B and T when A = 0, lie within a factor of
//     2 of each other, so A−T is exact (Sterbenz) and (A−T)+B is m−T rounded
//     once: never zero unless m = T (then +0), and of m−T's sign. So fold ⇔
//     the sign bit of (A−T)+B is clear; folding adds 1 to P's exponent.
//   - With P' = 2^e' the folded power: A−P' and A+P' are multiples of 2^10 below
//     2^34 in magnitude (or A = 0), so exact in 24 bits, and adding B rounds
//     once: float32(m−P') and float32(m+P') rounded to nearest even, which is
//     what Go's float32(int64) and float32(uint64) conversions (CVTSQ2SS, or
//     its correctly rounded uint64 sequence) give for those integers.
//   - k = float32(e'−33) from the exponent field of P'; small integers convert exactly.
// angle: 2a+1 < 2^24 converts exactly; v = (2a+1)·2^-24 and 1−v are exact. The
// quadrant rotation swaps cos/sin when bit 30 is set and negates by XOR of the
// sign bit; R·(−x) = −(R·x) exactly under round-to-nearest-even.

#define C32(name, v) \
	DATA name<>+0x00(SB)/4, v; DATA name<>+0x04(SB)/4, v; \
	DATA name<>+0x08(SB)/4, v; DATA name<>+0x0c(SB)/4, v; \
	DATA name<>+0x10(SB)/4, v; DATA name<>+0x14(SB)/4, v; \
	DATA name<>+0x18(SB)/4, v; DATA name<>+0x1c(SB)/4, v; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

C32(f1024, $0x44800000)
C32(low3fe, $0x3fe)
C32(one, $1)
C32(expMask, $0x7f800000)
C32(foldMant, $0x3504f4)
C32(expOne, $0x00800000)
C32(bias160, $160)
C32(log0, $0x3e3a2e8c)
C32(log1, $0x3e638e39)
C32(log2, $0x3e924925)
C32(log3, $0x3ecccccd)
C32(log4, $0x3f2aaaab)
C32(log5, $0x40000000)
C32(ln2Hi, $0x3f317200)
C32(ln2Lo, $0x35bfbe8e)
C32(minus2, $0xc0000000)
C32(angleMask, $0xfffffe)
C32(twoM24, $0x33800000)
C32(f1, $0x3f800000)
C32(sin0, $0x33747a1a)
C32(sin1, $0xb67183a8)
C32(sin2, $0x39283c1a)
C32(sin3, $0xbb996966)
C32(sin4, $0x3da335e3)
C32(sin5, $0xbf255de7)
C32(sin6, $0x3fc90fdb)
C32(signBit, $0x80000000)

// RADIUS_S computes the radius of the words in r up to s = d/D (left in t4)
// and k = e'−33 (in t3); r, t1 and t2 are free afterwards. RADIUS_R finishes
// it into r. Splitting them lets other work run during the division.
#define RADIUS_S(r, t1, t2, t3, t4) \
	VPSRLD    $9, r, t1;              \
	VCVTDQ2PS t1, t1;                 \
	VMULPS    f1024<>(SB), t1, t1;    /* A */ \
	VPADDD    r, r, t2;               \
	VPAND     low3fe<>(SB), t2, t2;   \
	VPOR      one<>(SB), t2, t2;      \
	VCVTDQ2PS t2, t2;                 /* B */ \
	VMAXPS    t2, t1, t3;             \
	VANDPS    expMask<>(SB), t3, t3;  /* P = 2^e */ \
	VORPS     foldMant<>(SB), t3, t4; /* T */ \
	VSUBPS    t4, t1, t4;             \
	VADDPS    t2, t4, t4;             /* (A−T)+B */ \
	VPSRAD    $31, t4, t4;            \
	VPANDN    expOne<>(SB), t4, t4;   \
	VPADDD    t4, t3, t3;             /* P' = 2^e' */ \
	VSUBPS    t3, t1, t4;             \
	VADDPS    t3, t1, t1;             \
	VADDPS    t2, t4, t4;             /* float32(m−P') */ \
	VADDPS    t2, t1, t1;             /* float32(m+P') */ \
	VDIVPS    t1, t4, t4;             /* s */ \
	VPSRLD    $23, t3, t3;            \
	VPSUBD    bias160<>(SB), t3, t3;  \
	VCVTDQ2PS t3, t3                  /* k = e'−33 */

#define RADIUS_R(r, t1, t2, t3, t4) \
	VMULPS    t4, t4, t2;             /* s² */ \
	VMULPS    log0<>(SB), t2, t1;     \
	VADDPS    log1<>(SB), t1, t1;     \
	VMULPS    t2, t1, t1;             \
	VADDPS    log2<>(SB), t1, t1;     \
	VMULPS    t2, t1, t1;             \
	VADDPS    log3<>(SB), t1, t1;     \
	VMULPS    t2, t1, t1;             \
	VADDPS    log4<>(SB), t1, t1;     \
	VMULPS    t2, t1, t1;             \
	VADDPS    log5<>(SB), t1, t1;     \
	VMULPS    t4, t1, t1;             /* ln f */ \
	VMULPS    ln2Lo<>(SB), t3, t2;    \
	VADDPS    t1, t2, t2;             \
	VMULPS    ln2Hi<>(SB), t3, t3;    \
	VADDPS    t2, t3, t3;             /* ln u */ \
	VMULPS    minus2<>(SB), t3, t3;   \
	VSQRTPS   t3, r

// SINSTEP is one Horner step of both sine polynomials.
#define SINSTEP(c, ps, v2, pc, w2) \
	VMULPS v2, ps, ps;       \
	VMULPS w2, pc, pc;       \
	VADDPS c<>(SB), ps, ps;  \
	VADDPS c<>(SB), pc, pc

// ANGLE_SC computes from rb the cos and sin of the angle, swapped for odd
// quadrants but not yet signed, into t1 and t2, and the cos sign into t3;
// t4-t6 are scratch. ANGLE_Z multiplies them by the radius R and applies the
// signs: z0 into R, z1 into rb.
#define ANGLE_SC(rb, t1, t2, t3, t4, t5, t6) \
	VPSRLD    $6, rb, t1;              \
	VPAND     angleMask<>(SB), t1, t1; \
	VPOR      one<>(SB), t1, t1;       \
	VCVTDQ2PS t1, t1;                  \
	VMULPS    twoM24<>(SB), t1, t1;    /* v */ \
	VMOVUPS   f1<>(SB), t2;            \
	VSUBPS    t1, t2, t2;              /* w = 1−v */ \
	VMULPS    t1, t1, t3;              \
	VMULPS    t2, t2, t4;              \
	VMULPS    sin0<>(SB), t3, t5;      \
	VMULPS    sin0<>(SB), t4, t6;      \
	VADDPS    sin1<>(SB), t5, t5;      \
	VADDPS    sin1<>(SB), t6, t6;      \
	SINSTEP(sin2, t5, t3, t6, t4);     \
	SINSTEP(sin3, t5, t3, t6, t4);     \
	SINSTEP(sin4, t5, t3, t6, t4);     \
	SINSTEP(sin5, t5, t3, t6, t4);     \
	SINSTEP(sin6, t5, t3, t6, t4);     \
	VMULPS    t1, t5, t5;              /* sn = S(v) */ \
	VMULPS    t2, t6, t6;              /* cs = S(1−v) */ \
	VPSLLD    $1, rb, t3;              /* sign bit: quadrant odd */ \
	VBLENDVPS t3, t5, t6, t1;          /* odd ? sn : cs */ \
	VBLENDVPS t3, t6, t5, t2;          /* odd ? cs : sn */ \
	VPXOR     rb, t3, t3;              \
	VPAND     signBit<>(SB), t3, t3    /* cos negated in quadrants 1, 2 */

#define ANGLE_Z(rb, R, t1, t2, t3) \
	VPAND     signBit<>(SB), rb, rb;   /* sin negated in quadrants 2, 3 */ \
	VMULPS    t1, R, t1;               \
	VMULPS    t2, R, t2;               \
	VXORPS    t3, t1, R;               \
	VXORPS    rb, t2, rb

// func normalsAVX2(dst *float32, words *uint32, groups int)
//
// A group is four vectors of 8 words (w0..w3 of 8 slots, slot order
// laneSlot) in, 32 normals (slot after slot) out.
TEXT ·normalsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ words+8(FP), SI
	MOVQ groups+16(FP), CX

loop:
	VMOVDQU  0(SI), Y0
	VMOVDQU  32(SI), Y1
	VMOVDQU  64(SI), Y8
	VMOVDQU  96(SI), Y9
	RADIUS_S(Y0, Y2, Y3, Y4, Y5)
	ANGLE_SC(Y1, Y2, Y3, Y6, Y7, Y10, Y11)
	RADIUS_S(Y8, Y10, Y11, Y12, Y13)
	RADIUS_R(Y0, Y7, Y10, Y4, Y5)
	ANGLE_SC(Y9, Y4, Y5, Y7, Y10, Y11, Y14)
	RADIUS_R(Y8, Y10, Y11, Y12, Y13)
	ANGLE_Z(Y1, Y0, Y2, Y3, Y6)
	ANGLE_Z(Y9, Y8, Y4, Y5, Y7)

	// z0..z3 = Y0, Y1, Y8, Y9; transpose each 128-bit chunk's 4×4 block so
	// that chunk c of row p is slot 2p+c.
	VUNPCKLPS Y1, Y0, Y2
	VUNPCKLPS Y9, Y8, Y3
	VUNPCKHPS Y1, Y0, Y4
	VUNPCKHPS Y9, Y8, Y5
	VUNPCKLPD Y3, Y2, Y0
	VUNPCKHPD Y3, Y2, Y1
	VUNPCKLPD Y5, Y4, Y8
	VUNPCKHPD Y5, Y4, Y9
	VMOVUPS   Y0, 0(DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y8, 64(DI)
	VMOVUPS   Y9, 96(DI)
	ADDQ      $128, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       loop
	VZEROUPPER
	RET
