//go:build amd64 && !purego

#include "textflag.h"

// Forward kernel, AVX2 + FMA3. One call computes columns [0, cols) of blocks*4
// rows of dst = relu(src @ w). dst and w point at the first of those columns;
// width is the row stride of src and dst (and the length of the dot products),
// wstride the row stride of w (width, or the panel width of a packed w).
//
// Lanes run across output columns j; each lane is one accumulator that walks
// i = 0..width-1 in order, so a lane performs exactly the scalar contract:
// VFMADD231PS is one fused rounding per step (mode FMA), VMULPS then VADDPS
// are two roundings (mode MulAdd). A register block is 4 rows × 24 columns
// (12 accumulators); narrower blocks of 16, 8 and a masked 1..7 finish a row
// block. The accumulators start at +0 and relu is VMAXPS against +0 with the
// accumulator as first source, which returns +0 for -0, +0 and NaN.
//
// Registers: DI dst of the row block, SI src of the row block, DX w, CX w row
// stride in bytes, BX row blocks left, R8 src/dst row stride in bytes, R9
// 3*R8, R10 column offset in bytes, R11 columns left, R12 src pointer (walks
// i), R13 w pointer (walks rows of w), AX i count. Y0-Y11 accumulators (row r
// uses Y3r..Y3r+2), Y12-Y15 scratch.

// Lanes 0..7 of maskTail<>+32-4n select the first n of 8 columns.
DATA maskTail<>+0x00(SB)/8, $0xffffffffffffffff
DATA maskTail<>+0x08(SB)/8, $0xffffffffffffffff
DATA maskTail<>+0x10(SB)/8, $0xffffffffffffffff
DATA maskTail<>+0x18(SB)/8, $0xffffffffffffffff
DATA maskTail<>+0x20(SB)/8, $0
DATA maskTail<>+0x28(SB)/8, $0
DATA maskTail<>+0x30(SB)/8, $0
DATA maskTail<>+0x38(SB)/8, $0
GLOBL maskTail<>(SB), RODATA|NOPTR, $64

// Row r of the 4-row block at R12 (src while walking i, dst while storing).
#define ROW0 (R12)
#define ROW1 (R12)(R8*1)
#define ROW2 (R12)(R8*2)
#define ROW3 (R12)(R9*1)

#define ZERO_ACC3 \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2;   \
	VXORPS Y3, Y3, Y3; VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5;   \
	VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7; VXORPS Y8, Y8, Y8;   \
	VXORPS Y9, Y9, Y9; VXORPS Y10, Y10, Y10; VXORPS Y11, Y11, Y11

#define ZERO_ACC2 \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y3, Y3, Y3; VXORPS Y4, Y4, Y4; \
	VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7; VXORPS Y9, Y9, Y9; VXORPS Y10, Y10, Y10

#define ZERO_ACC1 \
	VXORPS Y0, Y0, Y0; VXORPS Y3, Y3, Y3; VXORPS Y6, Y6, Y6; VXORPS Y9, Y9, Y9

// Start walking i for the column block at R10: R12 = src row 0, R13 = w[0][j], AX = width.
#define BEGIN_I \
	MOVQ SI, R12;          \
	LEAQ (DX)(R10*1), R13; \
	MOVQ width+24(FP), AX

#define NEXT_I(label) \
	ADDQ $4, R12;  \
	ADDQ CX, R13;  \
	DECQ AX;       \
	JNZ  label

// relu and store of the accumulators, Y15 = +0, R12 = dst row 0 at the column block.
#define RELU(acc) VMAXPS Y15, acc, acc
#define STORE_ROW3(base, a0, a1, a2) \
	RELU(a0); RELU(a1); RELU(a2); \
	VMOVUPS a0, base; VMOVUPS a1, 32 base; VMOVUPS a2, 64 base
#define STORE_ROW2(base, a0, a1) \
	RELU(a0); RELU(a1); VMOVUPS a0, base; VMOVUPS a1, 32 base
#define STORE_ROW1(base, a0) \
	RELU(a0); VMOVUPS a0, base
#define STORE_ROWM(base, a0) \
	RELU(a0); VMASKMOVPS a0, Y14, base

#define BEGIN_STORE \
	VXORPS Y15, Y15, Y15; \
	LEAQ   (DI)(R10*1), R12

#define STORE3 \
	BEGIN_STORE;                  \
	STORE_ROW3(ROW0, Y0, Y1, Y2); \
	STORE_ROW3(ROW1, Y3, Y4, Y5); \
	STORE_ROW3(ROW2, Y6, Y7, Y8); \
	STORE_ROW3(ROW3, Y9, Y10, Y11)

#define STORE2 \
	BEGIN_STORE;              \
	STORE_ROW2(ROW0, Y0, Y1); \
	STORE_ROW2(ROW1, Y3, Y4); \
	STORE_ROW2(ROW2, Y6, Y7); \
	STORE_ROW2(ROW3, Y9, Y10)

#define STORE1 \
	BEGIN_STORE;          \
	STORE_ROW1(ROW0, Y0); \
	STORE_ROW1(ROW1, Y3); \
	STORE_ROW1(ROW2, Y6); \
	STORE_ROW1(ROW3, Y9)

#define STOREM \
	BEGIN_STORE;          \
	STORE_ROWM(ROW0, Y0); \
	STORE_ROWM(ROW1, Y3); \
	STORE_ROWM(ROW2, Y6); \
	STORE_ROWM(ROW3, Y9)

// Y14 = mask of the first R11 (1..7) lanes.
#define LOAD_MASK \
	MOVQ   R11, AX;                 \
	SHLQ   $2, AX;                  \
	LEAQ   maskTail<>+32(SB), R12;  \
	SUBQ   AX, R12;                 \
	VMOVUPS (R12), Y14

#define PROLOGUE \
	MOVQ dst+0(FP), DI;     \
	MOVQ src+8(FP), SI;     \
	MOVQ w+16(FP), DX;      \
	MOVQ width+24(FP), R8;  \
	MOVQ blocks+32(FP), BX; \
	MOVQ wstride+48(FP), CX; \
	SHLQ $2, R8;            \
	SHLQ $2, CX;            \
	LEAQ (R8)(R8*2), R9

#define NEXT_ROW_BLOCK(label) \
	LEAQ (SI)(R8*4), SI; \
	LEAQ (DI)(R8*4), DI; \
	DECQ BX;             \
	JNZ  label

// ---- mode FMA: w columns in Y12-Y14, broadcast src in Y15 ----

#define FMA3(s, a0, a1, a2) \
	VBROADCASTSS s, Y15;       \
	VFMADD231PS Y12, Y15, a0;  \
	VFMADD231PS Y13, Y15, a1;  \
	VFMADD231PS Y14, Y15, a2

#define FMA2(s, a0, a1) \
	VBROADCASTSS s, Y15;       \
	VFMADD231PS Y12, Y15, a0;  \
	VFMADD231PS Y13, Y15, a1

#define FMA1(s, a0) \
	VBROADCASTSS s, Y15; \
	VFMADD231PS Y12, Y15, a0

// func forwardFMAAVX2(dst, src, w *float32, width, blocks, cols, wstride int)
TEXT ·forwardFMAAVX2(SB), NOSPLIT, $0-56
	PROLOGUE

fmaRows:
	XORQ R10, R10
	MOVQ cols+40(FP), R11

fmaCol24:
	CMPQ R11, $24
	JLT  fmaCol16
	ZERO_ACC3
	BEGIN_I

fmaLoop24:
	VMOVUPS (R13), Y12
	VMOVUPS 32(R13), Y13
	VMOVUPS 64(R13), Y14
	FMA3(ROW0, Y0, Y1, Y2)
	FMA3(ROW1, Y3, Y4, Y5)
	FMA3(ROW2, Y6, Y7, Y8)
	FMA3(ROW3, Y9, Y10, Y11)
	NEXT_I(fmaLoop24)
	STORE3
	ADDQ $96, R10
	SUBQ $24, R11
	JMP  fmaCol24

fmaCol16:
	CMPQ R11, $16
	JLT  fmaCol8
	ZERO_ACC2
	BEGIN_I

fmaLoop16:
	VMOVUPS (R13), Y12
	VMOVUPS 32(R13), Y13
	FMA2(ROW0, Y0, Y1)
	FMA2(ROW1, Y3, Y4)
	FMA2(ROW2, Y6, Y7)
	FMA2(ROW3, Y9, Y10)
	NEXT_I(fmaLoop16)
	STORE2
	ADDQ $64, R10
	SUBQ $16, R11

fmaCol8:
	CMPQ R11, $8
	JLT  fmaColMask
	ZERO_ACC1
	BEGIN_I

fmaLoop8:
	VMOVUPS (R13), Y12
	FMA1(ROW0, Y0)
	FMA1(ROW1, Y3)
	FMA1(ROW2, Y6)
	FMA1(ROW3, Y9)
	NEXT_I(fmaLoop8)
	STORE1
	ADDQ $32, R10
	SUBQ $8, R11

fmaColMask:
	TESTQ R11, R11
	JZ    fmaNextRows
	LOAD_MASK
	ZERO_ACC1
	BEGIN_I

fmaLoopMask:
	VMASKMOVPS (R13), Y14, Y12
	FMA1(ROW0, Y0)
	FMA1(ROW1, Y3)
	FMA1(ROW2, Y6)
	FMA1(ROW3, Y9)
	NEXT_I(fmaLoopMask)
	STOREM

fmaNextRows:
	NEXT_ROW_BLOCK(fmaRows)
	VZEROUPPER
	RET

// ---- mode MulAdd: broadcast src in Y12, products in Y13-Y15 (w read from memory) ----

#define MULADD3(s, a0, a1, a2) \
	VBROADCASTSS s, Y12;                      \
	VMULPS (R13), Y12, Y13;   VADDPS Y13, a0, a0; \
	VMULPS 32(R13), Y12, Y14; VADDPS Y14, a1, a1; \
	VMULPS 64(R13), Y12, Y15; VADDPS Y15, a2, a2

#define MULADD2(s, a0, a1) \
	VBROADCASTSS s, Y12;                      \
	VMULPS (R13), Y12, Y13;   VADDPS Y13, a0, a0; \
	VMULPS 32(R13), Y12, Y14; VADDPS Y14, a1, a1

#define MULADD1(s, a0) \
	VBROADCASTSS s, Y12; \
	VMULPS (R13), Y12, Y13; VADDPS Y13, a0, a0

// The masked block keeps the loaded w columns in Y11 (unused by 1-wide blocks).
#define MULADDM(s, a0) \
	VBROADCASTSS s, Y12; \
	VMULPS Y11, Y12, Y13; VADDPS Y13, a0, a0

// func forwardMulAddAVX2(dst, src, w *float32, width, blocks, cols, wstride int)
TEXT ·forwardMulAddAVX2(SB), NOSPLIT, $0-56
	PROLOGUE

maRows:
	XORQ R10, R10
	MOVQ cols+40(FP), R11

maCol24:
	CMPQ R11, $24
	JLT  maCol16
	ZERO_ACC3
	BEGIN_I

maLoop24:
	MULADD3(ROW0, Y0, Y1, Y2)
	MULADD3(ROW1, Y3, Y4, Y5)
	MULADD3(ROW2, Y6, Y7, Y8)
	MULADD3(ROW3, Y9, Y10, Y11)
	NEXT_I(maLoop24)
	STORE3
	ADDQ $96, R10
	SUBQ $24, R11
	JMP  maCol24

maCol16:
	CMPQ R11, $16
	JLT  maCol8
	ZERO_ACC2
	BEGIN_I

maLoop16:
	MULADD2(ROW0, Y0, Y1)
	MULADD2(ROW1, Y3, Y4)
	MULADD2(ROW2, Y6, Y7)
	MULADD2(ROW3, Y9, Y10)
	NEXT_I(maLoop16)
	STORE2
	ADDQ $64, R10
	SUBQ $16, R11

maCol8:
	CMPQ R11, $8
	JLT  maColMask
	ZERO_ACC1
	BEGIN_I

maLoop8:
	MULADD1(ROW0, Y0)
	MULADD1(ROW1, Y3)
	MULADD1(ROW2, Y6)
	MULADD1(ROW3, Y9)
	NEXT_I(maLoop8)
	STORE1
	ADDQ $32, R10
	SUBQ $8, R11

maColMask:
	TESTQ R11, R11
	JZ    maNextRows
	LOAD_MASK
	ZERO_ACC1
	BEGIN_I

maLoopMask:
	VMASKMOVPS (R13), Y14, Y11
	MULADDM(ROW0, Y0)
	MULADDM(ROW1, Y3)
	MULADDM(ROW2, Y6)
	MULADDM(ROW3, Y9)
	NEXT_I(maLoopMask)
	STOREM

maNextRows:
	NEXT_ROW_BLOCK(maRows)
	VZEROUPPER
	RET
