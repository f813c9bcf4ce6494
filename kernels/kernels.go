package kernels

import _ "embed"

// AggPTX is the PTX of agg.cu: the fused kernels arrowagg_<kind> and the
// ordered-aggregate kernels arrowagg_ordered_<kind> (int8 ... uint64,
// float32, float64, decimal128, bool), whose parameters are all 64-bit.
//
//go:embed agg.ptx
var AggPTX string
