//go:build amd64 && !purego

#include "textflag.h"

// Forward kernel, AVX-512F. Same arguments and contract as forward_amd64.s;
// only the blocking differs: a register block is 6 rows × 64 columns (24
// accumulators of 16 lanes), and the columns left over are done 16 at a time
// with a lane mask (the last one partial). Each lane still walks i in order
// with one VFMADD231PS (mode FMA) or VMULPS then VADDPS (mode MulAdd) per step,
// so the results are the bits of the AVX2 and generic code.
//
// Registers: DI dst of the row block, SI src of the row block, CX w row stride
// in bytes, BX row blocks left, R8 src/dst row stride in bytes, R9 3*R8, DX
// 5*R8, R10 column offset in bytes, R11 columns left, R12 src pointer (walks
// i), R13 w pointer (walks rows of w), AX i count. Z0-Z23 accumulators (row r
// uses Z4r..Z4r+3), Z24-Z31 scratch, K1 the lane mask of a 16-column block.

// Row r of the 6-row block at R12 (src while walking i, dst while storing).
#define ROW0 (R12)
#define ROW1 (R12)(R8*1)
#define ROW2 (R12)(R8*2)
#define ROW3 (R12)(R9*1)
#define ROW4 (R12)(R8*4)
#define ROW5 (R12)(DX*1)

#define ZERO4(a, b, c, d) \
	VPXORD a, a, a; VPXORD b, b, b; VPXORD c, c, c; VPXORD d, d, d

#define ZERO_ACC4 \
	ZERO4(Z0, Z1, Z2, Z3); ZERO4(Z4, Z5, Z6, Z7); ZERO4(Z8, Z9, Z10, Z11); \
	ZERO4(Z12, Z13, Z14, Z15); ZERO4(Z16, Z17, Z18, Z19); ZERO4(Z20, Z21, Z22, Z23)

#define ZERO_ACC1 \
	VPXORD Z0, Z0, Z0; VPXORD Z4, Z4, Z4; VPXORD Z8, Z8, Z8; \
	VPXORD Z12, Z12, Z12; VPXORD Z16, Z16, Z16; VPXORD Z20, Z20, Z20

// Start walking i for the column block at R10: R12 = src row 0, R13 = w[0][j], AX = width.
#define BEGIN_I \
	MOVQ SI, R12;          \
	MOVQ w+16(FP), R13;    \
	ADDQ R10, R13;         \
	MOVQ width+24(FP), AX

#define NEXT_I(label) \
	ADDQ $4, R12; \
	ADDQ CX, R13; \
	DECQ AX;      \
	JNZ  label

// relu: VMAXPS with the accumulator as first source returns +0 (Z31) for
// -0, +0 and NaN.
#define RELU(acc) VMAXPS Z31, acc, acc
#define STORE_ROW4(base, a0, a1, a2, a3) \
	RELU(a0); RELU(a1); RELU(a2); RELU(a3); \
	VMOVUPS a0, base; VMOVUPS a1, 64 base; VMOVUPS a2, 128 base; VMOVUPS a3, 192 base
#define STORE_ROWM(base, a0) \
	RELU(a0); VMOVUPS a0, K1, base

#define BEGIN_STORE \
	VPXORD Z31, Z31, Z31; \
	LEAQ   (DI)(R10*1), R12

#define STORE4 \
	BEGIN_STORE;                          \
	STORE_ROW4(ROW0, Z0, Z1, Z2, Z3);     \
	STORE_ROW4(ROW1, Z4, Z5, Z6, Z7);     \
	STORE_ROW4(ROW2, Z8, Z9, Z10, Z11);   \
	STORE_ROW4(ROW3, Z12, Z13, Z14, Z15); \
	STORE_ROW4(ROW4, Z16, Z17, Z18, Z19); \
	STORE_ROW4(ROW5, Z20, Z21, Z22, Z23)

#define STOREM \
	BEGIN_STORE;           \
	STORE_ROWM(ROW0, Z0);  \
	STORE_ROWM(ROW1, Z4);  \
	STORE_ROWM(ROW2, Z8);  \
	STORE_ROWM(ROW3, Z12); \
	STORE_ROWM(ROW4, Z16); \
	STORE_ROWM(ROW5, Z20)

// K1 = the first min(R11, 16) lanes. CX is borrowed for the shift count and
// restored from the arguments.
#define LOAD_MASK \
	MOVQ  $16, CX;            \
	CMPQ  R11, CX;            \
	CMOVQLT R11, CX;          \
	MOVL  $1, AX;             \
	SHLL  CX, AX;             \
	DECL  AX;                 \
	KMOVW AX, K1;             \
	MOVQ  wstride+48(FP), CX; \
	SHLQ  $2, CX

#define PROLOGUE \
	MOVQ dst+0(FP), DI;      \
	MOVQ src+8(FP), SI;      \
	MOVQ width+24(FP), R8;   \
	MOVQ blocks+32(FP), BX;  \
	MOVQ wstride+48(FP), CX; \
	SHLQ $2, R8;             \
	SHLQ $2, CX;             \
	LEAQ (R8)(R8*2), R9;     \
	LEAQ (R8)(R8*4), DX

#define NEXT_ROW_BLOCK(label) \
	LEAQ (SI)(R9*2), SI; \
	LEAQ (DI)(R9*2), DI; \
	DECQ BX;             \
	JNZ  label

// Advance past a masked 16-column block.
#define NEXT_COL16(label) \
	ADDQ $64, R10; \
	SUBQ $16, R11; \
	JG   label

// ---- mode FMA: w columns in Z24-Z27, broadcast src in Z28 ----

#define FMA4(s, a0, a1, a2, a3) \
	VBROADCASTSS s, Z28;      \
	VFMADD231PS Z24, Z28, a0; \
	VFMADD231PS Z25, Z28, a1; \
	VFMADD231PS Z26, Z28, a2; \
	VFMADD231PS Z27, Z28, a3

#define FMA1(s, a0) \
	VBROADCASTSS s, Z28; \
	VFMADD231PS Z24, Z28, a0

// func forwardFMAAVX512(dst, src, w *float32, width, blocks, cols, wstride int)
TEXT ·forwardFMAAVX512(SB), NOSPLIT, $0-56
	PROLOGUE

fmaRows:
	XORQ R10, R10
	MOVQ cols+40(FP), R11

fmaCol64:
	CMPQ R11, $64
	JLT  fmaCol16
	ZERO_ACC4
	BEGIN_I

fmaLoop64:
	VMOVUPS (R13), Z24
	VMOVUPS 64(R13), Z25
	VMOVUPS 128(R13), Z26
	VMOVUPS 192(R13), Z27
	FMA4(ROW0, Z0, Z1, Z2, Z3)
	FMA4(ROW1, Z4, Z5, Z6, Z7)
	FMA4(ROW2, Z8, Z9, Z10, Z11)
	FMA4(ROW3, Z12, Z13, Z14, Z15)
	FMA4(ROW4, Z16, Z17, Z18, Z19)
	FMA4(ROW5, Z20, Z21, Z22, Z23)
	NEXT_I(fmaLoop64)
	STORE4
	ADDQ $256, R10
	SUBQ $64, R11
	JMP  fmaCol64

fmaCol16:
	TESTQ R11, R11
	JZ    fmaNextRows
	LOAD_MASK
	ZERO_ACC1
	BEGIN_I

fmaLoop16:
	VMOVUPS.Z (R13), K1, Z24
	FMA1(ROW0, Z0)
	FMA1(ROW1, Z4)
	FMA1(ROW2, Z8)
	FMA1(ROW3, Z12)
	FMA1(ROW4, Z16)
	FMA1(ROW5, Z20)
	NEXT_I(fmaLoop16)
	STOREM
	NEXT_COL16(fmaCol16)

fmaNextRows:
	NEXT_ROW_BLOCK(fmaRows)
	VZEROUPPER
	RET

// ---- mode MulAdd: broadcast src in Z28, w read from memory, products in Z24-Z27 ----

#define MULADD4(s, a0, a1, a2, a3) \
	VBROADCASTSS s, Z28;                          \
	VMULPS (R13), Z28, Z24;    VADDPS Z24, a0, a0; \
	VMULPS 64(R13), Z28, Z25;  VADDPS Z25, a1, a1; \
	VMULPS 128(R13), Z28, Z26; VADDPS Z26, a2, a2; \
	VMULPS 192(R13), Z28, Z27; VADDPS Z27, a3, a3

// The masked block keeps the loaded w columns in Z29.
#define MULADDM(s, a0) \
	VBROADCASTSS s, Z28; \
	VMULPS Z29, Z28, Z24; VADDPS Z24, a0, a0

// func forwardMulAddAVX512(dst, src, w *float32, width, blocks, cols, wstride int)
TEXT ·forwardMulAddAVX512(SB), NOSPLIT, $0-56
	PROLOGUE

maRows:
	XORQ R10, R10
	MOVQ cols+40(FP), R11

maCol64:
	CMPQ R11, $64
	JLT  maCol16
	ZERO_ACC4
	BEGIN_I

maLoop64:
	MULADD4(ROW0, Z0, Z1, Z2, Z3)
	MULADD4(ROW1, Z4, Z5, Z6, Z7)
	MULADD4(ROW2, Z8, Z9, Z10, Z11)
	MULADD4(ROW3, Z12, Z13, Z14, Z15)
	MULADD4(ROW4, Z16, Z17, Z18, Z19)
	MULADD4(ROW5, Z20, Z21, Z22, Z23)
	NEXT_I(maLoop64)
	STORE4
	ADDQ $256, R10
	SUBQ $64, R11
	JMP  maCol64

maCol16:
	TESTQ R11, R11
	JZ    maNextRows
	LOAD_MASK
	ZERO_ACC1
	BEGIN_I

maLoop16:
	VMOVUPS.Z (R13), K1, Z29
	MULADDM(ROW0, Z0)
	MULADDM(ROW1, Z4)
	MULADDM(ROW2, Z8)
	MULADDM(ROW3, Z12)
	MULADDM(ROW4, Z16)
	MULADDM(ROW5, Z20)
	NEXT_I(maLoop16)
	STOREM
	NEXT_COL16(maCol16)

maNextRows:
	NEXT_ROW_BLOCK(maRows)
	VZEROUPPER
	RET
