package kernels

import _ "embed"

// LadderPTX is the PTX of ladder.cu: the kernels of the reduction ladder
// (ladder_v1_i32 ... ladder_v13_i64), run by the package ladder. Their
// parameters are all 64-bit.
//
//go:embed ladder.ptx
var LadderPTX string

// LadderFatbin is ladder.cu compiled like AggFatbin (FatbinTargets).
//
//go:embed ladder.fatbin
var LadderFatbin string
