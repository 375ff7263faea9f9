package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"marsfs/exec/core"
	"marsfs/tensor"
	"marsfs/tensor/chunk"
)

// codecMessages is one message of every kind, with the fields each carries.
func codecMessages() []*Msg {
	args := chunk.GenArgs{Offset: []int{0, 10}, Global: []int{100, 20}, Value: 2.5, Seed: 7}
	op := &chunk.Op{Key: 7, Kind: "add", Inputs: []int{3, 4}, Shape: []int{10, 20}, DType: tensor.Float64, Args: args, Node: 2,
		Ranges: chunk.RangesOf([]chunk.Range{{}, {Off: 40, Shape: []int{10, 20}, DType: tensor.Float64}})}
	op2 := &chunk.Op{Key: 8, Kind: "add", Inputs: []int{5}, Shape: []int{10}, DType: tensor.Int64, Args: args, Node: 2}
	leaf := &chunk.Op{Key: 9, Kind: "ones", DType: tensor.Bool} // a scalar: no shape
	op3 := &chunk.Op{Key: 10, Kind: "sum.map", Inputs: []int{5}, DType: tensor.Int64, Ranges: chunk.RangesOf([]chunk.Range{{Off: 3, Shape: []int{}, DType: tensor.Int64}})}
	return []*Msg{
		{Kind: MsgSubmit, Job: 1, Session: 5, Epoch: 2, Key: 7, Attempt: 1, Priority: 42, ID: 1007, Unit: 2, Op: op,
			Inputs: []core.Location{{ID: 1003, Worker: "w1", NBytes: 1600}, {ID: 1004, Worker: "w2", NBytes: -1}},
			Addrs:  []string{"127.0.0.1:1", "127.0.0.1:2"}},
		{Kind: MsgSubmit, Job: 1, Session: 5, Epoch: 2, Key: 8, Attempt: 1, Priority: 43, ID: 1008, Op: op2,
			Inputs: []core.Location{{ID: 1005, Worker: "w1", NBytes: 80}}, Addrs: []string{"127.0.0.1:1"}},
		{Kind: MsgSubmit, Job: 2, Key: 9, Attempt: 3, Priority: -1, ID: 9, Op: leaf},
		{Kind: MsgSubmit, Job: 2, Key: 10, Attempt: 1, Priority: 5, ID: 10, Op: op3,
			Inputs: []core.Location{{ID: 1005, Worker: "w1", NBytes: 80}}, Addrs: []string{"127.0.0.1:1"}},
		{Kind: MsgCancel, Job: 1, Key: 7, Attempt: 2},
		{Kind: MsgFree, IDs: []uint64{1, 1 << 63, 5}},
		{Kind: MsgFree, Session: 1 << 40, Epoch: 3, IDs: []uint64{6}},
		{Kind: MsgStatus, Seq: 99},
		{Kind: MsgStarted, Job: 1, Key: 7, Attempt: 1,
			Timing: core.Timing{Received: 1_700_000_000_000_000, Started: 1_700_000_000_000_040, Phase: core.Computing, Since: 1_700_000_000_000_090, Slot: 1}},
		{Kind: MsgDone, Job: 1, Key: 7, Attempt: 1, ID: 1007, NBytes: 1600, Spilled: 1 << 20,
			Timing: core.Timing{Received: 1_699_999_999_999_990, Started: 1_700_000_000_000_040, Allocated: 1_700_000_000_000_041,
				Loaded: 1_700_000_000_000_090, Computed: 1_700_000_000_500_000, Stored: 1_700_000_000_500_000, Slot: 3, Fetched: 1600}},
		{Kind: MsgFailed, Job: 1, Key: 7, Attempt: 1, ID: 1007, Err: "kernel rejected it", Final: true},
		{Kind: MsgFailed, Job: 1, Key: 9, Attempt: 2, ID: 1009, Err: "fetch chunk 5 from w2: connection refused", Peer: "w2"},
		{Kind: MsgCancelled, Job: 1, Key: 8, Attempt: 2, ID: 1008},
		{Kind: MsgStatusReply, Seq: 99, Text: "name w1\nslots 2\n"},
		{Kind: MsgAdopt, IDs: []uint64{7, 1 << 40}},
		{Kind: MsgAdopt, Session: 9, Epoch: 1, IDs: []uint64{8}},
		{Kind: MsgFenced, Session: 9, Epoch: 1, Err: "worker w1 refuses a free of session 9 at epoch 1: it has seen epoch 2"},
		{Kind: MsgHeld, IDs: []uint64{7, 1 << 40}, Sizes: []int64{800, 0}},
		{Kind: MsgHeld, Session: 9, Epoch: 1, IDs: []uint64{8}, Sizes: []int64{24}},
		{Kind: MsgLeaving},
		{Kind: MsgHandedOff},
	}
}

func encodeFrames(t *testing.T, e *Encoder, batches ...[]*Msg) []byte {
	t.Helper()
	var out []byte
	for _, ms := range batches {
		f, err := e.frame(ms)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f...)
	}
	return out
}

func decodeAll(data []byte) ([]*Msg, error) {
	d := NewDecoder(bufio.NewReader(bytes.NewReader(data)))
	var ms []*Msg
	for {
		m := new(Msg)
		if err := d.Next(m); err != nil {
			if err == io.EOF {
				return ms, nil
			}
			return ms, err
		}
		ms = append(ms, m)
	}
}

func TestCodecRoundTrip(t *testing.T) {
	want := codecMessages()
	e := NewEncoder()
	// Two frames, the second sending the same arguments again.
	data := encodeFrames(t, e, want[:5], want[5:], want[:2])
	got, err := decodeAll(data)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append(append([]*Msg(nil), want[:5]...), want[5:]...), want[:2]...)
	if len(got) != len(all) {
		t.Fatalf("decoded %d messages, want %d", len(got), len(all))
	}
	for i := range all {
		if !reflect.DeepEqual(got[i], all[i]) {
			t.Errorf("message %d:\n got %+v\nwant %+v", i, got[i], all[i])
		}
	}
	// Arguments are encoded once while ops keep sharing them.
	if e.next != 1 {
		t.Errorf("%d argument slots filled, want 1", e.next)
	}
}

func TestCodecArgSlotsRecycle(t *testing.T) {
	// More distinct arguments than slots: each op must still decode with
	// its own.
	e := NewEncoder()
	var batch []*Msg
	for k := range argSlots + 50 {
		op := &chunk.Op{Key: k, Kind: chunk.Kind("full" + string(rune('a'+k%3))), Shape: []int{1}, DType: tensor.Float64, Args: chunk.GenArgs{Value: float64(k)}}
		batch = append(batch, &Msg{Kind: MsgSubmit, Key: k, Op: op})
	}
	got, err := decodeAll(encodeFrames(t, e, batch[:100], batch[100:]))
	if err != nil {
		t.Fatal(err)
	}
	for k, m := range got {
		if v := m.Op.Args.(chunk.GenArgs).Value; v != float64(k) {
			t.Fatalf("op %d decoded with the arguments of %v", k, v)
		}
	}
}

// TestCodecMalformed cuts a valid stream at every length and flips bytes
// at random: the decoder must return an error (or, for a cut between
// frames, stop cleanly), never panic.
func TestCodecMalformed(t *testing.T) {
	data := encodeFrames(t, NewEncoder(), codecMessages())
	for n := 0; n < len(data); n++ {
		ms, err := decodeAll(data[:n])
		if n > 0 && err == nil {
			t.Fatalf("a stream cut at %d of %d bytes decoded without error (%d messages)", n, len(data), len(ms))
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && n > 4 && len(ms) == len(codecMessages()) {
			t.Fatalf("cut at %d: %v after every message", n, err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		bad := bytes.Clone(data)
		for range 1 + rng.IntN(4) {
			i := 4 + rng.IntN(len(bad)-4) // keep the frame length: reach the fields
			bad[i] = byte(rng.Uint32())
		}
		decodeAll(bad) // must not panic
	}
	huge := []byte{0xff, 0xff, 0xff, 0x7f}
	if _, err := decodeAll(huge); err == nil {
		t.Error("a frame longer than the limit was accepted")
	}
	// A length that claims more items than the frame holds.
	bogus := []byte{5, 0, 0, 0, MsgFree, 0xff, 0xff, 0xff, 0x0f}
	if _, err := decodeAll(bogus); err == nil {
		t.Error("a free of 2^32 IDs in a 5-byte frame was accepted")
	}
	if _, err := decodeAll([]byte{1, 0, 0, 0, 200}); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

func FuzzDecode(f *testing.F) {
	data, _ := NewEncoder().frame(codecMessages())
	f.Add(bytes.Clone(data))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeAll(b)
	})
}

// TestSameArgs checks the codec's comparison of kernel arguments against
// reflect.DeepEqual, for the types it compares field by field and others.
func TestSameArgs(t *testing.T) {
	code := []chunk.ExprInstr{{Op: "load", Dst: 0}, {Op: "elem", Kind: "add", Dst: -1, Src: []int{0, 0}}}
	codeCopy := append([]chunk.ExprInstr(nil), code...)
	codeOther := append([]chunk.ExprInstr(nil), code...)
	codeOther[1].Kind = "multiply"
	expr := func(c []chunk.ExprInstr, shape, offs []int) chunk.ExprArgs {
		return chunk.ExprArgs{Shape: shape, Block: 64, Regs: 1, Code: c, Members: []string{"add"}, Offsets: offs}
	}
	red := chunk.ReduceArgs{Op: "sum", In: tensor.Float64, Axes: []int{0}, Offset: []int{10}, Global: []int{100}}
	redOther := red
	redOther.Offset = []int{20}
	for i, tc := range []struct{ a, b any }{
		{expr(code, []int{10}, nil), expr(code, []int{10}, nil)},
		{expr(code, []int{10}, nil), expr(codeCopy, []int{10}, nil)},
		{expr(code, []int{10}, nil), expr(codeOther, []int{10}, nil)},
		{expr(code, []int{10}, nil), expr(code, []int{9}, nil)},
		{expr(code, []int{10}, []int{0}), expr(code, []int{10}, []int{10})},
		{expr(code, []int{10}, nil), red},
		{red, red},
		{red, redOther},
		{red, chunk.ElemArgs{}},
		{chunk.ElemArgs{Compute: tensor.Float64}, chunk.ElemArgs{Compute: tensor.Float64}},
		{chunk.ElemArgs{Compute: tensor.Float64}, chunk.ElemArgs{Compute: tensor.Int64}},
	} {
		if got, want := sameArgs(tc.a, tc.b), reflect.DeepEqual(tc.a, tc.b); got != want {
			t.Errorf("%d: sameArgs %v, DeepEqual %v", i, got, want)
		}
	}
}

// TestArgSlotKeepsNewest checks that arguments equal to a slot's but apart
// (a later graph's program) take the slot without a new msgArgs, and stay
// there, so that the next comparisons are by reference.
func TestArgSlotKeepsNewest(t *testing.T) {
	mk := func() chunk.ExprArgs {
		return chunk.ExprArgs{Shape: []int{10}, Block: 64, Regs: 1,
			Code: []chunk.ExprInstr{{Op: "load", Dst: 0}, {Op: "elem", Kind: "add", Dst: -1, Src: []int{0, 0}}}}
	}
	e := NewEncoder()
	first, second := mk(), mk()
	s1, err := e.argSlot("expr", first)
	if err != nil {
		t.Fatal(err)
	}
	n := len(e.buf)
	s2, err := e.argSlot("expr", second)
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 || len(e.buf) != n {
		t.Fatalf("equal arguments took slot %d after %d, wrote %d bytes", s2, s1, len(e.buf)-n)
	}
	if got := e.slots[s2-1].(chunk.ExprArgs); &got.Code[0] != &second.Code[0] {
		t.Errorf("the slot keeps the older arguments")
	}
}

// TestCodecRunBatch encodes a batch of runs for two workers as the
// scheduler queues it: a worker's connection gets the submits of its runs
// alone, in order, equal to those of one message a run.
func TestCodecRunBatch(t *testing.T) {
	ms := codecMessages()
	g := &chunk.Graph{Ops: make([]*chunk.Op, 10)}
	ids := make([]uint64, 10)
	for _, m := range ms[:3] {
		g.Ops[m.Key], ids[m.Key] = m.Op, m.ID
	}
	runs := []core.RunOp{
		{Key: 7, Worker: "w1", Attempt: 1, Priority: 42, Unit: 2, Inputs: ms[0].Inputs},
		{Key: 9, Worker: "w2", Attempt: 3, Priority: -1},
		{Key: 8, Worker: "w1", Attempt: 1, Priority: 43, Inputs: ms[1].Inputs},
	}
	addrs := map[string]string{"w1": "127.0.0.1:1", "w2": "127.0.0.1:2"}
	batch := &Msg{Kind: MsgSubmit, Runs: &RunBatch{Job: 1, Session: 5, Epoch: 2, Worker: "w1", Runs: runs, G: g, Ids: ids, Addrs: addrs}}
	got, err := decodeAll(encodeFrames(t, NewEncoder(), []*Msg{batch}))
	if err != nil {
		t.Fatal(err)
	}
	// The one-message form, with the addresses the batch looks up.
	w := []*Msg{ms[0], ms[1]}
	w[1].Addrs = []string{"127.0.0.1:1"}
	if len(got) != len(w) {
		t.Fatalf("decoded %d submits, want %d", len(got), len(w))
	}
	for i := range w {
		if !reflect.DeepEqual(got[i], w[i]) {
			t.Errorf("submit %d:\n got %+v\nwant %+v", i, got[i], w[i])
		}
	}
}
