package shm

import (
	"bytes"
	"math/rand"
	"testing"

	"marsfs/tensor"
)

// checkInvariants recomputes the store's shared-memory use from its state.
func checkInvariants(t *testing.T, s *Store) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var used, unsealed int64
	for _, c := range s.chunks {
		if c.resident {
			used += c.size
		}
		if !c.sealed {
			unsealed += c.size
		}
		if c.deleted || c.pins < 0 {
			t.Fatalf("chunk %d: deleted %v pins %d", c.id, c.deleted, c.pins)
		}
	}
	for c := range s.zombies {
		if c.resident {
			used += c.size
		}
		if c.pins <= 0 {
			t.Fatalf("zombie %d with %d pins", c.id, c.pins)
		}
	}
	used += s.freeBytes()
	if used != s.used {
		t.Fatalf("used %d, accounted %d", s.used, used)
	}
	if s.used > s.limit {
		t.Fatalf("used %d > limit %d", s.used, s.limit)
	}
	if s.freeBytes() > s.keepFree {
		t.Fatalf("free list %d > %d", s.freeBytes(), s.keepFree)
	}
}

// TestStoreModel drives a store with random operations and checks it
// against a map of what each chunk must hold.
func TestStoreModel(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := openTest(t, 96<<10, 24<<10)
		want := map[uint64]*tensor.Array{}
		unsealed := map[uint64][]byte{}
		type heldView struct {
			v    *View
			want []byte
		}
		var views []heldView
		gen := 0
		for step := range 3000 {
			id := uint64(rng.Intn(24))
			switch op := rng.Intn(10); {
			case op < 3: // create, fill, maybe seal later
				gen++
				a := pattern(uint64(gen), rng.Intn(3000))
				b, err := s.Create(id, a.DType, a.Shape)
				if err != nil {
					// Only unsealed chunks and deleted ones still read
					// can leave no room.
					s.mu.Lock()
					zombies := len(s.zombies)
					s.mu.Unlock()
					if len(unsealed) == 0 && zombies == 0 {
						t.Fatalf("seed %d step %d: %v", seed, step, err)
					}
					// The chunk it replaced is gone all the same.
					delete(want, id)
					delete(unsealed, id)
					continue
				}
				copy(b, a.Data)
				delete(want, id)
				want[id] = a
				unsealed[id] = b
				if rng.Intn(4) > 0 {
					if err := s.Seal(id); err != nil {
						t.Fatal(err)
					}
					delete(unsealed, id)
				}
			case op < 4: // seal all
				for id := range unsealed {
					if err := s.Seal(id); err != nil {
						t.Fatal(err)
					}
				}
				clear(unsealed)
			case op < 7: // read
				var v *View
				var err error
				if rng.Intn(3) == 0 {
					v, err = s.GetPrivate(id)
				} else {
					v, err = s.Get(id)
				}
				a, held := want[id]
				_, writing := unsealed[id]
				switch {
				case !held:
					if err == nil {
						t.Fatalf("step %d: Get of deleted chunk %d", step, id)
					}
				case writing:
					if err == nil {
						t.Fatalf("step %d: Get of unsealed chunk %d", step, id)
					}
				case err != nil:
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				default:
					if !bytes.Equal(v.Data, a.Data) {
						t.Fatalf("seed %d step %d: chunk %d differs", seed, step, id)
					}
					views = append(views, heldView{v, a.Data})
				}
			case op < 8: // delete
				_, held := want[id]
				if s.Delete(id) != held {
					t.Fatalf("step %d: Delete(%d) disagrees", step, id)
				}
				delete(want, id)
				delete(unsealed, id)
			case op < 9: // spill or rank
				if rng.Intn(2) == 0 {
					err := s.Spill(id)
					_, held := want[id]
					_, writing := unsealed[id]
					if (err == nil) != (held && !writing) {
						t.Fatalf("step %d: Spill(%d): %v", step, id, err)
					}
				} else {
					s.SetNextUse(id, int64(rng.Intn(100)))
				}
			default: // release views; older ones must still hold their bytes
				kept := views[:0]
				for _, h := range views {
					if !bytes.Equal(h.v.Data, h.want) {
						t.Fatalf("seed %d step %d: a view of chunk %d changed", seed, step, h.v.ID)
					}
					if rng.Intn(2) == 0 {
						kept = append(kept, h)
						continue
					}
					h.v.Release()
				}
				views = kept
			}
			checkInvariants(t, s)
		}
		for _, h := range views {
			h.v.Release()
		}
		st := s.Stats()
		if st.Spilled == 0 || st.Reloaded == 0 {
			t.Fatalf("seed %d: the model did not exercise spill and reload: %+v", seed, st)
		}
		for id := range want {
			s.Delete(id)
		}
		checkInvariants(t, s)
		if st := s.Stats(); st.Used != st.Free || st.Pinned != 0 {
			t.Fatalf("seed %d: after deleting all: %+v", seed, st)
		}
	}
}
