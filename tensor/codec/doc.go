// Package codec reads and writes arrays in the formats users meet: NumPy's
// .npy (versions 1 to 3, any supported dtype, either byte order on read),
// CSV, the text NumPy prints for an array (summarized with "..." as NumPy
// does for large ones, byte for byte as NumPy 1.24 renders it), and Apache
// Arrow record batches, written a slab at a time.
//
// Both run it: the scheduler renders a tensor's files and reads .npy
// headers, the workers read and write .npy files.
package codec
