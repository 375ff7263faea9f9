package tensortest

import (
	"context"
	"fmt"

	"marsfs/tensor"
	"marsfs/tensor/chunk"
	"marsfs/tensor/fuse"
	"marsfs/tensor/kernel"
	"marsfs/tensor/spec"
	"marsfs/tensor/tile"
)

// Compute runs every op of g in this process, in key order, and returns the
// outputs gathered into whole arrays. stored resolves Stored ops. It frees
// each chunk once its last consumer has run. It is the reference executor for
// tests and single-process use; the cluster runs the same kernels.
func Compute(ctx context.Context, g *chunk.Graph, stored func(id uint64) (*tensor.Array, error)) ([]*tensor.Array, error) {
	chunks, err := computeChunks(ctx, g, stored)
	if err != nil {
		return nil, err
	}
	outs := make([]*tensor.Array, len(g.Outputs))
	for i := range g.Outputs {
		if outs[i], err = tensor.Gather(&g.Outputs[i], chunks[i]); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// ComputeGraph tiles g stage by stage (see tile.Stages), optimizes each stage
// with opt, and computes it in this process; it returns the outputs by name.
// stored resolves the session's chunks, as for Compute; each, when not nil,
// sees every stage's graph before it runs (tests send its ops through gob).
// It is the reference executor of staged graphs, as Compute is of one chunk
// graph.
func ComputeGraph(ctx context.Context, g *spec.Graph, env spec.Env, stored func(id uint64) (*tensor.Array, error), opt fuse.Options, each func(*chunk.Graph)) (map[string]*tensor.Array, error) {
	s, err := tile.Stages(g, env)
	if err != nil {
		return nil, err
	}
	// Chunks carried from stage to stage, under IDs of their own.
	kept := map[uint64]*tensor.Array{}
	next := uint64(1) << 62
	lookup := func(id uint64) (*tensor.Array, error) {
		if a, ok := kept[id]; ok {
			return a, nil
		}
		if stored == nil {
			return nil, fmt.Errorf("compute: no stored chunk %d", id)
		}
		return stored(id)
	}
	results := map[string]*tensor.Array{}
	for {
		cg := fuse.Optimize(s.Graph, opt)
		if each != nil {
			each(cg)
		}
		outs, err := computeChunks(ctx, cg, lookup)
		if err != nil {
			return nil, err
		}
		for i, o := range cg.Outputs[:s.Results] {
			a, err := tensor.Gather(&o, outs[i])
			if err != nil {
				return nil, err
			}
			results[o.Name] = a
		}
		if s.Last() {
			return results, nil
		}
		var keys [][]uint64
		for i, o := range cg.Outputs[s.Results:] {
			ids := make([]uint64, len(o.Keys))
			for j, k := range o.Keys {
				if op := cg.Ops[k]; op.Stored != 0 {
					ids[j] = op.Stored
					continue
				}
				next++
				ids[j] = next
				kept[next] = outs[s.Results+i][j]
			}
			keys = append(keys, ids)
		}
		probes := make([]*tensor.Array, len(s.Probes))
		for i, p := range s.Probes {
			probes[i] = outs[p][0]
		}
		if s, err = s.Next(keys, probes); err != nil {
			return nil, err
		}
	}
}

// computeChunks runs every op of g in key order and returns the chunks of
// each output, in Keys order.
func computeChunks(ctx context.Context, g *chunk.Graph, stored func(id uint64) (*tensor.Array, error)) ([][]*tensor.Array, error) {
	uses := make([]int, len(g.Ops))
	for _, op := range g.Ops {
		for _, in := range op.Inputs {
			uses[in]++
		}
	}
	for _, o := range g.Outputs {
		for _, k := range o.Keys {
			uses[k]++
		}
	}
	chunks := make([]*tensor.Array, len(g.Ops))
	for _, op := range g.Ops {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if op.Stored != 0 {
			if stored == nil {
				return nil, fmt.Errorf("compute: op %d needs stored chunk %d", op.Key, op.Stored)
			}
			a, err := stored(op.Stored)
			if err != nil {
				return nil, err
			}
			chunks[op.Key] = a
			continue
		}
		in := make([]*tensor.Array, len(op.Inputs))
		for i, k := range op.Inputs {
			in[i] = chunks[k]
		}
		if err := op.Views(in); err != nil {
			return nil, fmt.Errorf("compute: op %d: %w", op.Key, err)
		}
		out, err := kernel.Run(ctx, op, in)
		if err != nil {
			return nil, err
		}
		chunks[op.Key] = out
		for _, k := range op.Inputs {
			if uses[k]--; uses[k] == 0 {
				chunks[k] = nil
			}
		}
	}
	outs := make([][]*tensor.Array, len(g.Outputs))
	for i, o := range g.Outputs {
		outs[i] = make([]*tensor.Array, len(o.Keys))
		for j, k := range o.Keys {
			outs[i][j] = chunks[k]
		}
	}
	return outs, nil
}
