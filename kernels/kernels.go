package kernels

import _ "embed"

// AggPTX is the PTX of agg.cu: the fused kernels arrowagg_<kind>, the
// ordered-aggregate kernels arrowagg_ordered_<kind> (int8 ... uint64,
// float32, float64, decimal128, bool) and arrowagg_multi, which aggregates
// many columns of any of those kinds in one launch over a work list of
// column descriptors and tiles; their parameters are all 64-bit.
//
//go:embed agg.ptx
var AggPTX string
