//go:build amd64 && !purego

#include "textflag.h"

// Column statistics, AVX2: sums[j] += float64(x[r][j]) (or its square) for
// r = 0..rows-1 in order, for columns [0, cols). Lanes run across columns, so
// each lane adds its column's rows in the scalar order. A block of 32 columns
// keeps 8 accumulators of 4 float64 in Y0-Y7 while it walks all rows; blocks of
// 4 columns finish. The square is VMULPD then VADDPD: the product of two
// float32 values is exact, and keeping the add separate keeps it one rounding.
//
// Registers: DI sums at the block, SI x at the block, CX rows, R8 row stride in
// bytes, R11 columns left, R12 x pointer (walks rows), AX row count.

#define PROLOGUE \
	MOVQ sums+0(FP), DI;   \
	MOVQ x+8(FP), SI;      \
	MOVQ rows+16(FP), CX;  \
	MOVQ width+24(FP), R8; \
	SHLQ $2, R8;           \
	MOVQ cols+32(FP), R11

#define LOAD8 \
	VMOVUPD (DI), Y0; VMOVUPD 32(DI), Y1; VMOVUPD 64(DI), Y2; VMOVUPD 96(DI), Y3; \
	VMOVUPD 128(DI), Y4; VMOVUPD 160(DI), Y5; VMOVUPD 192(DI), Y6; VMOVUPD 224(DI), Y7

#define STORE8 \
	VMOVUPD Y0, (DI); VMOVUPD Y1, 32(DI); VMOVUPD Y2, 64(DI); VMOVUPD Y3, 96(DI); \
	VMOVUPD Y4, 128(DI); VMOVUPD Y5, 160(DI); VMOVUPD Y6, 192(DI); VMOVUPD Y7, 224(DI)

#define SUM(off, t, acc) \
	VCVTPS2PD off(R12), t; \
	VADDPD    t, acc, acc

#define SQUARE(off, t, acc) \
	VCVTPS2PD off(R12), t; \
	VMULPD    t, t, t;     \
	VADDPD    t, acc, acc

#define NEXT_ROW(label) \
	ADDQ R8, R12; \
	DECQ AX;      \
	JNZ  label

// func columnSumsAVX2(sums *float64, x *float32, rows, width, cols int)
TEXT ·columnSumsAVX2(SB), NOSPLIT, $0-40
	PROLOGUE

sumCol32:
	CMPQ R11, $32
	JLT  sumCol4
	LOAD8
	MOVQ SI, R12
	MOVQ CX, AX

sumLoop32:
	SUM(0, Y8, Y0)
	SUM(16, Y9, Y1)
	SUM(32, Y10, Y2)
	SUM(48, Y11, Y3)
	SUM(64, Y12, Y4)
	SUM(80, Y13, Y5)
	SUM(96, Y14, Y6)
	SUM(112, Y15, Y7)
	NEXT_ROW(sumLoop32)
	STORE8
	ADDQ $256, DI
	ADDQ $128, SI
	SUBQ $32, R11
	JMP  sumCol32

sumCol4:
	TESTQ R11, R11
	JZ    sumDone
	VMOVUPD (DI), Y0
	MOVQ SI, R12
	MOVQ CX, AX

sumLoop4:
	SUM(0, Y8, Y0)
	NEXT_ROW(sumLoop4)
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, SI
	SUBQ $4, R11
	JMP  sumCol4

sumDone:
	VZEROUPPER
	RET

// func columnSquaresAVX2(sums *float64, x *float32, rows, width, cols int)
TEXT ·columnSquaresAVX2(SB), NOSPLIT, $0-40
	PROLOGUE

sqCol32:
	CMPQ R11, $32
	JLT  sqCol4
	LOAD8
	MOVQ SI, R12
	MOVQ CX, AX

sqLoop32:
	SQUARE(0, Y8, Y0)
	SQUARE(16, Y9, Y1)
	SQUARE(32, Y10, Y2)
	SQUARE(48, Y11, Y3)
	SQUARE(64, Y12, Y4)
	SQUARE(80, Y13, Y5)
	SQUARE(96, Y14, Y6)
	SQUARE(112, Y15, Y7)
	NEXT_ROW(sqLoop32)
	STORE8
	ADDQ $256, DI
	ADDQ $128, SI
	SUBQ $32, R11
	JMP  sqCol32

sqCol4:
	TESTQ R11, R11
	JZ    sqDone
	VMOVUPD (DI), Y0
	MOVQ SI, R12
	MOVQ CX, AX

sqLoop4:
	SQUARE(0, Y8, Y0)
	NEXT_ROW(sqLoop4)
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, SI
	SUBQ $4, R11
	JMP  sqCol4

sqDone:
	VZEROUPPER
	RET
