//go:build !linux

package column

import "errors"

// mappable: Arena's mappings are Linux's alone; elsewhere its arrays grow
// on the Go heap.
const mappable = false

var pageBytes = 4096

var errNoMappings = errors.New("no arena mappings on this system")

func mapBytes(int) ([]byte, error)      { return nil, errNoMappings }
func remap([]byte, int) ([]byte, error) { return nil, errNoMappings }
func unmapBytes([]byte) error           { return nil }
