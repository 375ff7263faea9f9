package core

// readyHeap is a heap of op keys, lowest rank first.
type readyHeap struct {
	keys []int
	rank []int32
}

func (h *readyHeap) len() int { return len(h.keys) }
func (h *readyHeap) top() int { return h.keys[0] }

func (h *readyHeap) less(i, j int) bool { return h.rank[h.keys[i]] < h.rank[h.keys[j]] }

func (h *readyHeap) push(k int) {
	h.keys = append(h.keys, k)
	for i := len(h.keys) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.keys[i], h.keys[p] = h.keys[p], h.keys[i]
		i = p
	}
}

func (h *readyHeap) pop() int {
	k := h.keys[0]
	n := len(h.keys) - 1
	h.keys[0] = h.keys[n]
	h.keys = h.keys[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.keys[i], h.keys[m] = h.keys[m], h.keys[i]
		i = m
	}
	return k
}

// removeAt takes the key at index i out of the heap and returns it.
func (h *readyHeap) removeAt(i int) int {
	k := h.keys[i]
	n := len(h.keys) - 1
	h.keys[i] = h.keys[n]
	h.keys = h.keys[:n]
	if i == n {
		return k
	}
	// The moved key goes down, or up, to its place.
	for j := i; ; {
		l, m := 2*j+1, j
		if l < n && h.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && h.less(r, m) {
			m = r
		}
		if m == j {
			break
		}
		h.keys[j], h.keys[m] = h.keys[m], h.keys[j]
		j = m
	}
	for j := i; j > 0; {
		p := (j - 1) / 2
		if !h.less(j, p) {
			break
		}
		h.keys[j], h.keys[p] = h.keys[p], h.keys[j]
		j = p
	}
	return k
}
