package wire

import (
	"bufio"
	"context"

	"marsfs/tensor"
)

// PutChunk stores a as chunk id on the worker serving at addr.
func PutChunk(ctx context.Context, addr string, id uint64, a *tensor.Array, key []byte) error {
	c, err := Dial(ctx, addr, ConnPut, key)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	bw := bufio.NewWriter(c)
	bw.Write(putID(id))
	if err := WriteChunk(bw, a); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return readStatus(bufio.NewReader(c))
}
