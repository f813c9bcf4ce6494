// Package column gives physical views of Arrow columns: the storage kind of the
// values, the data buffer with its element offset and length, the validity bitmap
// with its bit offset, and for dictionary arrays the indices and the dictionary.
//
// A View is what every backend reads: the CPU loops of package backend/cpu and the CUDA
// kernels alike. Leaves flattens struct columns into leaf fields with dotted names
// and reports list, map, union and other nested types as unsupported, per column,
// without failing the whole request.
package column
