package main

import "github.com/arrowagg/arrowagg/engine"

// parseWhere parses the predicate of --where.
func parseWhere(src string) (engine.RowFilter, error) {
	return nil, usagef("--where: not available yet")
}
