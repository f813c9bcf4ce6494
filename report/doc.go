// Package report prints aggregation results as an aligned table, JSON or CSV:
// the last step of the arrowagg command, after the engine (package engine)
// has aggregated a dataset.
//
// The map of the package:
//
//   - Report is what is printed: the dataset's rows and files, the requested
//     aggregates (agg.Set), one engine.Result per column in order, and
//     optionally the engine's plan (engine.ColumnPlan), which the JSON form
//     prints as "plan" (arrowagg --explain --format json).
//   - Format is Table, JSON or CSV; ParseFormat reads the --format flag.
//   - Write prints a Report in a Format, building the whole output before
//     writing any of it (report.go). Each aggregate of each column is turned
//     once into a value that every format prints (value.go): the
//     conversions of decimals, dates, timestamps, times, durations,
//     booleans, strings and binaries live there.
//
// Who calls it: the command arrowagg (cmd/arrowagg) prints its results with
// Write; tests of package dataset print through it too.
//
// The JSON form is a contract other programs parse:
//
//	{"rows": <int>, "files": <int>, "columns": [
//	  {"name", "type", "count", "null_count", "sum", "min", "max", "mean"}, ...]}
//
// with, only when requested, "stddev", "variance" (floats), "approx_distinct"
// (an integer) and the ordered aggregates after "mean".
//
// Integers (counts, integer sums, integer min/max) are exact JSON integers of
// any size; floats are the shortest form that reads back as the same float,
// always with a decimal point or an exponent, in scientific notation from
// 1e16 up and below 1e-4 (Python's repr), with NaN and the infinities as the strings "NaN", "Inf" and "-Inf";
// decimals are strings in plain notation with the column's scale; dates are
// "YYYY-MM-DD"; timestamps RFC 3339 in UTC with as many fractional digits as
// needed; times "HH:MM:SS" with the fractional digits of their unit;
// durations an integer with their unit ("1500ms"); booleans sum to the number
// of true values and have min/max true/false; strings have min/max as
// strings, binaries as text, with bytes outside printable ASCII and the
// backslash as \xHH (DuckDB's BLOB form). In CSV, a null is an empty field and
// an empty string "". An aggregate that was not requested,
// does not apply to the type or has no valid values is null.
package report
