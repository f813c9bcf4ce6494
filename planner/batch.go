package planner

import (
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
)

// ColumnOf is what the planner knows of view v: its bytes, values and
// whether they are floats (its location is Host until a Locator says
// otherwise).
func ColumnOf(v *column.View) Column {
	return Column{Bytes: v.ByteSize(), Values: int64(v.Len), Float: v.Kind.Family() == column.FamilyFloat}
}

// PlanViews decides where each view of a batch goes: cols[i] is what is known
// of views[i] (ColumnOf, and GPUCapable: whether the GPU backend can take it
// at all, its type and the ordered aggregates where asked for). Where a
// column's memory lives (an inquiry of loc, which may be nil; PlanViews sets
// cols[i].Location) is asked only for the columns the GPU takes or nearly
// does, and for those large enough to split: page-locked memory is read
// faster and can be split.
func PlanViews(views []*column.View, cols []Column, cal Calibration, opt Options, loc backend.Locator) []Decision {
	plan := Plan(cols, cal, opt)
	if loc == nil {
		return plan
	}
	minSplit := SplitFrom(opt.MinSplitBytes)
	again := false
	for i, d := range plan {
		if d.Backend != CPU || (cols[i].gpuTakes() &&
			(cols[i].Bytes >= minSplit || d.GPUTime > 0 && d.GPUTime < 2*d.CPUTime)) {
			if l := loc.Locate(views[i]); l != Host {
				cols[i].Location, again = l, true
			}
		}
	}
	if again {
		plan = Plan(cols, cal, opt)
	}
	return plan
}
