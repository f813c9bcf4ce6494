//go:build race

package engine

// raceEnabled: the race detector makes every access ten times slower; the
// largest property sizes run for one type each (see bigSizes).
const raceEnabled = true
