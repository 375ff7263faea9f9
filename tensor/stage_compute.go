package tensor

import (
	"context"
	"fmt"
)

// ComputeGraph tiles g stage by stage (see TileStages), optimizes each stage
// with opt, and computes it in this process; it returns the outputs by name.
// stored resolves the session's chunks, as for Compute; each, when not nil,
// sees every stage's graph before it runs (tests send its ops through gob).
// It is the reference executor of staged graphs, as Compute is of one chunk
// graph.
func ComputeGraph(ctx context.Context, g *Graph, env Env, stored func(id uint64) (*Array, error), opt Options, each func(*ChunkGraph)) (map[string]*Array, error) {
	s, err := TileStages(g, env)
	if err != nil {
		return nil, err
	}
	// Chunks carried from stage to stage, under IDs of their own.
	kept := map[uint64]*Array{}
	next := uint64(1) << 62
	lookup := func(id uint64) (*Array, error) {
		if a, ok := kept[id]; ok {
			return a, nil
		}
		if stored == nil {
			return nil, fmt.Errorf("compute: no stored chunk %d", id)
		}
		return stored(id)
	}
	results := map[string]*Array{}
	for {
		cg := Optimize(s.Graph, opt)
		if each != nil {
			each(cg)
		}
		outs, err := computeChunks(ctx, cg, lookup)
		if err != nil {
			return nil, err
		}
		for i, o := range cg.Outputs[:s.Results] {
			a, err := Gather(&o, outs[i])
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
		probes := make([]*Array, len(s.Probes))
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
func computeChunks(ctx context.Context, g *ChunkGraph, stored func(id uint64) (*Array, error)) ([][]*Array, error) {
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
	chunks := make([]*Array, len(g.Ops))
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
		in := make([]*Array, len(op.Inputs))
		for i, k := range op.Inputs {
			in[i] = chunks[k]
		}
		out, err := Run(ctx, op, in)
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
	outs := make([][]*Array, len(g.Outputs))
	for i, o := range g.Outputs {
		outs[i] = make([]*Array, len(o.Keys))
		for j, k := range o.Keys {
			outs[i][j] = chunks[k]
		}
	}
	return outs, nil
}
