package journal

import (
	"fmt"
	"maps"
	"slices"
)

// A Kind says what a record tells.
type Kind uint8

const (
	// KindSession opens a session's file: Session, Owner.
	KindSession Kind = 1 + iota
	// KindSubmit is a spec accepted as graph Graph: Spec.
	KindSubmit
	// KindGraphEnd is how graph Graph ended: State, Err.
	KindGraphEnd
	// KindUpload is a tensor uploaded: Tensor (with each chunk's
	// locations).
	KindUpload
	// KindKeep is a tensor graph Graph kept: Tensor.
	KindKeep
	// KindDrop is a tensor dropped by name: Name.
	KindDrop
	// KindMove is chunks now held elsewhere (a worker handed them off, an
	// upload's second copy was made): Chunks.
	KindMove
	// KindClose closes the session: nothing follows.
	KindClose
	// KindEpoch is the session held by scheduler Home from epoch Epoch
	// on: a takeover raises the epoch, and of two schedulers that both
	// hold the session, the one at the lower epoch is stale and steps
	// down (cmd/marsfs/fence.go). A session with none is at epoch 0, held
	// by the scheduler that made it.
	KindEpoch
	kindEnd
)

var kindNames = [...]string{"", "session", "submit", "graph-end", "upload", "keep", "drop", "move", "close", "epoch"}

func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// A Record is one thing that happened to a session. Which fields mean
// something depends on Kind (see the Kind constants).
type Record struct {
	Kind    Kind    `json:"-"`
	Session int     `json:"session,omitempty"`
	Owner   string  `json:"owner,omitempty"`
	Graph   int     `json:"graph,omitempty"`
	Spec    string  `json:"spec,omitempty"`
	State   string  `json:"state,omitempty"`
	Err     string  `json:"err,omitempty"`
	Name    string  `json:"name,omitempty"`
	Tensor  *Tensor `json:"tensor,omitempty"`
	Chunks  []Chunk `json:"chunks,omitempty"`
	// Inputs is, for a submit, the session's tensors the spec was parsed
	// against (its snapshot): each name with the first chunk ID of the
	// tensor it named then (IDs are unique, so this names one version of
	// it). Tiled again against them, the spec makes the same chunks: the
	// lineage of what the graph kept.
	Inputs map[string]uint64 `json:"inputs,omitempty"`
	// Epoch and Home, for an epoch record.
	Epoch uint64 `json:"epoch,omitempty"`
	Home  string `json:"home,omitempty"`
}

// A Tensor is a kept or uploaded tensor as tiled: enough to serve it
// again from its chunks, wherever they are found.
type Tensor struct {
	Name   string  `json:"name"`
	DType  string  `json:"dtype"`
	Shape  []int   `json:"shape"`
	Splits [][]int `json:"splits"` // chunk sizes along each axis
	Chunks []Chunk `json:"chunks"` // in row-major order of the grid
	// Graph is the graph that made it (0 for an upload): its spec, run
	// again, makes the chunks lost.
	Graph int `json:"graph,omitempty"`
}

// A Chunk is one chunk of a tensor: its ID and size, and the workers the
// scheduler last knew held it (two for an upload's).
type Chunk struct {
	ID      uint64   `json:"id"`
	NBytes  int64    `json:"nbytes"`
	Workers []string `json:"workers,omitempty"`
}

// A Graph is a submitted spec and how far it got.
type Graph struct {
	ID    int    `json:"id"`
	Spec  string `json:"spec"`
	State string `json:"state"` // "" while running
	Err   string `json:"err,omitempty"`
	// Inputs are the tensors the spec was parsed against (Record.Inputs).
	Inputs map[string]*Tensor `json:"-"`
}

// Running says whether the graph had not ended when the journal stops:
// a restarted scheduler runs it again to its end.
func (g Graph) Running() bool { return g.State == "" }

// State is a session as its records tell it.
type State struct {
	Session int
	Owner   string
	Graphs  []Graph
	Tensors map[string]*Tensor
	Closed  bool
	// Epoch is the session's epoch, held by Home (KindEpoch); 0 and ""
	// until a takeover.
	Epoch uint64
	Home  string
	// versions holds every tensor the records made, by first chunk ID:
	// a submit's inputs may name one replaced since.
	versions map[uint64]*Tensor
}

// key is the ID that names one version of a tensor: its first chunk's.
func (t *Tensor) key() uint64 {
	if len(t.Chunks) == 0 {
		return 0
	}
	return t.Chunks[0].ID
}

// Apply folds record r into the state. A record that does not fit what
// came before (no opening record, a graph ending that was not submitted,
// anything after the close) is an error, and the state is left as it
// was: the file is then not a history the scheduler wrote, and the
// session is lost rather than guessed at.
func (s *State) Apply(r Record) error {
	if err := s.Check(r); err != nil {
		return err
	}
	s.fold(r)
	return nil
}

// Check says whether record r fits the state, as Apply would, without
// folding it: a Log checks a record before it writes it, and folds it
// only once it is on disk.
func (s *State) Check(r Record) error {
	if s.Session == 0 && r.Kind != KindSession {
		return fmt.Errorf("%v record before the session's opening record", r.Kind)
	}
	if s.Closed {
		return fmt.Errorf("%v record after the session's close", r.Kind)
	}
	switch r.Kind {
	case KindSession:
		if s.Session != 0 {
			return fmt.Errorf("second opening record (session %d in session %d)", r.Session, s.Session)
		}
		if r.Session <= 0 {
			return fmt.Errorf("opening record for session %d", r.Session)
		}
	case KindSubmit:
		if n := len(s.Graphs); n > 0 && r.Graph <= s.Graphs[n-1].ID {
			return fmt.Errorf("graph %d submitted after graph %d", r.Graph, s.Graphs[n-1].ID)
		}
		for name, id := range r.Inputs {
			if t, ok := s.versions[id]; !ok || t.Name != name {
				return fmt.Errorf("graph %d read tensor %s (chunk %d), which no record made", r.Graph, name, id)
			}
		}
	case KindGraphEnd:
		g := s.graph(r.Graph)
		if g == nil {
			return fmt.Errorf("graph %d ended but was never submitted", r.Graph)
		}
		if !g.Running() {
			return fmt.Errorf("graph %d ended twice", r.Graph)
		}
		if r.State == "" {
			return fmt.Errorf("graph %d ended with no state", r.Graph)
		}
	case KindUpload, KindKeep:
		t := r.Tensor
		if t == nil || t.Name == "" {
			return fmt.Errorf("%v record with no tensor", r.Kind)
		}
		if r.Kind == KindKeep && s.graph(t.Graph) == nil {
			return fmt.Errorf("tensor %s kept by graph %d, never submitted", t.Name, t.Graph)
		}
		if _, ok := s.versions[t.key()]; ok && t.key() != 0 {
			return fmt.Errorf("tensor %s: chunk %d made twice", t.Name, t.key())
		}
	case KindDrop:
		if _, ok := s.Tensors[r.Name]; !ok {
			return fmt.Errorf("drop of tensor %s, which is not there", r.Name)
		}
	case KindEpoch:
		if r.Epoch <= s.Epoch || r.Home == "" {
			return fmt.Errorf("epoch %d at %q after epoch %d", r.Epoch, r.Home, s.Epoch)
		}
	case KindMove, KindClose:
	default:
		return fmt.Errorf("unknown record %v", r.Kind)
	}
	return nil
}

// fold changes the state by record r, which Check accepted.
func (s *State) fold(r Record) {
	switch r.Kind {
	case KindSession:
		s.Session, s.Owner = r.Session, r.Owner
		s.Tensors = map[string]*Tensor{}
		s.versions = map[uint64]*Tensor{}
	case KindSubmit:
		g := Graph{ID: r.Graph, Spec: r.Spec, Inputs: map[string]*Tensor{}}
		for name, id := range r.Inputs {
			g.Inputs[name] = s.versions[id]
		}
		s.Graphs = append(s.Graphs, g)
	case KindGraphEnd:
		g := s.graph(r.Graph)
		g.State, g.Err = r.State, r.Err
	case KindUpload, KindKeep:
		c := r.Tensor.clone()
		s.Tensors[c.Name] = c
		s.versions[c.key()] = c
	case KindDrop:
		delete(s.Tensors, r.Name)
	case KindMove:
		at := map[uint64][]string{}
		for _, c := range r.Chunks {
			at[c.ID] = c.Workers
		}
		for _, t := range s.Tensors {
			for i, c := range t.Chunks {
				if w, ok := at[c.ID]; ok {
					t.Chunks[i].Workers = slices.Clone(w)
				}
			}
		}
	case KindClose:
		s.Closed = true
	case KindEpoch:
		s.Epoch, s.Home = r.Epoch, r.Home
	}
}

func (s *State) graph(id int) *Graph {
	for i := range s.Graphs {
		if s.Graphs[i].ID == id {
			return &s.Graphs[i]
		}
	}
	return nil
}

// Records returns records that, applied in order to an empty State, give
// s again: what compaction writes. Every graph stays (its spec is a few
// lines, and its number and end are what the session's tree shows), and
// before it the tensors it read, as they were; what compaction sheds is
// the versions of tensors that no graph read and no name holds, and the
// moves.
func (s *State) Records() []Record {
	rs := []Record{{Kind: KindSession, Session: s.Session, Owner: s.Owner}}
	if s.Epoch > 0 {
		rs = append(rs, Record{Kind: KindEpoch, Epoch: s.Epoch, Home: s.Home})
	}
	named := map[string]*Tensor{} // what the records so far leave under each name
	made := map[uint64]bool{}
	put := func(t *Tensor) {
		if named[t.Name] == t {
			return
		}
		if made[t.key()] && t.key() != 0 {
			// Named again after another took its name: never happens
			// in a history, as a version is made once.
			return
		}
		k := KindKeep
		if t.Graph == 0 {
			k = KindUpload
		}
		rs = append(rs, Record{Kind: k, Tensor: t.clone()})
		named[t.Name], made[t.key()] = t, true
	}
	for _, g := range s.Graphs {
		inputs := map[string]uint64{}
		for _, name := range slices.Sorted(maps.Keys(g.Inputs)) {
			put(g.Inputs[name])
			inputs[name] = g.Inputs[name].key()
		}
		rs = append(rs, Record{Kind: KindSubmit, Graph: g.ID, Spec: g.Spec, Inputs: inputs})
		if !g.Running() {
			rs = append(rs, Record{Kind: KindGraphEnd, Graph: g.ID, State: g.State, Err: g.Err})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Tensors)) {
		put(s.Tensors[name])
	}
	for _, name := range slices.Sorted(maps.Keys(named)) {
		if _, ok := s.Tensors[name]; !ok {
			rs = append(rs, Record{Kind: KindDrop, Name: name})
		}
	}
	if s.Closed {
		rs = append(rs, Record{Kind: KindClose})
	}
	return rs
}

func (t *Tensor) clone() *Tensor {
	c := *t
	c.Shape = slices.Clone(t.Shape)
	c.Splits = make([][]int, len(t.Splits))
	for i, s := range t.Splits {
		c.Splits[i] = slices.Clone(s)
	}
	c.Chunks = make([]Chunk, len(t.Chunks))
	for i, ch := range t.Chunks {
		c.Chunks[i] = ch
		c.Chunks[i].Workers = slices.Clone(ch.Workers)
	}
	return &c
}

// Chunks returns the chunks of the session's tensors, and the IDs of those
// that are uploads': what a restarted scheduler expects its workers to
// offer back.
func (s *State) Chunks() (chunks []Chunk, uploads []uint64) {
	for _, name := range slices.Sorted(maps.Keys(s.Tensors)) {
		t := s.Tensors[name]
		for _, c := range t.Chunks {
			chunks = append(chunks, c)
			if t.Graph == 0 {
				uploads = append(uploads, c.ID)
			}
		}
	}
	return chunks, uploads
}
