package gpuagg

import (
	"fmt"
	"strings"
)

// Agg is a set of aggregates, a bit each.
type Agg uint16

// The aggregates. All of them come out of one pass over the data.
const (
	Sum Agg = 1 << iota
	Min
	Max
	Count
	NullCount
	Mean
	// The ordered aggregates: the first and last non-null values in row
	// order, and the rows of the minimum and of the maximum (the earliest row
	// on ties). Rows count from 0 at the first row of the input.
	First
	Last
	ArgMin
	ArgMax

	// AllAggs is the default set: every unordered aggregate.
	AllAggs = Sum | Min | Max | Count | NullCount | Mean
	// OrderedAggs are the aggregates that depend on row order.
	OrderedAggs = First | Last | ArgMin | ArgMax
)

var aggNames = []struct {
	a    Agg
	name string
}{{Count, "count"}, {NullCount, "null_count"}, {Sum, "sum"}, {Min, "min"}, {Max, "max"}, {Mean, "mean"},
	{First, "first"}, {Last, "last"}, {ArgMin, "arg_min"}, {ArgMax, "arg_max"}}

// Has reports whether every aggregate of b is in a.
func (a Agg) Has(b Agg) bool { return a&b == b }

func (a Agg) String() string {
	var names []string
	for _, n := range aggNames {
		if a.Has(n.a) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// ParseAggs parses a comma-separated list of aggregate names (sum, min, max,
// count, null_count, mean, first, last, arg_min, arg_max).
func ParseAggs(s string) (Agg, error) {
	var a Agg
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		if part == "" {
			continue
		}
		found := false
		for _, n := range aggNames {
			if n.name == part {
				a |= n.a
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown aggregate %q (want any of sum, min, max, count, null_count, mean, first, last, arg_min, arg_max)", part)
		}
	}
	if a == 0 {
		return 0, fmt.Errorf("no aggregate named in %q", s)
	}
	return a, nil
}
