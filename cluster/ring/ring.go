// Package ring places sessions on schedulers by consistent hashing, as
// Mars placed its operand actors (seed 003): each scheduler holds Points
// points of a 64-bit circle, hashed from its name, and a key belongs to
// the scheduler of the first point at or after the key's hash. A
// scheduler that joins or leaves moves only the keys of the arcs its
// points take or give back, about 1/n of them; the others keep their
// scheduler. It is a pure function of the names: every scheduler that
// sees the same members computes the same homes.
package ring

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sort"
	"strconv"
)

// Points is the number of points a scheduler holds: with 128, the share
// of keys of each of a few schedulers stays within some 10% of 1/n.
const Points = 128

type point struct {
	at   uint64
	name string
}

// A Ring is the circle of a set of schedulers. The zero Ring is empty.
type Ring struct {
	points []point
	names  []string
}

// New returns the ring of the named schedulers.
func New(names []string) *Ring {
	r := &Ring{names: slices.Clone(names)}
	slices.Sort(r.names)
	r.names = slices.Compact(r.names)
	for _, n := range r.names {
		for i := range Points {
			r.points = append(r.points, point{hash(n + "#" + strconv.Itoa(i)), n})
		}
	}
	sort.Slice(r.points, func(i, j int) bool {
		if r.points[i].at != r.points[j].at {
			return r.points[i].at < r.points[j].at
		}
		return r.points[i].name < r.points[j].name
	})
	return r
}

func hash(s string) uint64 {
	sum := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(sum[:8])
}

// Names lists the ring's schedulers, sorted.
func (r *Ring) Names() []string { return r.names }

// Home returns the scheduler of key ("" on an empty ring).
func (r *Ring) Home(key uint64) string {
	if len(r.points) == 0 {
		return ""
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], key)
	h := hash(string(b[:]))
	i := sort.Search(len(r.points), func(i int) bool { return r.points[i].at >= h })
	if i == len(r.points) {
		i = 0
	}
	return r.points[i].name
}

// Successor returns the scheduler after name on the ring: the next
// distinct scheduler clockwise from name's first point, "" when name is
// alone or absent. It is where name's journal is to be copied.
func (r *Ring) Successor(name string) string {
	first := -1
	for i, p := range r.points {
		if p.name == name {
			first = i
			break
		}
	}
	if first < 0 {
		return ""
	}
	for k := 1; k < len(r.points); k++ {
		if p := r.points[(first+k)%len(r.points)]; p.name != name {
			return p.name
		}
	}
	return ""
}
