package main

import "github.com/arrowagg/arrowagg/engine"

// parseWhere parses the predicate of --where; a syntax error is a usage
// error pointing at the offending token.
func parseWhere(src string) (engine.RowFilter, error) {
	f, err := engine.Where(src)
	if err != nil {
		return nil, usagef("--where: %w", err)
	}
	return f, nil
}
