// Package svg draws the pictures of the tree, timeline.svg and plan.svg,
// as SVG text written by hand: no browser and no library is needed to
// make them, any browser shows them, and tests parse them with
// encoding/xml. It is pure: it draws plain data (Timeline, Plan) that the
// file server fills from the engine at each open, so a picture is always
// of the state so far.
//
// Both pictures stay readable whatever the size of the graph. The
// timeline draws an operand whose bar would be narrower than a pixel
// merged with its neighbours of the same row into one bar of the pixels
// they cover (titled with their count and their kinds), so its elements
// are bounded by rows times pixels, not by operands. The plan draws every
// operand of a small graph, by depth, and for a large one (more than
// PlanDetail operands) a summary: one box a tensor and worker, with the
// count of its operands, and one edge a pair of boxes.
//
// The scheduler process runs it (fs draws the pictures).
package svg
