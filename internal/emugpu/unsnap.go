//go:build emu

package emugpu

// #include "unsnap.h"
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// The codes of kernels/unsnap.cuh's unsnap_warp.
const (
	UnsnapOK      = 0 // kUnsnapOK
	UnsnapCorrupt = 1 // kUnsnapCorrupt: the bytes are not valid snappy
	UnsnapLength  = 2 // kUnsnapLength: the preamble's length is not out_len
)

// Placement says where an input lies against the inaccessible page that
// makes a read outside it fault.
type Placement int

const (
	// GuardAfter puts each input at the end of its mapping: a read past its
	// end faults.
	GuardAfter Placement = iota
	// GuardBefore puts each input at the start of its mapping: a read before
	// its start faults.
	GuardBefore
)

// Unsnap decodes each srcs[i] with unsnap_warp, one warp per input, all in
// one emulated launch of several blocks, with out_len outLens[i]. It returns
// the bytes each warp wrote to its output (all of them, whatever the code)
// and the code it returned. It fails when the warp's lanes returned
// different codes, when a read outside an input is detected (each read is
// checked against the input's bounds) or a write outside an output (guard
// bytes around each output); a read far outside an input may crash the
// process first (the inaccessible page).
func Unsnap(srcs [][]byte, outLens []int, place Placement) (outs [][]byte, codes []int, err error) {
	if len(srcs) != len(outLens) {
		return nil, nil, fmt.Errorf("emugpu: %d inputs, %d output lengths", len(srcs), len(outLens))
	}
	n := len(srcs)
	if n == 0 {
		return nil, nil, nil
	}
	srcOff := make([]uint64, n)
	srcLen := make([]uint32, n)
	dstOff := make([]uint64, n)
	dstLen := make([]uint32, n)
	var st, dt uint64
	for i, s := range srcs {
		if uint64(len(s)) > math.MaxUint32 || outLens[i] < 0 || uint64(outLens[i]) > math.MaxUint32 {
			return nil, nil, fmt.Errorf("emugpu: input %d: lengths %d, %d out of range", i, len(s), outLens[i])
		}
		srcOff[i], srcLen[i] = st, uint32(len(s))
		dstOff[i], dstLen[i] = dt, uint32(outLens[i])
		st += uint64(len(s))
		dt += uint64(outLens[i])
	}
	// one allocation each, at least a byte, so that the pointers are valid
	src := make([]byte, st+1)
	for i, s := range srcs {
		copy(src[srcOff[i]:], s)
	}
	dst := make([]byte, dt+1)
	lanes := make([]int32, 32*n)
	rc := C.emugpu_unsnap((*C.uint8_t)(unsafe.Pointer(&src[0])), (*C.uint64_t)(unsafe.Pointer(&srcOff[0])),
		(*C.uint32_t)(unsafe.Pointer(&srcLen[0])), (*C.uint8_t)(unsafe.Pointer(&dst[0])),
		(*C.uint64_t)(unsafe.Pointer(&dstOff[0])), (*C.uint32_t)(unsafe.Pointer(&dstLen[0])),
		(*C.int32_t)(unsafe.Pointer(&lanes[0])), C.uint32_t(n), C.int(place))
	switch {
	case rc == -1:
		return nil, nil, errors.New("emugpu: mapping an input failed")
	case rc < -1:
		return nil, nil, fmt.Errorf("emugpu: input %d: unsnap_warp read outside it", -2-rc)
	case rc > 0:
		return nil, nil, fmt.Errorf("emugpu: input %d: unsnap_warp wrote outside its output", rc-1)
	}
	outs = make([][]byte, n)
	codes = make([]int, n)
	for i := range srcs {
		outs[i] = dst[dstOff[i] : dstOff[i]+uint64(dstLen[i]) : dstOff[i]+uint64(dstLen[i])]
		codes[i] = int(lanes[32*i])
		for l, c := range lanes[32*i : 32*i+32] {
			if c != lanes[32*i] {
				return nil, nil, fmt.Errorf("emugpu: input %d: lane %d returned %d, lane 0 %d", i, l, c, lanes[32*i])
			}
		}
	}
	return outs, codes, nil
}
