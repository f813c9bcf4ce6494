package kernels

import _ "embed"

// AggPTX is the PTX of agg.cu: the fused kernels arrowagg_<kind>, the
// ordered-aggregate kernels arrowagg_ordered_<kind> (int8 ... uint64,
// float32, float64, decimal128, bool), arrowagg_multi, which aggregates
// many columns of any of those kinds in one launch over a work list of
// column descriptors and tiles, and the grouped kernels
// arrowagg_group_<kind> and arrowagg_group_wide_<integer kind>
// (group.cuh); their parameters are all 64-bit.
//
//go:embed agg.ptx
var AggPTX string

// AggFatbin is agg.cu compiled into a fatbin: machine code (SASS) for each
// architecture of FatbinTargets, and PTX for compute_60 (nvcc's own for the
// fatbin, from the same source and flags as AggPTX though not the same
// text), which the driver compiles for any other GPU. The CUDA backend loads it: on the GPUs listed
// the driver compiles nothing at start.
//
//go:embed agg.fatbin
var AggFatbin string

// FatbinTargets are the architectures of the fatbins' machine code, and the
// virtual architecture of their PTX (scripts/gen-ptx.sh builds them).
const FatbinTargets = "SASS for sm_70, sm_75, sm_80, sm_86, sm_89, sm_90; PTX for compute_60"
