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

// ReadNPY reads one .npy file from r: versions 1.0, 2.0 and 3.0, C order,
// little-endian float64, float32, int64, int32 or bool elements. The stream
// must end where the data ends. limit bounds the size of the data in bytes;
// limit <= 0 means no bound. Bool elements other than 0 read as 1.
func ReadNPY(r io.Reader, limit int64) (*tensor.Array, error) {
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
	dt, shape, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	size := int64(dt.Size())
	for _, s := range shape {
		if s != 0 && size > math.MaxInt64/int64(s) {
			return nil, fmt.Errorf("npy: shape %v is too large", shape)
		}
		size *= int64(s)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("npy: shape %v is too large", shape)
	}
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("npy: data of %d bytes exceeds the limit of %d", size, limit)
	}
	data, err := readExactly(r, size)
	if err != nil {
		return nil, err
	}
	if dt == tensor.Bool {
		for i, c := range data {
			if c > 1 {
				data[i] = 1
			}
		}
	}
	return &tensor.Array{DType: dt, Shape: shape, Data: data}, nil
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
func parseNPYHeader(h string) (tensor.DType, []int, error) {
	p := &dictParser{s: strings.TrimRight(h, " \t\n\x00")}
	var (
		dt              tensor.DType
		shape           []int
		seen            = map[string]bool{}
		fortran, hasFor bool
	)
	p.space()
	if !p.eat('{') {
		return 0, nil, errors.New("npy: header is not a dict")
	}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return 0, nil, err
		}
		if seen[key] {
			return 0, nil, fmt.Errorf("npy: header repeats key %q", key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return 0, nil, fmt.Errorf("npy: header: expected ':' after %q", key)
		}
		p.space()
		switch key {
		case "descr":
			d, err := p.str()
			if err != nil {
				return 0, nil, err
			}
			if dt, err = descrDType(d); err != nil {
				return 0, nil, err
			}
		case "fortran_order":
			if fortran, err = p.boolean(); err != nil {
				return 0, nil, err
			}
			hasFor = true
		case "shape":
			if shape, err = p.tuple(); err != nil {
				return 0, nil, err
			}
		default:
			return 0, nil, fmt.Errorf("npy: header has unexpected key %q", key)
		}
		p.space()
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return 0, nil, fmt.Errorf("npy: header: expected ',' or '}' at byte %d", p.i)
		}
	}
	p.space()
	if p.i != len(p.s) {
		return 0, nil, fmt.Errorf("npy: header: unexpected text after the dict at byte %d", p.i)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return 0, nil, fmt.Errorf("npy: header lacks key %q", k)
		}
	}
	if hasFor && fortran {
		return 0, nil, errors.New("npy: fortran_order arrays are not supported")
	}
	return dt, shape, nil
}

func descrDType(d string) (tensor.DType, error) {
	for _, dt := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Float64} {
		if d == dt.NPYDescr() {
			return dt, nil
		}
	}
	return 0, fmt.Errorf("npy: unsupported dtype '%s'", d)
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
