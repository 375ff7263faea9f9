// Package plan prepares a chunk graph for execution: the order in which
// operands should run and the workers its initial operands start on. It is
// pure code — no I/O, no clock — so that it is tested exhaustively and fast
// on graphs of millions of operands.
//
// # Order
//
// The order decides how much chunk data is alive at once. Take a tree
// reduction over eight chunks on one worker:
//
//	        r
//	     /     \
//	   c1       c2
//	  /  \     /  \
//	 a1  a2   a3  a4      a1..a4 combine two leaves each
//	 /\  /\   /\  /\
//	l1 l2 ...        l8
//
// Running level by level (all leaves, then all a's, ...) keeps eight leaf
// chunks alive. Running depth first (l1 l2 a1 l3 l4 a2 c1 l5 ...) keeps at
// most the depth of the tree. Order combines the rules of Mars (operands that
// deeper operands depend on first; smaller outputs first) with Dask's
// tie-breaks: a depth-first numbering from the outputs down, visiting first
// the inputs on which the most depends; the runtime then prefers the ready
// operand with the smallest number, which acts as Dask's LIFO stack (what
// was just made ready is next in the numbering).
//
// # Initial assignment
//
// Assign follows Mars' heuristic: take an empty worker, search the undirected
// operand graph breadth first from an unassigned initial operand, give the
// worker every unassigned initial operand met, stop once it has its share
// (shares are weighted by slots), and go on with the next worker. Operands
// that share descendants so land on the same worker, and the load stays
// balanced.
//
// The scheduler process runs it (exec/core calls it).
package plan
