package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
)

// Datasets, as xarray writes them to Zarr (format 2): a group holds one
// array a variable or coordinate, each array's .zattrs names its
// dimensions under _ARRAY_DIMENSIONS, and the group's .zmetadata
// consolidates every .zgroup, .zarray and .zattrs below it, so a reader
// opens the dataset with one read (xarray's open_zarr reads it first).

// GroupMeta is a format 2 group's .zgroup.
var GroupMeta = []byte("{\n    \"zarr_format\": 2\n}\n")

// GroupRoot returns the group an array at p (a slash-separated path)
// belongs to, as xarray's stores are named: the first directory on the
// path whose name ends in ".zarr", above the array itself. ok is false for
// an array on no such path ("out.zarr", "data/t.zarr").
func GroupRoot(p string) (root string, ok bool) {
	parts := strings.Split(p, "/")
	for i, name := range parts[:len(parts)-1] {
		if strings.HasSuffix(name, ".zarr") {
			return strings.Join(parts[:i+1], "/"), true
		}
	}
	return "", false
}

// GroupsOn lists the groups from root down to the array at p's parent,
// root first: the directories a write of p makes groups of.
func GroupsOn(root, p string) []string {
	dirs := []string{root}
	rest := strings.TrimPrefix(path.Dir(p), root)
	for _, name := range strings.Split(strings.Trim(rest, "/"), "/") {
		if name != "" {
			dirs = append(dirs, path.Join(dirs[len(dirs)-1], name))
		}
	}
	return dirs
}

// AttrsMeta returns an array's .zattrs: its dimension names (xarray's
// _ARRAY_DIMENSIONS) and the attributes attrs holds (a JSON object, or
// empty for none). An attribute named _ARRAY_DIMENSIONS is refused: dims
// says it.
func AttrsMeta(dims []string, attrs []byte) ([]byte, error) {
	doc := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(attrs)) > 0 {
		if err := json.Unmarshal(attrs, &doc); err != nil {
			return nil, fmt.Errorf("attrs: %w", err)
		}
	}
	if _, ok := doc["_ARRAY_DIMENSIONS"]; ok {
		return nil, errors.New("attrs: _ARRAY_DIMENSIONS is given by dims=")
	}
	if dims != nil {
		raw, err := json.Marshal(dims)
		if err != nil {
			return nil, err
		}
		doc["_ARRAY_DIMENSIONS"] = raw
	}
	out, err := json.MarshalIndent(doc, "", "    ") // keys sorted, as zarr-python writes them
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// metaFiles are the files consolidated metadata holds.
var metaFiles = []string{".zgroup", ".zarray", ".zattrs"}

// Consolidate returns the .zmetadata of the group at root in fsys: every
// .zgroup, .zarray and .zattrs below it, keyed by their paths from root.
// Directories whose names start with "." (marsfs' arrays being written,
// .NAME.marsfs-*.part, and those moved aside) are not part of the store.
func Consolidate(fsys fs.FS, root string) ([]byte, error) {
	meta := map[string]json.RawMessage{}
	// add records the metadata file at p, if there is one.
	add := func(p string) error {
		raw, err := fs.ReadFile(fsys, p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !json.Valid(raw) {
			return fmt.Errorf("%s: not JSON", p)
		}
		meta[strings.TrimPrefix(strings.TrimPrefix(p, root), "/")] = json.RawMessage(bytes.TrimSpace(raw))
		return nil
	}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || strings.Contains(d.Name(), ".marsfs-")) {
				return fs.SkipDir
			}
			if _, err := fs.Stat(fsys, path.Join(p, ".zarray")); err == nil {
				// An array: its metadata are read by name, and its
				// chunk files (thousands, nested with "/") not listed.
				for _, name := range metaFiles[1:] {
					if err := add(path.Join(p, name)); err != nil {
						return err
					}
				}
				return fs.SkipDir
			}
			return nil
		}
		if !slices.Contains(metaFiles, d.Name()) {
			return nil
		}
		return add(p)
	})
	if err != nil {
		return nil, err
	}
	doc := struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Format   int                        `json:"zarr_consolidated_format"`
	}{meta, 1}
	out, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// UseDatasetFill gives a dataset's variable the fill value xarray writes:
// NaN for floats and none (null) for other dtypes. xarray reads a fill
// value as _FillValue and masks the elements equal to it, so the zero
// zarr-python defaults to would turn every 0 of the data into NaN.
func (a *Array) UseDatasetFill() {
	if a.DType.IsFloat() {
		a.Fill = make([]byte, a.DType.Size())
		setFloat(a.Fill, a.DType, math.NaN())
		return
	}
	a.Fill = nil
}
