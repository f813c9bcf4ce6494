package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/schema"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// Row-group statistics. A Parquet column chunk may carry, in the file's
// footer, the number of its nulls and the least and greatest of its values.
// When every aggregate asked for is one of count, null_count, min and max,
// a chunk whose statistics say all of that exactly is answered from them,
// without reading a byte of its pages; the others are read as usual (the
// choice is per row group: chunk states merge whatever made them).
//
// Statistics are used only where the format makes them exact and they are
// consistent, since an aggregate must never differ from what reading the
// values gives:
//
//   - non-repeated columns, not encrypted, of one value per row (the chunk's
//     value count is the row group's row count);
//   - Arrow types whose values are the Parquet integers: signed and
//     unsigned integers of every width (in range: a Parquet INT32 read as
//     int8 must be an int8), dates, times and timestamps of the Parquet
//     column's unit, decimals stored as INT32 or INT64 (the unscaled
//     values); booleans only when the row group holds one value (all false
//     or all true: the number of true values, from which the state's min and
//     max derive, is then known). Floats are left out (statistics ignore
//     NaN, and may order -0 and +0 either way), byte arrays too (their
//     extremes may be truncated);
//   - the min_value and max_value fields under the type-defined column
//     order (the deprecated min and max fields have no defined order for
//     unsigned types), of the physical type's width, in range for the Arrow
//     type, min <= max in the column's sort order (signed, or unsigned for
//     unsigned logical types), a null count set (or a required column) in
//     [0, rows]; a chunk of nulls only needs its null count;
//   - writers without known statistics bugs: those metadata.AppVersion's
//     HasCorrectStatistics accepts, and for unsigned columns only those
//     known to get them right (unsignedWriters).
//
// A row group whose statistics fail any of these is read; the plan says
// why (the first such row group).
//
// A state answered from statistics holds the count, the null count and the
// extremes (Min and Max, or for booleans Sum, which then is exact); its
// Sum is zero otherwise and its ordered fields are unset: it is only made
// when none of those is asked for.

// statsAggs are the aggregates row-group statistics answer.
const statsAggs = agg.Count | agg.NullCount | agg.Min | agg.Max

// statsReason is the plan's reason for a column of which n of m row groups
// were answered from statistics.
func statsReason(n, m int) string {
	return fmt.Sprintf("from row-group statistics (%d of %d row groups)", n, m)
}

// statsLeaf is how the statistics of a Parquet leaf column give the
// aggregates of its Arrow values.
type statsLeaf struct {
	col      int
	phys     parquet.Type
	logical  schema.LogicalType
	order    schema.SortOrder // of the statistics: signed or unsigned
	family   column.Family    // of the Arrow values
	required bool             // no nulls: maximum definition level 0
	// lo and hi bound the Parquet values that are Arrow values (the Arrow
	// type's range; lo <= 0 <= hi).
	lo int64
	hi uint64
	// rgs says, per row group, whether its chunk is answered from its
	// statistics; n is how many are, and why the first that is not is not.
	rgs []bool
	n   int
	why error
	// bounds: the statistics of floats or byte arrays (pruneLeafOf), which
	// bound the values (extremes that skip NaN, truncated byte arrays)
	// but do not answer them: their states are for a filter's pruning
	// alone (filter.Program.MayMatch reads only the counts and extremes).
	bounds bool
}

// answers reports whether row group rg of the leaf is answered from its
// statistics (false for a nil leaf).
func (s *statsLeaf) answers(rg int) bool { return s != nil && s.rgs[rg] }

// all reports whether every row group is answered from statistics (false
// for a nil leaf).
func (s *statsLeaf) all() bool { return s != nil && s.n == len(s.rgs) }

// statsRange is, per Arrow type, the range of the Parquet values that read
// as its values (as they are), and the physical types pqarrow reads it
// from. (pqarrow v17 reads Parquet dates as date32 only, and has no
// durations.)
func statsRange(dt arrow.DataType) (lo int64, hi uint64, phys []parquet.Type) {
	int32s := []parquet.Type{parquet.Types.Int32}
	int64s := []parquet.Type{parquet.Types.Int64}
	switch dt.ID() {
	case arrow.INT8:
		return math.MinInt8, math.MaxInt8, int32s
	case arrow.INT16:
		return math.MinInt16, math.MaxInt16, int32s
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return math.MinInt32, math.MaxInt32, int32s
	case arrow.UINT8:
		return 0, math.MaxUint8, int32s
	case arrow.UINT16:
		return 0, math.MaxUint16, int32s
	case arrow.UINT32: // INT64 when written for Parquet format 1.0
		return 0, math.MaxUint32, []parquet.Type{parquet.Types.Int32, parquet.Types.Int64}
	case arrow.INT64, arrow.TIME64, arrow.TIMESTAMP:
		return math.MinInt64, math.MaxInt64, int64s
	case arrow.UINT64:
		return 0, math.MaxUint64, int64s
	case arrow.DECIMAL128:
		return math.MinInt64, math.MaxInt64, []parquet.Type{parquet.Types.Int32, parquet.Types.Int64}
	case arrow.BOOL:
		return 0, 1, []parquet.Type{parquet.Types.Boolean}
	}
	return 0, 0, nil
}

// timeUnit is the Parquet time unit of an Arrow one.
func timeUnit(u arrow.TimeUnit) schema.TimeUnitType {
	switch u {
	case arrow.Millisecond:
		return schema.TimeUnitMillis
	case arrow.Microsecond:
		return schema.TimeUnitMicros
	case arrow.Nanosecond:
		return schema.TimeUnitNanos
	}
	return schema.TimeUnitUnknown
}

// logicalMatches reports whether the Parquet logical type lt is what the
// values of Arrow type dt are read from as they are (the same unit, scale
// and precision).
func logicalMatches(dt arrow.DataType, lt schema.LogicalType) bool {
	switch t := dt.(type) {
	case *arrow.TimestampType:
		l, ok := lt.(*schema.TimestampLogicalType)
		return ok && l.TimeUnit() == timeUnit(t.Unit)
	case *arrow.Time32Type:
		l, ok := lt.(*schema.TimeLogicalType)
		return ok && l.TimeUnit() == timeUnit(t.Unit)
	case *arrow.Time64Type:
		l, ok := lt.(*schema.TimeLogicalType)
		return ok && l.TimeUnit() == timeUnit(t.Unit)
	case *arrow.Date32Type:
		return lt != nil && lt.Equals(schema.DateLogicalType{})
	case *arrow.Decimal128Type:
		l, ok := lt.(*schema.DecimalLogicalType)
		return ok && l.Precision() == t.Precision && l.Scale() == t.Scale
	case *arrow.BooleanType:
		return lt == nil || lt.Equals(schema.NoLogicalType{})
	}
	// integers: annotated as integers, or not at all
	if lt == nil || lt.Equals(schema.NoLogicalType{}) {
		return true
	}
	_, ok := lt.(*schema.IntLogicalType)
	return ok
}

// statsLeafOf returns how the statistics of Parquet leaf column col, of
// Arrow type dt in the file's manifest, answer its aggregates, or why they
// do not; rgs is not filled.
func statsLeafOf(md *metadata.FileMetaData, col int, dt arrow.DataType) (sl statsLeaf, err error) {
	no := func(format string, args ...any) (statsLeaf, error) {
		return statsLeaf{}, fmt.Errorf(format, args...)
	}
	defer func() { // corrupt metadata: the column is read, which says what is wrong
		if p := recover(); p != nil {
			sl, err = no("%v", panicError(p))
		}
	}()
	descr, err := statsColumn(md, col)
	if err != nil {
		return statsLeaf{}, err
	}
	lo, hi, physs := statsRange(dt)
	phys := descr.PhysicalType()
	found := false
	for _, p := range physs {
		found = found || p == phys
	}
	if !found || !logicalMatches(dt, descr.LogicalType()) {
		return no("%s (%s) read as %s", phys, descr.LogicalType(), dt)
	}
	kind, err := arrow17.KindOf(dt)
	if err != nil {
		return no("%v", err)
	}
	order := descr.SortOrder()
	switch {
	case order != schema.SortSIGNED && order != schema.SortUNSIGNED:
		return no("sort order %v", order)
	case order == schema.SortUNSIGNED && phys != parquet.Types.Boolean:
		v := md.WriterVersion()
		if since, ok := unsignedWriters[v.App]; !ok || v.LessThan(since) {
			return no("unsigned statistics of %q, not known to be right", md.GetCreatedBy())
		}
	}
	return statsLeaf{col: col, phys: phys, logical: descr.LogicalType(), order: order, family: kind.Family(),
		required: descr.MaxDefinitionLevel() == 0, lo: lo, hi: hi}, nil
}

// statsColumn is Parquet leaf column col when its statistics may say
// something of its values: a column of one value per row, under the
// type-defined column order.
func statsColumn(md *metadata.FileMetaData, col int) (*schema.Column, error) {
	if col < 0 || col >= md.Schema.NumColumns() {
		return nil, fmt.Errorf("no Parquet column %d", col)
	}
	descr := md.Schema.Column(col)
	if descr.MaxRepetitionLevel() != 0 {
		return nil, errors.New("repeated column")
	}
	if descr.ColumnOrder() != parquet.ColumnOrders.TypeDefinedOrder {
		return nil, errors.New("no type-defined column order")
	}
	return descr, nil
}

// pruneLeafOf returns how the statistics of Parquet leaf column col, of
// Arrow type dt, prune a filter's row groups and pages: those of
// statsLeafOf, and for float32, float64, string, large_string, binary and
// large_binary columns, bounds (statsLeaf.bounds) under the type-defined
// column order: floats in their signed order, byte arrays in their
// unsigned (bytewise) order, from writers whose statistics
// HasCorrectStatistics trusts.
func pruneLeafOf(md *metadata.FileMetaData, col int, dt arrow.DataType) (sl statsLeaf, err error) {
	var phys parquet.Type
	var order schema.SortOrder
	var fam column.Family
	switch dt.ID() {
	case arrow.FLOAT32:
		phys, order, fam = parquet.Types.Float, schema.SortSIGNED, column.FamilyFloat
	case arrow.FLOAT64:
		phys, order, fam = parquet.Types.Double, schema.SortSIGNED, column.FamilyFloat
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		phys, order, fam = parquet.Types.ByteArray, schema.SortUNSIGNED, column.FamilyBytes
	default:
		return statsLeafOf(md, col, dt)
	}
	no := func(format string, args ...any) (statsLeaf, error) {
		return statsLeaf{}, fmt.Errorf(format, args...)
	}
	defer func() { // corrupt metadata: no pruning
		if p := recover(); p != nil {
			sl, err = no("%v", panicError(p))
		}
	}()
	descr, err := statsColumn(md, col)
	if err != nil {
		return statsLeaf{}, err
	}
	switch {
	case descr.PhysicalType() != phys:
		return no("%s read as %s", descr.PhysicalType(), dt)
	case descr.SortOrder() != order:
		return no("sort order %v", descr.SortOrder())
	}
	return statsLeaf{col: col, phys: phys, logical: descr.LogicalType(), order: order, family: fam,
		required: descr.MaxDefinitionLevel() == 0, bounds: true}, nil
}

// boundsState is the state, for pruning (statsLeaf.bounds), of count valid
// values and nulls nulls from their plain-encoded bounds min and max.
func (s *statsLeaf) boundsState(md *metadata.FileMetaData, count, nulls int64, minB, maxB []byte) (agg.State, error) {
	enc := metadata.EncodedStatistics{HasMin: true, Min: minB, HasMax: true, Max: maxB}
	if !md.WriterVersion().HasCorrectStatistics(s.phys, s.logical, enc, s.order) {
		return agg.State{}, fmt.Errorf("statistics of %q, which may be wrong", md.GetCreatedBy())
	}
	if s.family == column.FamilyBytes {
		if bytes.Compare(maxB, minB) < 0 {
			return agg.State{}, errors.New("min_value above max_value")
		}
		return agg.Bytes(count, nulls, minB, maxB), nil
	}
	var lo, hi float64
	switch {
	case s.phys == parquet.Types.Float && len(minB) == 4 && len(maxB) == 4:
		lo = float64(math.Float32frombits(binary.LittleEndian.Uint32(minB)))
		hi = float64(math.Float32frombits(binary.LittleEndian.Uint32(maxB)))
	case s.phys == parquet.Types.Double && len(minB) == 8 && len(maxB) == 8:
		lo = math.Float64frombits(binary.LittleEndian.Uint64(minB))
		hi = math.Float64frombits(binary.LittleEndian.Uint64(maxB))
	default:
		return agg.State{}, fmt.Errorf("min_value %x and max_value %x are not %s values", minB, maxB, s.phys)
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || hi < lo {
		return agg.State{}, fmt.Errorf("min_value %v and max_value %v", lo, hi)
	}
	// (-0 and +0 compare equal: either may stand for a zero. The state's
	// sum is not the values': MayMatch does not read it.)
	return agg.Float(count, nulls, 0, 0, 0, lo, hi), nil
}

// unsignedWriters are the writers whose statistics of unsigned columns are
// known to be right, from the version given on. arrow-go ("parquet-go")
// before 18.1.0 got the minimum and maximum of nullable unsigned columns
// wrong (apache/arrow-go#209), in ways a check does not always see when a
// row group was written in several batches (its 18.1.0 still calls itself
// 18.0.0-SNAPSHOT, so that one is not trusted either); a file whose writer
// does not say who it is may be one of those.
var unsignedWriters = map[string]*metadata.AppVersion{
	"parquet-cpp-arrow": metadata.NewAppVersionExplicit("parquet-cpp-arrow", 0, 0, 0),
	"parquet-cpp":       metadata.NewAppVersionExplicit("parquet-cpp", 1, 3, 0),
	"parquet-mr":        metadata.NewAppVersionExplicit("parquet-mr", 1, 10, 0),
	"parquet-go":        metadata.NewAppVersionExplicit("parquet-go", 18, 1, 0),
}

// statsValue is a statistics value as an integer: signed, or unsigned for
// unsigned statistics.
type statsValue struct {
	i int64
	u uint64
}

// decode reads a plain-encoded statistics value; ok is false when its
// length is not the physical type's.
func (s *statsLeaf) decode(b []byte) (v statsValue, ok bool) {
	switch {
	case s.phys == parquet.Types.Int32 && len(b) == 4:
		x := binary.LittleEndian.Uint32(b)
		return statsValue{i: int64(int32(x)), u: uint64(x)}, true
	case s.phys == parquet.Types.Int64 && len(b) == 8:
		x := binary.LittleEndian.Uint64(b)
		return statsValue{i: int64(x), u: x}, true
	case s.phys == parquet.Types.Boolean && len(b) == 1 && b[0] <= 1:
		return statsValue{i: int64(b[0]), u: uint64(b[0])}, true
	}
	return v, false
}

// less compares in the statistics' sort order.
func (s *statsLeaf) less(a, b statsValue) bool {
	if s.order == schema.SortUNSIGNED {
		return a.u < b.u
	}
	return a.i < b.i
}

// inRange reports whether v is a value of the Arrow type.
func (s *statsLeaf) inRange(v statsValue) bool {
	if s.order == schema.SortUNSIGNED {
		return v.u <= s.hi // lo <= 0
	}
	return v.i >= s.lo && (v.i < 0 || uint64(v.i) <= s.hi)
}

// encode is v, in range, in the state's Min/Max encoding.
func (s *statsLeaf) encode(v statsValue) [2]uint64 {
	switch {
	case s.order == schema.SortUNSIGNED:
		return [2]uint64{v.u, 0} // in range: below 2^63 unless the Arrow type is unsigned
	case s.family == column.FamilyDecimal:
		return [2]uint64{uint64(v.i), uint64(v.i >> 63)}
	}
	return [2]uint64{uint64(v.i), 0} // in range: not negative when the Arrow type is unsigned
}

// format prints v as the statistics' sort order reads it.
func (s *statsLeaf) format(v statsValue) string {
	if s.order == schema.SortUNSIGNED {
		return fmt.Sprint(v.u)
	}
	return fmt.Sprint(v.i)
}

// state returns the state of the chunk of row group rg from its
// statistics, or why they do not answer it exactly.
func (s *statsLeaf) state(md *metadata.FileMetaData, rg int) (st agg.State, err error) {
	defer func() { // corrupt metadata: the chunk is read, which says what is wrong
		if p := recover(); p != nil {
			st, err = agg.State{}, panicError(p)
		}
	}()
	if rg < 0 || rg >= len(md.RowGroups) || md.RowGroups[rg] == nil {
		return st, errors.New("no row group metadata")
	}
	g := md.RowGroups[rg]
	rows := g.GetNumRows()
	if s.col >= len(g.Columns) || g.Columns[s.col] == nil || g.Columns[s.col].GetMetaData() == nil {
		return st, errors.New("no column chunk metadata")
	}
	if g.Columns[s.col].IsSetCryptoMetadata() {
		return st, errors.New("encrypted")
	}
	m := g.Columns[s.col].GetMetaData()
	if p := parquet.Type(m.GetType()); p != s.phys {
		return st, fmt.Errorf("physical type %s, the schema's %s", p, s.phys)
	}
	if m.GetNumValues() != rows || rows < 0 {
		return st, fmt.Errorf("%d values in %d rows", m.GetNumValues(), rows)
	}
	st = agg.New(s.family, 0)
	if rows == 0 {
		return st, nil
	}
	stats := m.GetStatistics()
	if stats == nil {
		return st, errors.New("no statistics")
	}
	var minB, maxB []byte
	if stats.IsSetMinValue() && stats.IsSetMaxValue() {
		minB, maxB = stats.GetMinValue(), stats.GetMaxValue()
	}
	return s.extremes(md, rows, stats.GetNullCount(), stats.IsSetNullCount(), minB, maxB)
}

// extremes returns the state of rows values (of a row group's chunk or of a
// page) from their null count (if hasNulls) and the plain-encoded least and
// greatest of the others (nil: not given), or why these do not answer it
// exactly.
func (s *statsLeaf) extremes(md *metadata.FileMetaData, rows, nulls int64, hasNulls bool, minB, maxB []byte) (agg.State, error) {
	st := agg.New(s.family, 0)
	switch {
	case !hasNulls && s.required:
		nulls = 0
	case !hasNulls:
		return st, errors.New("no null count")
	}
	if nulls < 0 || nulls > rows {
		return st, fmt.Errorf("null count %d of %d rows", nulls, rows)
	}
	if s.required && nulls != 0 {
		return st, fmt.Errorf("null count %d in a required column", nulls)
	}
	count := rows - nulls
	if count == 0 {
		return agg.Nulls(s.family, nulls), nil
	}
	if minB == nil || maxB == nil {
		return st, errors.New("no min_value and max_value")
	}
	if s.bounds {
		return s.boundsState(md, count, nulls, minB, maxB)
	}
	lo, okLo := s.decode(minB)
	hi, okHi := s.decode(maxB)
	switch {
	case !okLo || !okHi:
		return st, fmt.Errorf("min_value %x and max_value %x are not %s values", minB, maxB, s.phys)
	case s.less(hi, lo):
		return st, fmt.Errorf("min_value %s above max_value %s", s.format(lo), s.format(hi))
	case !s.inRange(lo) || !s.inRange(hi):
		return st, fmt.Errorf("min_value %s or max_value %s outside the range of the column type", s.format(lo), s.format(hi))
	}
	enc := metadata.EncodedStatistics{HasMin: true, Min: minB, HasMax: true, Max: maxB}
	if !md.WriterVersion().HasCorrectStatistics(s.phys, s.logical, enc, s.order) {
		return st, fmt.Errorf("statistics of %q, which may be wrong", md.GetCreatedBy())
	}
	if s.family == column.FamilyBool {
		if lo != hi { // how many of each is unknown
			return st, errors.New("false and true values")
		}
		trues := int64(0)
		if lo.u == 1 {
			trues = count
		}
		return agg.Bool(count, nulls, trues), nil
	}
	return agg.Extremes(s.family, count, nulls, s.encode(lo), s.encode(hi)), nil
}

// planStats picks, per leaf, the row groups whose statistics answer the
// run's aggregates (none unless the run uses statistics and asks for
// nothing else). The leaves of types statistics never answer are left
// alone; the others get a statsLeaf, which says why when it answers none.
func (r *parquetRun) planStats() {
	if !r.useStats || r.aggs&^statsAggs != 0 {
		return
	}
	md := r.pqf.meta
	for i := range r.leaves {
		l := &r.leaves[i]
		if l.elem { // (a repeated leaf's statistics count levels, not elements)
			continue
		}
		if _, _, phys := statsRange(l.typ); phys == nil {
			continue
		}
		sl, err := statsLeafOf(md, l.col, l.typ)
		sl.rgs = make([]bool, len(md.RowGroups))
		sl.why = err
		for rg := range sl.rgs {
			if err != nil {
				break
			}
			if _, rgErr := sl.state(md, rg); rgErr != nil {
				if sl.why == nil {
					sl.why = fmt.Errorf("row group %d: %w", rg, rgErr)
				}
				continue
			}
			sl.rgs[rg] = true
			sl.n++
		}
		l.stats = &sl
	}
}

// statsChunk returns the partial aggregate of the chunk of leaf l in row
// group rg when its statistics answer it. Its plan has no backend (the
// column's is set by notePlans) and no bytes: nothing is read.
func (r *parquetRun) statsChunk(rg int, l *parquetLeaf) (chunkResult, bool) {
	if !l.stats.answers(rg) {
		return chunkResult{}, false
	}
	start := time.Now()
	st, err := l.stats.state(r.pqf.meta, rg)
	if err != nil { // planStats said otherwise: the metadata does not change
		return chunkResult{}, false
	}
	return chunkResult{state: st, plan: engine.ColumnPlan{Measured: time.Since(start)}}, true
}

// notePlans says, in the plans of src, which columns were answered from
// statistics, in full or for some row groups, and why the others of types
// statistics answer were not.
func (r *parquetRun) notePlans(src *partial) {
	nrg := len(r.pqf.meta.RowGroups)
	for _, l := range r.leaves {
		p := &src.plans[l.out]
		switch {
		case l.stats == nil || nrg == 0:
		case l.stats.all():
			// Its backend and location print as "stats" and "metadata".
			p.Source, p.GPUFraction, p.Reason = engine.SourceStats, 0, statsReason(nrg, nrg)
		case l.stats.n > 0:
			p.Source |= engine.SourceStats // "stats+" and the backend of the rest
			p.Reason = fmt.Sprintf("from row-group statistics (%d of %d row groups; not %v); the others: %s", l.stats.n, nrg, l.stats.why, p.Reason)
		default:
			p.Reason += fmt.Sprintf("; row-group statistics not used: %v", l.stats.why)
		}
	}
}
