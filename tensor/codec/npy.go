package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"marsfs/tensor"
)

// The .npy format (NumPy's "format.py" documents it): a magic string, a
// version, the length of a header, the header itself (a Python dict literal
// naming descr, fortran_order and shape), and the elements.

const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the header dict a reader accepts; NumPy itself refuses
// headers above 10000 bytes unless told otherwise.
const maxNPYHeader = 64 << 10

// NPYHeader returns the preamble of a C-order .npy file holding an array of
// dtype dt and the given shape: magic, version, header length and the header
// dict padded with spaces and a newline so that the data starts at a multiple
// of 64 bytes, as NumPy writes it. The version is 1.0 unless the header does
// not fit its 16-bit length, then 2.0. Writing the elements after it makes a
// complete file, so a tensor can be streamed chunk by chunk.
func NPYHeader(dt tensor.DType, shape []int) []byte {
	var dict strings.Builder
	fmt.Fprintf(&dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", dt.NPYDescr())
	for i, s := range shape {
		if i > 0 {
			dict.WriteString(", ")
		}
		dict.WriteString(strconv.Itoa(s))
	}
	if len(shape) == 1 {
		dict.WriteByte(',')
	}
	dict.WriteString("), }")
	h := dict.String()

	major, pre := byte(1), len(npyMagic)+2+2 // magic, version, uint16 length
	pad := (64 - (pre+len(h)+1)%64) % 64
	if len(h)+1+pad > math.MaxUint16 {
		major, pre = 2, pre+2 // uint32 length
		pad = (64 - (pre+len(h)+1)%64) % 64
	}
	hlen := len(h) + pad + 1

	buf := make([]byte, 0, pre+hlen)
	buf = append(buf, npyMagic...)
	buf = append(buf, major, 0)
	if major == 1 {
		buf = binary.LittleEndian.AppendUint16(buf, uint16(hlen))
	} else {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(hlen))
	}
	buf = append(buf, h...)
	buf = append(buf, bytes.Repeat([]byte{' '}, pad)...)
	return append(buf, '\n')
}

// WriteNPY writes a as a .npy file (version 1.0, C order, little-endian).
func WriteNPY(w io.Writer, a *tensor.Array) error {
	if err := a.Check(); err != nil {
		return fmt.Errorf("npy: %w", err)
	}
	if _, err := w.Write(NPYHeader(a.DType, a.Shape)); err != nil {
		return err
	}
	_, err := w.Write(a.Data)
	return err
}

// ReadNPY reads one .npy file from r into an array (see ReadNPYHeader for
// the dtypes and orders it reads). The stream must end where the data
// ends. limit bounds the size of the data as written in bytes; limit <= 0
// means no bound. Bool elements other than 0 read as 1.
func ReadNPY(r io.Reader, limit int64) (*tensor.Array, error) {
	l, err := ReadNPYHeader(r)
	if err != nil {
		return nil, err
	}
	size := l.DataSize()
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("npy: data of %d bytes exceeds the limit of %d", size, limit)
	}
	raw, err := readExactly(r, size)
	if err != nil {
		return nil, err
	}
	a := tensor.NewArray(l.DType, l.Shape)
	if !l.Fortran {
		l.Convert(a.Data, raw)
		return a, nil
	}
	tmp := tensor.NewArray(l.DType, l.Shape)
	l.Convert(tmp.Data, raw)
	FortranToC(a, tmp.Data)
	return a, nil
}

// An NPYLayout describes the elements of a .npy stream as they are
// written.
type NPYLayout struct {
	Descr   string // the header's descr: "<f8", ">i2", "|u1", "<f2", "|b1"
	Kind    byte   // 'b' bool, 'i' signed integer, 'u' unsigned, 'f' float
	Size    int    // bytes an element
	Big     bool   // big-endian elements
	Fortran bool   // Fortran (column-major) order
	Shape   []int
	DType   tensor.DType // the elements' dtype
}

// DataSize is the number of bytes of the elements as written.
func (l *NPYLayout) DataSize() int64 {
	return int64(tensor.NumElements(l.Shape)) * int64(l.Size)
}

// ReadNPYHeader reads the preamble and header of a .npy stream (versions
// 1.0, 2.0 and 3.0) and leaves r at the first element. It reads every
// fixed-size numeric and bool type NumPy writes (int8 to int64, uint8 to
// uint64, float16 to float64, bool), in either byte order and either
// memory order.
func ReadNPYHeader(r io.Reader) (*NPYLayout, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: reading magic: %w", noEOF(err))
	}
	if string(pre[:6]) != npyMagic {
		return nil, errors.New("npy: not a .npy file (bad magic)")
	}
	major, minor := pre[6], pre[7]
	var hlen int
	switch {
	case major == 1 && minor == 0:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case (major == 2 || major == 3) && minor == 0:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("npy: reading header length: %w", noEOF(err))
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n > maxNPYHeader {
			return nil, fmt.Errorf("npy: header of %d bytes is too long (at most %d)", n, maxNPYHeader)
		}
		hlen = int(n)
	default:
		return nil, fmt.Errorf("npy: unsupported version %d.%d", major, minor)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("npy: reading %d-byte header: %w", hlen, noEOF(err))
	}
	if major < 3 {
		// Versions 1 and 2 encode the header in latin-1; anything beyond
		// ASCII cannot occur in a valid dict of ours.
		for _, c := range hdr {
			if c >= 0x80 {
				return nil, errors.New("npy: header is not ASCII")
			}
		}
	}
	l, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	size := int64(l.Size)
	for _, s := range l.Shape {
		if s != 0 && size > math.MaxInt64/int64(s) {
			return nil, fmt.Errorf("npy: shape %v is too large", l.Shape)
		}
		size *= int64(s)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("npy: shape %v is too large", l.Shape)
	}
	return l, nil
}

// Convert converts the elements of src, as written, into dst, as held:
// little-endian, and bools 0 or 1 (others than 0 become 1).
func (l *NPYLayout) Convert(dst, src []byte) {
	n := len(src) / l.Size
	switch {
	case l.Kind == 'b':
		for i, c := range src[:n] {
			dst[i] = b2u(c != 0)
		}
	case !l.Big || l.Size == 1:
		copy(dst, src[:n*l.Size])
	case l.Size == 2:
		for i := range n {
			binary.LittleEndian.PutUint16(dst[2*i:], binary.BigEndian.Uint16(src[2*i:]))
		}
	case l.Size == 4:
		for i := range n {
			binary.LittleEndian.PutUint32(dst[4*i:], binary.BigEndian.Uint32(src[4*i:]))
		}
	default:
		for i := range n {
			binary.LittleEndian.PutUint64(dst[8*i:], binary.BigEndian.Uint64(src[8*i:]))
		}
	}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// FortranToC fills dst, a C-order array, from src holding the same
// elements in Fortran order (of the same dtype and shape).
func FortranToC(dst *tensor.Array, src []byte) {
	shape, es := dst.Shape, dst.DType.Size()
	n := tensor.NumElements(shape)
	if len(shape) < 2 || n == 0 {
		copy(dst.Data, src[:n*es])
		return
	}
	// Element (i0, ..., ik) is at C offset sum(i·cstride) and Fortran
	// offset sum(i·fstride); walk the C order with a running index.
	fstride := make([]int, len(shape))
	f := 1
	for ax := range shape {
		fstride[ax] = f
		f *= shape[ax]
	}
	idx := make([]int, len(shape))
	last := len(shape) - 1
	inner, step := shape[last], fstride[last]
	for c := 0; c < n; c += inner {
		off := 0
		for ax, i := range idx {
			off += i * fstride[ax]
		}
		for j := range inner {
			copy(dst.Data[(c+j)*es:(c+j+1)*es], src[(off+j*step)*es:])
		}
		for ax := last - 1; ax >= 0; ax-- {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
	}
}

// readExactly reads n bytes and checks that the stream ends there. It grows
// its buffer as data arrives, so a header that lies about a huge shape costs
// no more memory than the stream really holds.
func readExactly(r io.Reader, n int64) ([]byte, error) {
	const step = 16 << 20
	buf := make([]byte, 0, min(n, step))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(n-int64(len(buf)), int64(cap(buf))))...)[:len(buf)]
		}
		k, err := r.Read(buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			return nil, fmt.Errorf("npy: data is %d bytes, header says %d", len(buf), n)
		}
		if err != nil {
			return nil, fmt.Errorf("npy: reading data: %w", err)
		}
	}
	extra, err := io.Copy(io.Discard, r)
	if err != nil {
		return nil, fmt.Errorf("npy: reading data: %w", err)
	}
	if extra > 0 {
		return nil, fmt.Errorf("npy: data is %d bytes, header says %d", n+extra, n)
	}
	return buf, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseNPYHeader parses the header dict. It is a Python literal; this reads
// exactly the subset NumPy writes (and hand-written variants of it: either
// quote, any spacing, trailing commas) and nothing else.
func parseNPYHeader(h string) (*NPYLayout, error) {
	p := &dictParser{s: strings.TrimRight(h, " \t\n\x00")}
	var (
		l    = &NPYLayout{}
		seen = map[string]bool{}
	)
	p.space()
	if !p.eat('{') {
		return nil, errors.New("npy: header is not a dict")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("npy: header repeats key %q", key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("npy: header: expected ':' after %q", key)
		}
		p.space()
		switch key {
		case "descr":
			d, err := p.str()
			if err != nil {
				return nil, err
			}
			if err = l.setDescr(d); err != nil {
				return nil, err
			}
		case "fortran_order":
			if l.Fortran, err = p.boolean(); err != nil {
				return nil, err
			}
		case "shape":
			if l.Shape, err = p.tuple(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("npy: header has unexpected key %q", key)
		}
		p.space()
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return nil, fmt.Errorf("npy: header: expected ',' or '}' at byte %d", p.i)
		}
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("npy: header: unexpected text after the dict at byte %d", p.i)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, fmt.Errorf("npy: header lacks key %q", k)
		}
	}
	return l, nil
}

// setDescr sets the element type from a descr: a byte order ('<', '>',
// '|' or '='), a kind and a size in bytes.
func (l *NPYLayout) setDescr(d string) error {
	bad := fmt.Errorf("npy: unsupported dtype '%s' (marsfs reads bool, int8 to int64, uint8 to uint64 and float16 to float64)", d)
	if len(d) < 3 {
		return bad
	}
	order, kind := d[0], d[1]
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return bad
	}
	switch order {
	case '<', '|', '=': // '=' is native: little-endian on every machine marsfs runs on
	case '>':
		l.Big = true
	default:
		return bad
	}
	dt, err := tensor.ParseDType(npyTypeName(kind, size))
	if err != nil || (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') || dt.Size() != size {
		return bad
	}
	l.DType = dt
	l.Descr, l.Kind, l.Size = d, kind, size
	return nil
}

// npyTypeName is NumPy's name of the type of kind and size.
func npyTypeName(kind byte, size int) string {
	switch kind {
	case 'b':
		return "bool"
	case 'i':
		return "int" + strconv.Itoa(8*size)
	case 'u':
		return "uint" + strconv.Itoa(8*size)
	}
	return "float" + strconv.Itoa(8*size)
}

type dictParser struct {
	s string
	i int
}

func (p *dictParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *dictParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a quoted string without escapes (none occur in valid headers).
func (p *dictParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("npy: header: expected a string at byte %d", p.i)
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("npy: header: unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\\n") {
		return "", fmt.Errorf("npy: header: unsupported string %q", v)
	}
	p.i += end + 2
	return v, nil
}

func (p *dictParser) boolean() (bool, error) {
	switch {
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return false, fmt.Errorf("npy: header: expected True or False at byte %d", p.i)
}

// tuple reads a tuple of non-negative ints: (), (3,), (3, 4), (3, 4,).
func (p *dictParser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, fmt.Errorf("npy: header: shape is not a tuple")
	}
	shape := []int{}
	for {
		p.space()
		if p.eat(')') {
			return shape, nil
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return nil, fmt.Errorf("npy: header: expected a dimension at byte %d", p.i)
		}
		n, err := strconv.ParseInt(p.s[start:p.i], 10, 0)
		if err != nil {
			return nil, fmt.Errorf("npy: header: dimension %s is too large", p.s[start:p.i])
		}
		if len(shape) >= 64 {
			return nil, errors.New("npy: header: more than 64 dimensions")
		}
		shape = append(shape, int(n))
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if p.eat(')') {
			if len(shape) == 1 {
				return nil, errors.New("npy: header: shape (n) lacks the comma of a 1-tuple")
			}
			return shape, nil
		}
		return nil, fmt.Errorf("npy: header: expected ',' or ')' in shape at byte %d", p.i)
	}
}
