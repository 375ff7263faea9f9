package kernel

import (
	"fmt"
	"io"

	"marsfs/tensor/codec/zarr"
)

// rawInPlace reports whether a store chunk of arr is its elements as they
// lie in memory: no codec, C order, little-endian, unsharded.
func rawInPlace(arr *zarr.Array) bool {
	return len(arr.Codecs) == 0 && arr.Shard == nil && arr.Perm == nil && !arr.BigEndian
}

// readRaw reads the uncompressed store chunk at name straight into dst,
// which it fills: no buffer of the file's bytes, and no copy of them
// (a copy of a 100 MB chunk, which cannot be preempted, held every
// other goroutine of a loaded worker at the collector's next stop for
// long enough that the cluster's failure detector declared it dead).
func readRaw(data Dir, name string, dst []byte) error {
	f, err := data.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != int64(len(dst)) {
		return fmt.Errorf("%s: an uncompressed chunk of %d bytes, want %d", name, st.Size(), len(dst))
	}
	if _, err := io.ReadFull(f, dst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
