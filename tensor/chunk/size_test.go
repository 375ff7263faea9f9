package chunk

import (
	"testing"
	"unsafe"
)

// TestOpSize holds the Op struct to the bytes a graph of 10^7 operands
// pays for each (docs/architecture.md, Scale): a field that widens it
// shows here.
func TestOpSize(t *testing.T) {
	if n := unsafe.Sizeof(Op{}); n > 112 {
		t.Errorf("chunk.Op is %d bytes, more than 112", n)
	}
}
