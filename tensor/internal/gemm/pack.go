package gemm

import "unsafe"

// elemSize is the size in bytes of a T.
func elemSize[T float32 | float64]() int {
	var x T
	return int(unsafe.Sizeof(x))
}

// packA copies the block of op(A) of rows [i0, i0+mb) and columns
// [p0, p0+kb) into dst as micro-panels of mr rows: panel r holds, for each
// of the kb columns in turn, the mr values of its rows, zeros past the
// block's last row. a is A's buffer with leading dimension lda; op(A)(i, p)
// is a[i*lda+p], or a[p*lda+i] when trans.
func packA[T float32 | float64](dst, a []T, lda int, trans bool, i0, p0, mb, kb, mr int) {
	full := 0 // the rows packed by the fast path below
	if trans && mr == 6 {
		// A row of the buffer holds a column of every panel's rows: read
		// it in order, 6 values at a time copied as one array (copy
		// would call memmove for each 48 bytes).
		full = mb / 6 * 6
		for p := range kb {
			row := a[(p0+p)*lda+i0:][:full]
			for ir := 0; ir < full; ir += 6 {
				*(*[6]T)(dst[ir*kb+p*6:]) = *(*[6]T)(row[ir:])
			}
		}
	}
	for ir := full; ir < mb; ir += mr {
		h := min(mr, mb-ir)
		panel := dst[ir*kb:][:kb*mr]
		if trans {
			for p := range kb {
				src := a[(p0+p)*lda+i0+ir:][:h]
				d := panel[p*mr:][:mr]
				copy(d, src)
				clear(d[h:])
			}
			continue
		}
		if h == mr && mr%4 == 0 && haveKernels && elemSize[T]() == 8 && kb >= 4 {
			// Each 4 rows of the panel in assembly, the columns left
			// after the last 4 below.
			done := kb &^ 3
			start := (i0+ir)*lda + p0
			_ = a[start+(mr-1)*lda+done-1]
			_ = panel[mr*done-1]
			for r := 0; r < mr; r += 4 {
				packRows4D(unsafe.Pointer(&panel[r]), unsafe.Pointer(&a[start+r*lda]), lda*8, done, mr*8)
			}
			for r := range mr {
				src := a[start+r*lda+done : start+r*lda+kb]
				for p, v := range src {
					panel[(done+p)*mr+r] = v
				}
			}
			continue
		}
		if h == 6 && mr == 6 {
			done := 0
			if haveKernels && elemSize[T]() == 8 && kb >= 4 {
				// The rows' values must be in a: the assembly reads
				// through a pointer.
				done = kb &^ 3
				start := (i0+ir)*lda + p0
				_ = a[start+5*lda+done-1]
				_ = panel[6*done-1]
				packRows6D(unsafe.Pointer(&panel[0]), unsafe.Pointer(&a[start]), lda*8, done)
			}
			packRows6(panel[6*done:], a, lda, i0+ir, p0+done, kb-done)
			continue
		}
		for r := range mr {
			if r >= h {
				for p := range kb {
					panel[p*mr+r] = 0
				}
				continue
			}
			src := a[(i0+ir+r)*lda+p0:][:kb]
			for p, v := range src {
				panel[p*mr+r] = v
			}
		}
	}
}

// packRows6 interleaves 6 rows of a, from row i and column p0 on, kb values
// each, into panel: the common case of packA, unrolled.
func packRows6[T float32 | float64](panel, a []T, lda, i, p0, kb int) {
	r0 := a[i*lda+p0:][:kb]
	r1 := a[(i+1)*lda+p0:][:kb]
	r2 := a[(i+2)*lda+p0:][:kb]
	r3 := a[(i+3)*lda+p0:][:kb]
	r4 := a[(i+4)*lda+p0:][:kb]
	r5 := a[(i+5)*lda+p0:][:kb]
	panel = panel[:6*kb]
	for p := range kb {
		d := panel[6*p:][:6]
		d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
	}
}

// packB copies the block of op(B) of rows [p0, p0+kb) and columns
// [j0, j0+nb) into dst as micro-panels of nr columns: panel j holds, for
// each of the kb rows in turn, the nr values of its columns, zeros past the
// block's last column. op(B)(p, j) is b[p*ldb+j], or b[j*ldb+p] when trans.
func packB[T float32 | float64](dst, b []T, ldb int, trans bool, p0, j0, kb, nb, nr int) {
	if !trans {
		// Row by row of B, so that B, often just drawn and out of
		// cache, is read in order; each row is cut into the panels.
		full := nb / nr * nr
		if haveKernels && nr*elemSize[T]() == 64 && full > 0 && kb > 0 {
			// The full panels, in assembly; the edge below. The rows'
			// values must be in b: the assembly reads through a
			// pointer.
			start := p0*ldb + j0
			_ = b[start+(kb-1)*ldb+full-1]
			_ = dst[full*kb-1]
			packPanels64(unsafe.Pointer(&dst[0]), unsafe.Pointer(&b[start]), ldb*elemSize[T](), kb, full/nr, kb*nr*elemSize[T]())
			if full < nb {
				for p := range kb {
					d := dst[full*kb+p*nr:][:nr]
					copy(d, b[(p0+p)*ldb+j0+full:][:nb-full])
					clear(d[nb-full:])
				}
			}
			return
		}
		for p := range kb {
			row := b[(p0+p)*ldb+j0:][:nb]
			for jr := 0; jr < full; jr += nr {
				d := dst[jr*kb+p*nr:][:nr]
				switch nr {
				case 8:
					*(*[8]T)(d) = *(*[8]T)(row[jr:])
				case 16:
					*(*[16]T)(d) = *(*[16]T)(row[jr:])
				default:
					copy(d, row[jr:jr+nr])
				}
			}
			if full < nb {
				d := dst[full*kb+p*nr:][:nr]
				copy(d, row[full:])
				clear(d[nb-full:])
			}
		}
		return
	}
	for jr := 0; jr < nb; jr += nr {
		w := min(nr, nb-jr)
		panel := dst[jr*kb:][:kb*nr]
		// A row of the buffer holds a column of the panel.
		for j := range nr {
			if j >= w {
				for p := range kb {
					panel[p*nr+j] = 0
				}
				continue
			}
			src := b[(j0+jr+j)*ldb+p0:][:kb]
			for p, v := range src {
				panel[p*nr+j] = v
			}
		}
	}
}

// fillRows is how many rows of B packBFilled makes at once: 8 rows of up
// to nc values (16 KiB of float64 each at most) stay in L1 or L2 until
// they are packed.
const fillRows = 8

// packBFilled is packB for a B made by fill (see DgemmFilled), neither
// transposed: it makes fillRows rows at a time in *tmp and packs them.
func packBFilled[T float32 | float64](dst []T, tmp *[]T, fill func(dst []T, i, j int), p0, j0, kb, nb, nr int) {
	if cap(*tmp) < fillRows*nb {
		*tmp = make([]T, fillRows*nb)
	}
	t := (*tmp)[:fillRows*nb]
	for r0 := 0; r0 < kb; r0 += fillRows {
		rows := min(fillRows, kb-r0)
		for q := range rows {
			fill(t[q*nb:(q+1)*nb], p0+r0+q, j0)
		}
		packBRows(dst, t, nb, r0, rows, kb, nb, nr)
	}
}

// packBRows packs rows [0, rows) of src (row-major, rows ld apart, nb
// values each) as rows [r0, r0+rows) of B's micro-panels of nr columns,
// which have kb rows each: the layout of packB.
func packBRows[T float32 | float64](dst, src []T, ld, r0, rows, kb, nb, nr int) {
	full := nb / nr * nr
	if haveKernels && nr*elemSize[T]() == 64 && full > 0 {
		_ = src[(rows-1)*ld+full-1]
		_ = dst[full*kb-1]
		size := elemSize[T]()
		packPanels64(unsafe.Pointer(&dst[r0*nr]), unsafe.Pointer(&src[0]), ld*size, rows, full/nr, kb*nr*size)
	} else {
		for q := range rows {
			row := src[q*ld:][:nb]
			for jr := 0; jr < full; jr += nr {
				copy(dst[jr*kb+(r0+q)*nr:][:nr], row[jr:jr+nr])
			}
		}
	}
	if full < nb {
		for q := range rows {
			d := dst[full*kb+(r0+q)*nr:][:nr]
			copy(d, src[q*ld+full:q*ld+nb])
			clear(d[nb-full:])
		}
	}
}

// packAFilled is packA for an A made by fill, not transposed: it makes a
// micro-panel's rows at a time in *tmp and packs them.
func packAFilled[T float32 | float64](dst []T, tmp *[]T, fill func(dst []T, i, j int), i0, p0, mb, kb, mr int) {
	if cap(*tmp) < mr*kb {
		*tmp = make([]T, mr*kb)
	}
	t := (*tmp)[:mr*kb]
	for ir := 0; ir < mb; ir += mr {
		h := min(mr, mb-ir)
		for r := range h {
			fill(t[r*kb:(r+1)*kb], i0+ir+r, p0)
		}
		packA(dst[ir*kb:], t, kb, false, 0, 0, h, kb, mr)
	}
}
