#include "textflag.h"

// func prefetch(p, last unsafe.Pointer)
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ last+8(FP), BX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 (BX)
	RET
