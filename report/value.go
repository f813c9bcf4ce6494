package report

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// kind is how a value is written in JSON.
type kind uint8

const (
	null    kind = iota
	number       // a JSON number: text is its exact literal
	text         // a JSON string
	boolean      // true or false
)

// value is one aggregate of one column, ready to print in every format.
type value struct {
	kind kind
	s    string // the text form: the number, the string, "true" or "false"
}

var nullValue = value{}

func numberOf(s string) value { return value{number, s} }

func textOf(s string) value { return value{text, s} }

// aggOrder are the aggregates in output order, with their names (agg's one
// table).
var aggOrder = func() []struct {
	agg  agg.Set
	name string
} {
	each := agg.Each()
	out := make([]struct {
		agg  agg.Set
		name string
	}, len(each))
	for i, a := range each {
		out[i].agg, out[i].name = a, a.Name()
	}
	return out
}()

// listed reports whether the JSON and CSV outputs have a field for aggregate
// a: the six base aggregates always (null when not requested), the others
// (the statistics, the ordered aggregates) only when requested, so that the
// contract of the base six is stable.
func listed(a, aggs agg.Set) bool {
	return agg.Default.Has(a) || aggs.Has(a)
}

// values returns the aggregates of r in aggOrder: null when not requested
// (not in aggs), not applicable to the type, or without valid values.
func values(r engine.Result, aggs agg.Set) ([]value, error) {
	out := make([]value, len(aggOrder))
	for i, a := range aggOrder {
		if !aggs.Has(a.agg) {
			continue
		}
		var err error
		switch a.agg {
		case agg.Count:
			out[i] = numberOf(strconv.FormatInt(r.Count, 10))
		case agg.NullCount:
			out[i] = numberOf(strconv.FormatInt(r.NullCount, 10))
		case agg.Sum:
			out[i], err = sumValue(r)
		case agg.Min:
			out[i], err = scalarValue(r.Min, valueType(r.Type))
		case agg.Max:
			out[i], err = scalarValue(r.Max, valueType(r.Type))
		case agg.Mean:
			out[i], err = scalarValue(r.Mean, arrow.PrimitiveTypes.Float64)
		case agg.Stddev:
			out[i], err = scalarValue(r.Stddev, arrow.PrimitiveTypes.Float64)
		case agg.Variance:
			out[i], err = scalarValue(r.Variance, arrow.PrimitiveTypes.Float64)
		case agg.ApproxDistinct:
			out[i], err = scalarValue(r.ApproxDistinct, arrow.PrimitiveTypes.Int64)
		case agg.First:
			out[i], err = scalarValue(r.First, valueType(r.Type))
		case agg.Last:
			out[i], err = scalarValue(r.Last, valueType(r.Type))
		case agg.ArgMin:
			out[i], err = scalarValue(r.ArgMin, arrow.PrimitiveTypes.Int64)
		case agg.ArgMax:
			out[i], err = scalarValue(r.ArgMax, arrow.PrimitiveTypes.Int64)
		}
		if err != nil {
			return nil, fmt.Errorf("column %q, %s: %w", r.Name, a.name, err)
		}
	}
	return out, nil
}

// valueType is the type of a column's values (a dictionary's value type),
// as its results have it: decimal128 of decimal32's and decimal64's
// precision and scale (see engine.Result).
func valueType(dt arrow.DataType) arrow.DataType {
	if d, ok := dt.(*arrow.DictionaryType); ok {
		dt = d.ValueType
	}
	if d, ok := dt.(*arrow17.NarrowDecimalType); ok {
		return d.Decimal128()
	}
	return dt
}

// sumValue prints a sum exactly: integer sums of any size as JSON integers,
// decimal sums in plain notation with the column's scale, durations with
// their unit.
func sumValue(r engine.Result) (value, error) {
	if r.Sum == nil || (!r.Sum.IsValid() && !r.SumOverflow) {
		return nullValue, nil
	}
	vt := valueType(r.Type)
	if f, ok := r.Sum.(*scalar.Float64); ok {
		return floatValue(f.Value, 64), nil
	}
	if r.SumExact == nil {
		return nullValue, fmt.Errorf("sum of type %s without its exact value", r.Sum.DataType())
	}
	switch t := vt.(type) {
	case *arrow.Decimal128Type:
		return textOf(formatDecimal(r.SumExact, t.Scale)), nil
	case *arrow.DurationType:
		return textOf(r.SumExact.String() + t.Unit.String()), nil
	}
	return numberOf(r.SumExact.String()), nil
}

func intValue[T int8 | int16 | int32 | int64](v T) value {
	return numberOf(strconv.FormatInt(int64(v), 10))
}

func uintValue[T uint8 | uint16 | uint32 | uint64](v T) value {
	return numberOf(strconv.FormatUint(uint64(v), 10))
}

// scalarValue prints a min, max or mean of a column whose values are of
// type dt.
func scalarValue(s scalar.Scalar, dt arrow.DataType) (value, error) {
	if s == nil || !s.IsValid() {
		return nullValue, nil
	}
	switch s := s.(type) {
	case *scalar.Int8:
		return intValue(s.Value), nil
	case *scalar.Int16:
		return intValue(s.Value), nil
	case *scalar.Int32:
		return intValue(s.Value), nil
	case *scalar.Int64:
		return intValue(s.Value), nil
	case *scalar.Uint8:
		return uintValue(s.Value), nil
	case *scalar.Uint16:
		return uintValue(s.Value), nil
	case *scalar.Uint32:
		return uintValue(s.Value), nil
	case *scalar.Uint64:
		return uintValue(s.Value), nil
	case *scalar.Float16:
		return halfValue(s.Value.Uint16()), nil
	case *scalar.Float32:
		return floatValue(float64(s.Value), 32), nil
	case *scalar.Float64:
		return floatValue(s.Value, 64), nil
	case *scalar.Boolean:
		return value{boolean, strconv.FormatBool(s.Value)}, nil
	case *scalar.Decimal128:
		t, ok := dt.(*arrow.Decimal128Type)
		if !ok {
			break
		}
		return textOf(formatDecimal(s.Value.BigInt(), t.Scale)), nil
	case *scalar.Decimal256: // (a grouped sum that overflows decimal128)
		t, ok := dt.(*arrow.Decimal256Type)
		if !ok {
			break
		}
		return textOf(formatDecimal(s.Value.BigInt(), t.Scale)), nil
	case *scalar.Date32:
		return textOf(time.Unix(int64(s.Value)*86400, 0).UTC().Format(time.DateOnly)), nil
	case *scalar.Date64:
		return textOf(time.UnixMilli(int64(s.Value)).UTC().Format(time.DateOnly)), nil
	case *scalar.Time32:
		t, ok := dt.(*arrow.Time32Type)
		if !ok {
			break
		}
		return textOf(formatTime(int64(s.Value), t.Unit)), nil
	case *scalar.Time64:
		t, ok := dt.(*arrow.Time64Type)
		if !ok {
			break
		}
		return textOf(formatTime(int64(s.Value), t.Unit)), nil
	case *scalar.Timestamp:
		t, ok := dt.(*arrow.TimestampType)
		if !ok {
			break
		}
		return textOf(formatTimestamp(int64(s.Value), t.Unit)), nil
	case *scalar.Duration:
		t, ok := dt.(*arrow.DurationType)
		if !ok {
			break
		}
		return textOf(strconv.FormatInt(int64(s.Value), 10) + t.Unit.String()), nil
	case *scalar.String:
		return textOf(string(s.Value.Bytes())), nil
	case *scalar.LargeString:
		return textOf(string(s.Value.Bytes())), nil
	case *scalar.Binary:
		return textOf(binaryText(s.Value.Bytes())), nil
	case *scalar.LargeBinary:
		return textOf(binaryText(s.Value.Bytes())), nil
	case *scalar.FixedSizeBinary:
		return textOf(binaryText(s.Value.Bytes())), nil
	}
	return nullValue, fmt.Errorf("no output form for a %s scalar of a %s column", s.DataType(), dt)
}

// binaryText prints the bytes of a binary value as text, as DuckDB prints
// a BLOB: as they are when they are text (valid UTF-8 without control
// characters or backslashes: Impala and Spark store strings as binary),
// else with every byte outside printable ASCII, and the backslash, as \xHH.
func binaryText(b []byte) string {
	plain := utf8.Valid(b)
	for _, c := range b {
		if c < 0x20 || c == 0x7f || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(b)
	}
	var sb strings.Builder
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			fmt.Fprintf(&sb, "\\x%02X", c)
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// floatValue prints a float as Python's repr does (and so pyarrow and
// DuckDB): the shortest digits that read back as the same float of the
// given size, in plain notation with a decimal point (42.0) from 1e-4 up to
// 1e16, in scientific notation (4.257847474654077e+16, 1e-05) outside, where
// plain digits would pass for exact ones: a float never prints as an
// integer, and reads back as a float in JSON. NaN and the infinities are the
// strings "NaN", "Inf" and "-Inf".
func floatValue(f float64, bits int) value {
	switch {
	case math.IsNaN(f):
		return textOf("NaN")
	case math.IsInf(f, 1):
		return textOf("Inf")
	case math.IsInf(f, -1):
		return textOf("-Inf")
	}
	return numberOf(formatFloat(f, bits))
}

// halfValue prints a half-precision float as floatValue prints the others:
// the shortest digits that read back as the same half (strconv knows no
// halves: the digits are searched, at most 5 of them).
func halfValue(h uint16) value {
	f := column.HalfToFloat64(h)
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return floatValue(f, 64)
	}
	for prec := 0; prec < 17; prec++ {
		short, err := strconv.ParseFloat(strconv.FormatFloat(f, 'e', prec, 64), 64)
		if err == nil && column.HalfFromFloat64(short) == h {
			return floatValue(short, 64)
		}
	}
	return floatValue(f, 64)
}

func formatFloat(f float64, bits int) string {
	var buf [48]byte
	return string(appendFloat(buf[:0], f, bits))
}

// appendFloat appends formatFloat's text of f to dst.
func appendFloat(dst []byte, f float64, bits int) []byte {
	var buf [32]byte
	sci := strconv.AppendFloat(buf[:0], f, 'e', -1, bits) // -d.ddde±XX
	e := bytes.LastIndexByte(sci, 'e')
	exp := 0
	for _, c := range sci[e+2:] {
		exp = 10*exp + int(c-'0')
	}
	if sci[e+1] == '-' {
		exp = -exp
	}
	if f != 0 && (exp < -4 || exp >= 16) {
		return append(dst, sci...)
	}
	// The same shortest digits in plain notation, with a decimal point.
	mant := sci[:e]
	out := dst
	if mant[0] == '-' {
		out = append(out, '-')
		mant = mant[1:]
	}
	digits := make([]byte, 0, 24)
	digits = append(digits, mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...) // (after the point)
	}
	switch {
	case f == 0:
		out = append(out, "0.0"...)
	case exp < 0:
		out = append(out, "0."...)
		for range -exp - 1 {
			out = append(out, '0')
		}
		out = append(out, digits...)
	case len(digits) <= exp+1:
		out = append(out, digits...)
		for range exp + 1 - len(digits) {
			out = append(out, '0')
		}
		out = append(out, ".0"...)
	default:
		out = append(out, digits[:exp+1]...)
		out = append(out, '.')
		out = append(out, digits[exp+1:]...)
	}
	return out
}

// formatDecimal prints unscaled * 10^-scale in plain notation with exactly
// scale fractional digits (none when scale <= 0).
func formatDecimal(unscaled *big.Int, scale int32) string {
	digits := new(big.Int).Abs(unscaled).String()
	switch {
	case scale < 0 && digits != "0":
		digits += strings.Repeat("0", int(-scale))
	case scale > 0:
		if len(digits) <= int(scale) {
			digits = strings.Repeat("0", int(scale)-len(digits)+1) + digits
		}
		cut := len(digits) - int(scale)
		digits = digits[:cut] + "." + digits[cut:]
	}
	if unscaled.Sign() < 0 {
		return "-" + digits
	}
	return digits
}

var unitPerSecond = map[arrow.TimeUnit]int64{arrow.Second: 1, arrow.Millisecond: 1e3, arrow.Microsecond: 1e6, arrow.Nanosecond: 1e9}

var unitDigits = map[arrow.TimeUnit]int{arrow.Second: 0, arrow.Millisecond: 3, arrow.Microsecond: 6, arrow.Nanosecond: 9}

// splitUnits splits v units into whole seconds and nanoseconds (>= 0).
func splitUnits(v int64, unit arrow.TimeUnit) (sec, nsec int64) {
	per := unitPerSecond[unit]
	sec, rem := v/per, v%per
	if rem < 0 {
		sec, rem = sec-1, rem+per
	}
	return sec, rem * (1e9 / per)
}

// formatTimestamp prints a timestamp in RFC 3339, in UTC, with as many
// fractional digits as it needs.
func formatTimestamp(v int64, unit arrow.TimeUnit) string {
	sec, nsec := splitUnits(v, unit)
	return time.Unix(sec, nsec).UTC().Format(time.RFC3339Nano)
}

// formatTime prints a time of day as HH:MM:SS with the fractional digits of
// its unit (as Arrow prints it); a value outside the day prints as an
// integer with its unit.
func formatTime(v int64, unit arrow.TimeUnit) string {
	per := unitPerSecond[unit]
	if v < 0 || v >= 86400*per {
		return strconv.FormatInt(v, 10) + unit.String()
	}
	sec, frac := v/per, v%per
	s := fmt.Sprintf("%02d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	if d := unitDigits[unit]; d > 0 {
		s += fmt.Sprintf(".%0*d", d, frac)
	}
	return s
}
