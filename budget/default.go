package budget

import "sync"

// The default budget is DefaultFraction of the machine's memory (of the
// memory limit of its control group when that is less), at most DefaultMax
// and at least DefaultMin. A read whose inputs fit it holds, besides, a
// constant: the Go runtime, the buffers of up to a few MiB each worker keeps
// uncharged, the engine's morsel buffers (see the README's Limits).
const (
	DefaultFraction = 4 // a quarter
	DefaultMax      = 768 << 20
	DefaultMin      = 64 << 20
)

// DefaultBytes is the size of the default budget on this machine.
func DefaultBytes() int64 {
	return defaultBytes(physicalMemory())
}

func defaultBytes(physical int64) int64 {
	if physical <= 0 {
		return DefaultMax
	}
	return min(max(physical/DefaultFraction, DefaultMin), DefaultMax)
}

var (
	defaultOnce   sync.Once
	defaultBudget *Budget
)

// Default is the process's budget shared by every read that is given no
// budget of its own: DefaultBytes.
func Default() *Budget {
	defaultOnce.Do(func() { defaultBudget = New(DefaultBytes(), "the default memory budget") })
	return defaultBudget
}
