package gpuagg

import (
	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// The aggregate state and the aggregate set are package agg's; these names
// keep the API of this package for its users.

// State is the partial aggregate of one column (agg.State).
type State = agg.State

// Int192 is the exact 192-bit integer of sums (agg.Int192).
type Int192 = agg.Int192

// Agg is a set of aggregates (agg.Set).
type Agg = agg.Set

// The aggregates (agg's).
const (
	Sum       = agg.Sum
	Min       = agg.Min
	Max       = agg.Max
	Count     = agg.Count
	NullCount = agg.NullCount
	Mean      = agg.Mean
	First     = agg.First
	Last      = agg.Last
	ArgMin    = agg.ArgMin
	ArgMax    = agg.ArgMax

	// AllAggs is the default set: every unordered aggregate.
	AllAggs = agg.Default
	// OrderedAggs are the aggregates that depend on row order.
	OrderedAggs = agg.Ordered
)

// NewState returns the empty state of a family (agg.New, without the ordered
// aggregates).
func NewState(f column.Family) State { return agg.New(f, 0) }

// ParseAggs parses a comma-separated list of aggregate names (agg.Parse).
func ParseAggs(s string) (Agg, error) { return agg.Parse(s) }

// Int192From returns x as an Int192.
func Int192From(x int64) Int192 { return agg.Int192From(x) }

// Int192FromUint returns x as an Int192.
func Int192FromUint(x uint64) Int192 { return agg.Int192FromUint(x) }

// Int192From128 returns the 128-bit two's-complement value hi:lo as an Int192.
func Int192From128(lo uint64, hi int64) Int192 { return agg.Int192From128(lo, hi) }
