//go:build race

package dataset

// raceEnabled: the race detector makes every access ten times slower; the
// largest combinatorial tests run a part of their cases under it (see
// raceSubset), and in full without it (the Makefile's DATASET_FULL_TESTS).
const raceEnabled = true
