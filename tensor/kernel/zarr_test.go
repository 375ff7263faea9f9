package kernel

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/codec/zarr"
)

// TestToZarrCommitLast runs the ops of a to_zarr by hand and stops before
// the commit, as a failed or cancelled graph does: nothing is at the
// array's path, and the temporary directory has no metadata. The commit
// then puts the whole array in place, replacing (with overwrite) what
// was there; a second write without overwrite is refused at the create.
func TestToZarrCommitLast(t *testing.T) {
	dir, ctx := dataDir(t)
	os.MkdirAll(filepath.Join(dir, "out.zarr", "old"), 0o755) // what overwrite replaces
	arr, err := zarr.New([]int{4, 3}, []int{2, 3}, tensor.Float64, 2, "zstd")
	if err != nil {
		t.Fatal(err)
	}
	base := chunk.ZarrWriteArgs{Path: "out.zarr", Temp: "out.zarr.marsfs-1.part", Overwrite: true, Array: arr.Desc()}
	run := func(kind chunk.Kind, args chunk.ZarrWriteArgs, in ...*tensor.Array) error {
		_, err := Run(ctx, &chunk.Op{Kind: kind, Inputs: make([]int, len(in)), Shape: []int{}, DType: tensor.Bool, Args: args}, in)
		return err
	}
	if err := run("to_zarr.create", base); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		x := tensor.NewArray(tensor.Float64, []int{2, 3})
		for j := range x.Float64s() {
			x.Float64s()[j] = float64(6*i + j)
		}
		w := base
		w.Index, w.Offsets = []int{i, 0}, [][]int{{2 * i, 0}}
		if err := run("to_zarr.write", w, x, done()); err != nil {
			t.Fatal(err)
		}
	}
	// Every chunk written, no commit yet.
	if _, err := os.Stat(filepath.Join(dir, "out.zarr", ".zarray")); err == nil {
		t.Fatal("the array looks complete before its commit")
	}
	if _, err := os.Stat(filepath.Join(dir, base.Temp, ".zarray")); err == nil {
		t.Fatal("the temporary directory has metadata before the commit")
	}
	if err := run("to_zarr.commit", base); err != nil {
		t.Fatal(err)
	}
	back, err := zarr.Open(os.DirFS(dir), "out.zarr")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.zarr", "old")); err == nil || back.Shape[0] != 4 {
		t.Errorf("the replaced array is still there, or the new one wrong: %v", back.Shape)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "out.zarr.marsfs-*")); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
	base.Overwrite = false
	if err := run("to_zarr.create", base); err == nil {
		t.Error("create over an existing array without overwrite")
	}
}

// dataDir makes a temporary directory the kernels' file ops read and
// write under (WithData), closed when t ends, and the context that
// carries it.
func dataDir(t *testing.T) (string, context.Context) {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return dir, WithData(context.Background(), root)
}
