package shm

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"sync"
	"sync/atomic"
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
		unsealed := map[uint64]*Buffer{}
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
				buf, err := s.Create(id, a.DType, a.Shape)
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
					if old, ok := unsealed[id]; ok {
						old.Abort()
					}
					delete(want, id)
					delete(unsealed, id)
					continue
				}
				copy(buf.Data, a.Data)
				if old, ok := unsealed[id]; ok {
					// Replaced while being written: its Seal fails.
					if old.Seal() == nil {
						t.Fatalf("step %d: Seal of a replaced chunk succeeded", step)
					}
				}
				delete(want, id)
				want[id] = a
				unsealed[id] = buf
				if rng.Intn(4) > 0 {
					if err := buf.Seal(); err != nil {
						t.Fatal(err)
					}
					delete(unsealed, id)
				}
			case op < 4: // seal all
				for _, buf := range unsealed {
					if err := buf.Seal(); err != nil {
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
				if old, ok := unsealed[id]; ok {
					// Deleted while being written: its Seal fails.
					if old.Seal() == nil {
						t.Fatalf("step %d: Seal of a deleted chunk succeeded", step)
					}
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
		for _, buf := range unsealed {
			if err := buf.Seal(); err != nil {
				t.Fatal(err)
			}
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

// fillVersioned writes version v of chunk id: the version in the first 8
// bytes, then bytes derived from both, so a reader can check a chunk alone.
func fillVersioned(b []byte, id, v uint64) {
	binary.LittleEndian.PutUint64(b, v)
	for i := 8; i < len(b); i++ {
		b[i] = byte(uint64(i)*13 + id*5 + v*3)
	}
}

func checkVersioned(b []byte, id uint64) bool {
	v := binary.LittleEndian.Uint64(b)
	for i := 8; i < len(b); i++ {
		if b[i] != byte(uint64(i)*13+id*5+v*3) {
			return false
		}
	}
	return true
}

// TestStoreConcurrent has goroutines create, read, spill and delete
// overlapping chunks at once, so that spills and reloads run unlocked beside
// everything else; every view read must be a whole version of its chunk.
func TestStoreConcurrent(t *testing.T) {
	s := openTest(t, 128<<10, 16<<10)
	var wg sync.WaitGroup
	var version atomic.Uint64
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for range 600 {
				id := uint64(rng.Intn(16))
				switch rng.Intn(8) {
				case 0, 1:
					b, err := s.Create(id, tensor.Int64, []int{1 + rng.Intn(3000)})
					if err != nil {
						continue // room held by chunks being written
					}
					fillVersioned(b.Data, id, version.Add(1))
					if rng.Intn(8) == 0 {
						b.Abort()
					} else {
						b.Seal() // fails when replaced meanwhile
					}
				case 2, 3, 4:
					get := s.Get
					if rng.Intn(2) == 0 {
						get = s.GetPrivate
					}
					v, err := get(id)
					if err != nil {
						continue
					}
					if !checkVersioned(v.Data, id) {
						t.Errorf("chunk %d torn", id)
					}
					if rng.Intn(3) == 0 {
						s.Spill(id) // under the reader's feet
						if !checkVersioned(v.Data, id) {
							t.Errorf("chunk %d torn by a spill", id)
						}
					}
					v.Release()
				case 5:
					s.Delete(id)
				default:
					s.Spill(id)
				}
			}
		}()
	}
	wg.Wait()
	checkInvariants(t, s)
	st := s.Stats()
	if st.Spilled == 0 || st.Reloaded == 0 || st.Pinned != 0 {
		t.Fatalf("stats: %+v", st)
	}
	for id := range uint64(16) {
		s.Delete(id)
	}
	checkInvariants(t, s)
	if st := s.Stats(); st.Used != st.Free {
		t.Fatalf("after deleting all: %+v", st)
	}
}
