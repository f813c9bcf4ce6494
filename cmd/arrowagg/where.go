package main

import (
	"strings"

	"github.com/arrowagg/arrowagg/engine"
)

// parseWhere parses the predicate of --where; a syntax error is a usage
// error pointing at the offending token ("--where: at offset 5 near ...":
// the flag names the predicate, where the library's error says "where").
func parseWhere(src string) (engine.RowFilter, error) {
	f, err := engine.Where(src)
	if err != nil {
		return nil, usagef("--where: %s", strings.TrimPrefix(err.Error(), "where: "))
	}
	return f, nil
}
