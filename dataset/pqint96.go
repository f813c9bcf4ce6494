package dataset

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// INT96 timestamps (Impala's and Spark's legacy type: the nanoseconds of the
// day and a Julian day) are read as Arrow timestamps of one unit, as
// pyarrow's coerce_int96_timestamp_unit reads them. Nanoseconds, the
// default, are what arrow-go and pyarrow read them as; they reach only
// 1677 to 2262, and an instant outside that range is an error (pqarrow
// would wrap it around into another instant). Spark writes microseconds
// into them, and dates to year 290000: read in microseconds (DuckDB's
// resolution), they reach ±294,247 years.

// Int96Unit is the unit INT96 timestamps are read in (Options.Int96); the
// zero value is nanoseconds.
type Int96Unit uint8

// The units.
const (
	Int96Nanoseconds Int96Unit = iota
	Int96Microseconds
	Int96Milliseconds
	Int96Seconds
)

var int96Units = [...]struct {
	name string
	unit arrow.TimeUnit
}{{"ns", arrow.Nanosecond}, {"us", arrow.Microsecond}, {"ms", arrow.Millisecond}, {"s", arrow.Second}}

// TimeUnit is u as an Arrow time unit.
func (u Int96Unit) TimeUnit() arrow.TimeUnit {
	if int(u) >= len(int96Units) {
		return arrow.Nanosecond
	}
	return int96Units[u].unit
}

func (u Int96Unit) String() string {
	if int(u) >= len(int96Units) {
		return fmt.Sprintf("Int96Unit(%d)", u)
	}
	return int96Units[u].name
}

// ParseInt96Unit parses "ns", "us", "ms" or "s".
func ParseInt96Unit(s string) (Int96Unit, error) {
	for i, u := range int96Units {
		if s == u.name {
			return Int96Unit(i), nil
		}
	}
	return 0, fmt.Errorf("INT96 unit %q: want ns, us, ms or s", s)
}

// int96Schema is schema, as pqarrow converted the Parquet schema of md,
// with the timestamp type of every INT96 column in unit u (pqarrow's is
// timestamp[ns]) where the column's field lies at the top of the schema or
// in structs; the Arrow schema's leaves are the Parquet schema's columns,
// in order. An INT96 column inside a list or a map keeps timestamp[ns].
func int96Schema(schema *arrow.Schema, md *metadata.FileMetaData, u Int96Unit) *arrow.Schema {
	if u == Int96Nanoseconds {
		return schema
	}
	fields := append([]arrow.Field(nil), schema.Fields()...)
	leaf, changed := 0, false
	for i := range fields {
		fields[i].Type = int96Type(fields[i].Type, md, u.TimeUnit(), &leaf, &changed)
	}
	if !changed || leaf != md.Schema.NumColumns() {
		return schema // (not the layout of the Parquet schema's leaves)
	}
	meta := schema.Metadata()
	return arrow.NewSchemaWithEndian(fields, &meta, schema.Endianness())
}

// int96Type is dt, whose first leaf is Parquet column *leaf of md, with
// the INT96 timestamps in it (at its top or in structs) in unit; it
// advances *leaf past dt's leaves and sets *changed when it retypes one.
func int96Type(dt arrow.DataType, md *metadata.FileMetaData, unit arrow.TimeUnit, leaf *int, changed *bool) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.StructType:
		fields := append([]arrow.Field(nil), t.Fields()...)
		for i := range fields {
			fields[i].Type = int96Type(fields[i].Type, md, unit, leaf, changed)
		}
		return arrow.StructOf(fields...)
	case arrow.NestedType: // lists, maps, unions: their leaves counted, kept
		for _, f := range t.Fields() {
			var kept bool
			int96Type(f.Type, md, unit, leaf, &kept)
		}
		return dt
	case *arrow.TimestampType:
		col := *leaf
		*leaf++
		if col < md.Schema.NumColumns() && md.Schema.Column(col).PhysicalType() == parquet.Types.Int96 && t.Unit == arrow.Nanosecond {
			*changed = true
			return &arrow.TimestampType{Unit: unit, TimeZone: t.TimeZone}
		}
		return dt
	}
	*leaf++
	return dt
}

// julianUnixEpoch is the Julian day of 1970-01-01.
const julianUnixEpoch = 2440588

// int96Convert writes the k INT96 timestamps of src (the nanoseconds of the
// day, an int64, then the Julian day, an int32, little-endian) as int64
// counts of unit since the Unix epoch into dst, and fails on the first one
// outside their range, naming it.
//
// Nanoseconds are exact. The other units decode microseconds as Arrow C++
// and Spark do: the microseconds since the Julian epoch (the day's
// nanoseconds truncated) less the Unix epoch's, and milliseconds and seconds
// are those rounded down. Spark encodes an instant past year 292,278 (its
// year 290000 is one) with microseconds since the Julian epoch that wrapped
// around 2^64; such a value reads back as that instant, and any other
// outside an int64 of microseconds is refused.
func int96Convert(dst, src []byte, k int, unit arrow.TimeUnit) error {
	const (
		dayNanos          = 86400 * int64(time.Second)
		dayMicros         = dayNanos / 1000
		julianEpochMicros = julianUnixEpoch * dayMicros
	)
	per := int64(unit.Multiplier() / time.Microsecond) // microseconds per count (ms, s)
	for i := 0; i < k; i++ {
		v := src[i*12 : i*12+12]
		nanos := int64(binary.LittleEndian.Uint64(v))
		julian := int64(int32(binary.LittleEndian.Uint32(v[8:])))
		var out int64
		if unit == arrow.Nanosecond {
			whole, ok := mulExact(julian-julianUnixEpoch, dayNanos)
			if out, ok = addExact(whole, nanos, ok); !ok {
				return int96RangeError(julian, nanos, unit)
			}
		} else {
			// julian*dayMicros + nanos/1000 - julianEpochMicros in 128 bits
			// (|julian| < 2^31, dayMicros < 2^37).
			hi, lo := bits.Mul64(uint64(abs64(julian)), uint64(dayMicros))
			w := int128{int64(hi), lo}
			if julian < 0 {
				w = w.neg()
			}
			w = w.add(nanos / 1000).add(-julianEpochMicros)
			switch {
			case w.hi == 0 && w.lo <= math.MaxInt64 || w.hi == -1 && w.lo > math.MaxInt64:
				out = int64(w.lo)
			case w.hi == -1 && int64(w.lo) > math.MaxInt64-julianEpochMicros:
				out = int64(w.lo) // (Spark's wrap: the value plus 2^64)
			default:
				return int96RangeError(julian, nanos, unit)
			}
			if per > 1 {
				out = floorDiv(out, per)
			}
		}
		binary.LittleEndian.PutUint64(dst[i*8:], uint64(out))
	}
	return nil
}

// int128 is a two's complement 128-bit integer: hi*2^64 + lo.
type int128 struct {
	hi int64
	lo uint64
}

func (a int128) neg() int128 {
	lo, borrow := bits.Sub64(0, a.lo, 0)
	return int128{-a.hi - int64(borrow), lo}
}

// add is a plus b.
func (a int128) add(b int64) int128 {
	bhi := int64(0)
	if b < 0 {
		bhi = -1
	}
	lo, carry := bits.Add64(a.lo, uint64(b), 0)
	return int128{a.hi + bhi + int64(carry), lo}
}

// mulExact is a*b, and whether it fits an int64.
func mulExact(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	p := int64(lo)
	if (a < 0) != (b < 0) {
		p = -p
	}
	return p, true
}

// addExact is a+b, and ok and whether it fits an int64.
func addExact(a, b int64, ok bool) (int64, bool) {
	s := a + b
	return s, ok && !(b > 0 && s < a) && !(b < 0 && s > a)
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// int96RangeError is the error of the INT96 timestamp of Julian day julian
// and nanoseconds of the day nanos, which a timestamp of unit cannot hold.
func int96RangeError(julian, nanos int64, unit arrow.TimeUnit) error {
	days := julian - julianUnixEpoch
	at := time.Unix(days*86400+nanos/int64(time.Second), nanos%int64(time.Second)).UTC()
	msg := fmt.Sprintf("INT96 timestamp %s does not fit timestamp[%s]", at.Format(time.RFC3339Nano), unit)
	if unit != arrow.Nanosecond {
		msg = fmt.Sprintf("INT96 timestamp of Julian day %d does not fit timestamp[%s] (%s)", julian, unit, at.Format(time.RFC3339))
	} else {
		lo, hi := time.Unix(0, math.MinInt64).UTC(), time.Unix(0, math.MaxInt64).UTC()
		msg += fmt.Sprintf(" (%s to %s), which arrow-go reads INT96 as; read INT96 in microseconds to reach it (the command's --int96-unit us, the library's Options.Int96)",
			lo.Format(time.RFC3339Nano), hi.Format(time.RFC3339Nano))
	}
	return fmt.Errorf("%s", msg)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// int96Reason is the plan's reason for the INT96 columns of encrypted
// chunks.
const int96Reason = "encrypted INT96 values decoded by arrow-go's column reader, converted and aggregated on the cpu"

// int96GPUReason and int96SplitReason: int96Reason's values aggregated on
// the GPU, all or some.
const (
	int96GPUReason   = "encrypted INT96 values decoded by arrow-go's column reader and converted on the cpu, aggregated on the gpu"
	int96SplitReason = "encrypted INT96 values decoded by arrow-go's column reader and converted on the cpu, aggregated on the cpu and the gpu"
)

// encryptedInt96 aggregates the INT96 values of the encrypted chunk of leaf
// l in row group rg in unit: arrow-go's column reader of pf (the worker's own) decrypts and
// decodes them, a batch at a time, and int96Convert converts them (an
// instant outside the unit's range is an error); each batch is a view of
// the column's type, null where the definition levels say, folded by the
// engine. A repeated INT96 column is not read so (pqarrow reads it in
// nanoseconds, after checkEncryptedInt96).
func (r *parquetRun) encryptedInt96(ctx context.Context, pf *file.Reader, rg int, l *parquetLeaf, unit arrow.TimeUnit) (chunkResult, error) {
	start := time.Now()
	descr := pf.MetaData().Schema.Column(l.col)
	if descr.MaxRepetitionLevel() != 0 || l.list != nil || l.elem {
		return chunkResult{}, fmt.Errorf("%w: repeated INT96 timestamps of an encrypted column chunk read as timestamp[%s]", arrow.ErrNotImplemented, unit)
	}
	kind, err := arrow17.KindOf(l.typ)
	if err != nil {
		return chunkResult{}, err
	}
	cr, err := pf.RowGroup(rg).Column(l.col)
	if err != nil {
		return chunkResult{}, err
	}
	vr, ok := cr.(*file.Int96ColumnChunkReader)
	if !ok {
		return chunkResult{}, fmt.Errorf("an INT96 column read by a %T", cr)
	}
	res := chunkResult{state: agg.New(kind.Family(), r.aggs), plan: engine.ColumnPlan{Source: engine.SourceArrow, Reason: int96Reason}}
	const batch = 4096
	maxDef := descr.MaxDefinitionLevel()
	vals := make([]parquet.Int96, batch)
	def := make([]int16, batch)
	values := make([]byte, 8*batch)
	valid := make([]byte, bitutil.BytesForBits(batch))
	row := int64(0)
	for vr.HasNext() {
		if err := ctx.Err(); err != nil {
			return chunkResult{}, err
		}
		levels, n, err := vr.ReadBatch(batch, vals, def, nil)
		if err != nil {
			return chunkResult{}, err
		}
		if maxDef == 0 {
			levels = int64(n) // (no levels: every value is one)
		}
		k, nulls := 0, 0
		for i := 0; i < int(levels); i++ {
			if maxDef > 0 && def[i] < maxDef {
				bitutil.ClearBit(valid, i)
				binary.LittleEndian.PutUint64(values[8*i:], 0)
				nulls++
				continue
			}
			if k >= n {
				return chunkResult{}, fmt.Errorf("%w: %d INT96 values for %d present levels", errShortDecode, n, k+1)
			}
			if err := int96Convert(values[8*i:], vals[k][:], 1, unit); err != nil {
				return chunkResult{}, err
			}
			bitutil.SetBit(valid, i)
			k++
		}
		v := column.View{Type: l.typ, Kind: kind, Len: int(levels), NullCount: nulls, Values: values[:8*levels], Row: row}
		if nulls > 0 {
			v.Validity = valid
		}
		if err := res.foldView(ctx, r.eng, &v); err != nil {
			return chunkResult{}, err
		}
		res.plan.Bytes += v.ByteSize()
		row += levels
	}
	res.plan.Measured = time.Since(start)
	res.onDevice(int96GPUReason, int96SplitReason)
	return res, nil
}
