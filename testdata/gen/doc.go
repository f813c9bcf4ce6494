// Command gen writes the data files of testdata/ (sample.parquet,
// sample.arrow, sample.arrows): one schema holding every type the engine
// aggregates, with nulls, NaN, infinities, sums beyond 64 bits, several row
// groups and dictionary pages, the same bytes on every run.
//
//	go run ./testdata/gen [DIR]   (default DIR: testdata)
//
// With -tiny it writes instead, into DIR, tiny.parquet and tiny.arrow: 3
// rows of the same columns, on which a run costs its start-up alone
// (scripts/gpu-build.sh makes them for scripts/startup-check.sh).
//
//	go run ./testdata/gen -tiny DIR
//
// It is a thin wrapper of package internal/testdatagen, which tests also use
// to rebuild the rows. make testdata runs it, then refreshes the command's
// golden outputs (go test ./cmd/arrowagg -run '^TestGolden$' -update).
package main
