package agg

import (
	"fmt"
	"strings"
)

// Set is a set of aggregates, a bit each. The zero Set means Default wherever
// a request takes one (Normalize says so, in one place).
type Set uint16

// The aggregates. All of them come out of one pass over the data.
const (
	Sum Set = 1 << iota
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

	// Default is the set a request without aggregates gets: every unordered
	// aggregate.
	Default = Sum | Min | Max | Count | NullCount | Mean
	// Ordered are the aggregates that depend on row order.
	Ordered = First | Last | ArgMin | ArgMax
	// All is every aggregate.
	All = Default | Ordered
)

// names is the one table of the aggregates' names, in output order.
var names = []struct {
	a    Set
	name string
}{{Count, "count"}, {NullCount, "null_count"}, {Sum, "sum"}, {Min, "min"}, {Max, "max"}, {Mean, "mean"},
	{First, "first"}, {Last, "last"}, {ArgMin, "arg_min"}, {ArgMax, "arg_max"}}

// Each is every aggregate, one per element, in output order.
func Each() []Set {
	out := make([]Set, len(names))
	for i, n := range names {
		out[i] = n.a
	}
	return out
}

// Name is the name of a single aggregate ("" for a set of several or none).
func (a Set) Name() string {
	for _, n := range names {
		if n.a == a {
			return n.name
		}
	}
	return ""
}

// Normalize returns s, or Default when s is empty.
func Normalize(s Set) Set {
	if s == 0 {
		return Default
	}
	return s
}

// Has reports whether every aggregate of b is in a.
func (a Set) Has(b Set) bool { return a&b == b }

// Any reports whether a and b share an aggregate.
func (a Set) Any(b Set) bool { return a&b != 0 }

// Names are the names of the aggregates of a, in output order.
func (a Set) Names() []string {
	var out []string
	for _, n := range names {
		if a.Has(n.a) {
			out = append(out, n.name)
		}
	}
	return out
}

func (a Set) String() string { return strings.Join(a.Names(), ",") }

// AllNames are the names of every aggregate, in output order.
func AllNames() []string { return All.Names() }

// aliases are other names Parse takes: SQL's.
var aliases = map[string]Set{"avg": Mean}

// Parse parses a comma-separated list of aggregate names (count, null_count,
// sum, min, max, mean, first, last, arg_min, arg_max; avg is mean),
// case-insensitively.
func Parse(s string) (Set, error) {
	var a Set
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		if part == "" {
			continue
		}
		found := false
		if al, ok := aliases[part]; ok {
			a |= al
			found = true
		}
		for _, n := range names {
			if n.name == part {
				a |= n.a
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown aggregate %q (want any of %s)", part, strings.Join(AllNames(), ", "))
		}
	}
	if a == 0 {
		return 0, fmt.Errorf("no aggregate named in %q", s)
	}
	return a, nil
}
