//go:build amd64 && !purego

#include "textflag.h"

// Pair on 16 word pairs at a time, AVX-512F: the operations of
// normals_avx2_amd64.s (whose header argues why each step matches the scalar
// code bit for bit) on ZMM registers, constants broadcast from 4-byte values,
// the fold and the quadrant swap as mask registers, VPTERNLOGD for the
// AND/OR and XOR/AND pairs. No FMA.
//
// The two pair sets of a group (w0, w1 and w2, w3) use separate registers
// (Z0-Z23, K1-K4) and their stages are interleaved, so the out-of-order core
// has independent work beside each long dependency chain. Constants: Z24 =
// 0x3fe, Z25 = 1, Z26 = 0xfffffe, Z27 = 1.0, Z28 = sign bit.

#define C4(name, v) DATA name<>+0(SB)/4, v; GLOBL name<>(SB), RODATA|NOPTR, $4

C4(f1024, $0x44800000)
C4(low3fe, $0x3fe)
C4(one, $1)
C4(expMask, $0x7f800000)
C4(foldMant, $0x3504f4)
C4(expOne, $0x00800000)
C4(bias160, $160)
C4(log0, $0x3e3a2e8c)
C4(log1, $0x3e638e39)
C4(log2, $0x3e924925)
C4(log3, $0x3ecccccd)
C4(log4, $0x3f2aaaab)
C4(log5, $0x40000000)
C4(ln2Hi, $0x3f317200)
C4(ln2Lo, $0x35bfbe8e)
C4(minus2, $0xc0000000)
C4(angleMask, $0xfffffe)
C4(twoM24, $0x33800000)
C4(f1, $0x3f800000)
C4(sin0, $0x33747a1a)
C4(sin1, $0xb67183a8)
C4(sin2, $0x39283c1a)
C4(sin3, $0xbb996966)
C4(sin4, $0x3da335e3)
C4(sin5, $0xbf255de7)
C4(sin6, $0x3fc90fdb)
C4(signBit, $0x80000000)
C4(bit30, $0x40000000)

// VPTERNLOGD immediates for (x & y) | z, (x ^ y) & z and x ^ (y & z), where
// x is the destination operand, y the middle and z the first.
#define AND_OR $0xea
#define XOR_AND $0x28
#define XOR_ANDC $0x78

// RADIUS_S is the radius up to s = d/D (in t4) and k = e'−33 (in t3); K1 is
// scratch. RADIUS_R finishes it into r. Between the two the division runs.
#define RADIUS_S(r, t1, t2, t3, t4, K) \
	VPSRLD          $9, r, t1;                 \
	VCVTDQ2PS       t1, t1;                    \
	VMULPS.BCST     f1024<>(SB), t1, t1;       \
	VPADDD          r, r, t2;                  \
	VPTERNLOGD      AND_OR, Z25, Z24, t2;      \
	VCVTDQ2PS       t2, t2;                    \
	VMAXPS          t2, t1, t3;                \
	VPANDD.BCST     expMask<>(SB), t3, t3;     \
	VPORD.BCST      foldMant<>(SB), t3, t4;    \
	VSUBPS          t4, t1, t4;                \
	VADDPS          t2, t4, t4;                \
	VPTESTNMD       Z28, t4, K;                \
	VPADDD.BCST     expOne<>(SB), t3, K, t3;   \
	VSUBPS          t3, t1, t4;                \
	VADDPS          t3, t1, t1;                \
	VADDPS          t2, t4, t4;                \
	VADDPS          t2, t1, t1;                \
	VDIVPS          t1, t4, t4;                \
	VPSRLD          $23, t3, t3;               \
	VPSUBD.BCST     bias160<>(SB), t3, t3;     \
	VCVTDQ2PS       t3, t3

#define RADIUS_R(r, t1, t2, t3, t4) \
	VMULPS          t4, t4, t2;                \
	VMULPS.BCST     log0<>(SB), t2, t1;        \
	VADDPS.BCST     log1<>(SB), t1, t1;        \
	VMULPS          t2, t1, t1;                \
	VADDPS.BCST     log2<>(SB), t1, t1;        \
	VMULPS          t2, t1, t1;                \
	VADDPS.BCST     log3<>(SB), t1, t1;        \
	VMULPS          t2, t1, t1;                \
	VADDPS.BCST     log4<>(SB), t1, t1;        \
	VMULPS          t2, t1, t1;                \
	VADDPS.BCST     log5<>(SB), t1, t1;        \
	VMULPS          t4, t1, t1;                \
	VMULPS.BCST     ln2Lo<>(SB), t3, t2;       \
	VADDPS          t1, t2, t2;                \
	VMULPS.BCST     ln2Hi<>(SB), t3, t3;       \
	VADDPS          t2, t3, t3;                \
	VMULPS.BCST     minus2<>(SB), t3, t3;      \
	VSQRTPS         t3, r

#define SINSTEP(c, ps, v2, pc, w2) \
	VMULPS      v2, ps, ps;      \
	VMULPS      w2, pc, pc;      \
	VADDPS.BCST c<>(SB), ps, ps; \
	VADDPS.BCST c<>(SB), pc, pc

// ANGLE_SC leaves the rotated cos and sin (without their signs) in t1, t2 and
// the cos sign in t3; ANGLE_Z multiplies by R and applies the signs, z0 into R
// and z1 into rb.
#define ANGLE_SC(rb, t1, t2, t3, t4, t5, t6, K) \
	VPSRLD      $6, rb, t1;              \
	VPTERNLOGD  AND_OR, Z25, Z26, t1;    \
	VCVTDQ2PS   t1, t1;                  \
	VMULPS.BCST twoM24<>(SB), t1, t1;    \
	VSUBPS      t1, Z27, t2;             \
	VMULPS      t1, t1, t3;              \
	VMULPS      t2, t2, t4;              \
	VMULPS.BCST sin0<>(SB), t3, t5;      \
	VMULPS.BCST sin0<>(SB), t4, t6;      \
	VADDPS.BCST sin1<>(SB), t5, t5;      \
	VADDPS.BCST sin1<>(SB), t6, t6;      \
	SINSTEP(sin2, t5, t3, t6, t4);       \
	SINSTEP(sin3, t5, t3, t6, t4);       \
	SINSTEP(sin4, t5, t3, t6, t4);       \
	SINSTEP(sin5, t5, t3, t6, t4);       \
	SINSTEP(sin6, t5, t3, t6, t4);       \
	VMULPS      t1, t5, t5;              \
	VMULPS      t2, t6, t6;              \
	VPTESTMD.BCST bit30<>(SB), rb, K;    \
	VBLENDMPS   t5, t6, K, t1;           \
	VBLENDMPS   t6, t5, K, t2;           \
	VPSLLD      $1, rb, t3;              \
	VPTERNLOGD  XOR_AND, Z28, rb, t3

#define ANGLE_Z(rb, R, t1, t2, t3) \
	VMULPS      t1, R, t1;               \
	VMULPS      t2, R, t2;               \
	VPXORD      t3, t1, R;               \
	VPTERNLOGD  XOR_ANDC, Z28, rb, t2

// func normalsAVX512(dst *float32, words *uint32, groups int)
//
// A group is four vectors of 16 words (slot order laneSlot) in, 64 normals out.
TEXT ·normalsAVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         words+8(FP), SI
	MOVQ         groups+16(FP), CX
	VPBROADCASTD low3fe<>(SB), Z24
	VPBROADCASTD one<>(SB), Z25
	VPBROADCASTD angleMask<>(SB), Z26
	VPBROADCASTD f1<>(SB), Z27
	VPBROADCASTD signBit<>(SB), Z28

loop:
	VMOVDQU32 0(SI), Z0
	VMOVDQU32 64(SI), Z1
	VMOVDQU32 128(SI), Z8
	VMOVDQU32 192(SI), Z9
	RADIUS_S(Z0, Z2, Z3, Z4, Z5, K1)
	RADIUS_S(Z8, Z10, Z11, Z12, Z13, K2)
	ANGLE_SC(Z1, Z16, Z17, Z18, Z19, Z20, Z21, K3)
	RADIUS_R(Z0, Z2, Z3, Z4, Z5)
	ANGLE_SC(Z9, Z6, Z7, Z14, Z15, Z22, Z23, K4)
	RADIUS_R(Z8, Z10, Z11, Z12, Z13)
	ANGLE_Z(Z1, Z0, Z16, Z17, Z18)
	ANGLE_Z(Z9, Z8, Z6, Z7, Z14)

	// z0..z3 = Z0, Z17, Z8, Z7. In-chunk 4×4 transpose: chunk c of row p
	// is slot 4p+c.
	VUNPCKLPS Z17, Z0, Z2
	VUNPCKLPS Z7, Z8, Z3
	VUNPCKHPS Z17, Z0, Z4
	VUNPCKHPS Z7, Z8, Z5
	VUNPCKLPD Z3, Z2, Z0
	VUNPCKHPD Z3, Z2, Z1
	VUNPCKLPD Z5, Z4, Z8
	VUNPCKHPD Z5, Z4, Z9
	VMOVUPS   Z0, 0(DI)
	VMOVUPS   Z1, 64(DI)
	VMOVUPS   Z8, 128(DI)
	VMOVUPS   Z9, 192(DI)
	ADDQ      $256, SI
	ADDQ      $256, DI
	DECQ      CX
	JNZ       loop
	VZEROUPPER
	RET
