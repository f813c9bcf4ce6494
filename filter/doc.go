// Package filter is the WHERE clause of a filtered aggregation: a small
// predicate language over the columns of a table, its parser, its binding to
// the kinds of column views, its evaluation into selection bitmaps on the CPU
// and the pruning of row groups by their statistics.
//
// The map of the package:
//
//   - Expr is a predicate's syntax tree: Compare (column op literal), In,
//     IsNull, And, Or and Not; Literal is a number (exact: a big.Rat), a
//     string or a boolean. String prints an expression in a canonical form
//     that Parse reads back to the same tree (ast.go).
//   - Parse reads the textual form (`price > 10 and region in ("EU", "US")`);
//     its errors are *SyntaxError, pointing at the offending token
//     (parse.go). Columns lists the columns an expression reads.
//   - Bind resolves an expression against the kinds of its input columns
//     (Input) into a Program: each literal converted exactly to the column's
//     domain (a comparison whose literal lies outside the domain becomes the
//     equivalent comparison inside it, or a constant), NOT pushed down to the
//     leaves (bind.go).
//   - Program.Select evaluates a Program over rows of column views into a
//     bitmap of the rows where the predicate is TRUE, in SQL's three-valued
//     logic, 64 rows a word, with a caller's Scratch (select.go).
//   - Program.MayMatch tells from partial aggregate states (agg.State) of a
//     row group's columns whether any of its rows may satisfy the predicate
//     (prune.go).
//
// Floats compare as IEEE 754 does: -0 equals +0, and a NaN value is neither
// equal to, less nor greater than any literal, so that `x = 1`, `x < 1` and
// `x in (1, 2)` are FALSE for NaN while `x != 1`, `x not in (1, 2)` and
// `not (x < 1)` are TRUE (NaN is a value, not a null: it is never UNKNOWN).
//
// The package imports only column and agg of this module: it is part of the
// core that depends on no Arrow Go version.
package filter
