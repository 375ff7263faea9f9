package zarr

import (
	"runtime"
	"testing"
)

// TestReleaseFreesCodecs: the shared zstd codecs keep what a large store
// chunk made them grow (the decoder's history of a single-segment frame
// is the frame's size) until Release drops them.
func TestReleaseFreesCodecs(t *testing.T) {
	src := make([]byte, 64<<20)
	for i := range src {
		src[i] = byte(i % 13)
	}
	enc := zstdEncoder(0, false).EncodeAll(src, nil)
	dst := make([]byte, len(src))
	if _, err := unzstd(dst, enc); err != nil {
		t.Fatal(err)
	}
	src, enc, dst = nil, nil, nil
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	held := heap()
	Release()
	after := heap()
	t.Logf("the codecs held %d MiB of heap, %d MiB after Release", held>>20, after>>20)
	if held < 32<<20 {
		t.Skipf("the codecs held only %d MiB: nothing to show", held>>20)
	}
	if after > held/4 {
		t.Errorf("after Release the heap is %d MiB of %d", after>>20, held>>20)
	}
	if _, err := unzstd(make([]byte, 10), zstdEncoder(0, true).EncodeAll(make([]byte, 10), nil)); err != nil {
		t.Errorf("a codec made again after Release: %v", err)
	}
}
