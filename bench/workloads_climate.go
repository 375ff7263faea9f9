package main

import (
	"fmt"
	"io"
	"math"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The workloads of a real user's data (issue 35): the steps of a climate
// analysis over a float32 (time, lat, lon) Zarr array, and the two-pass
// variance of a float64 one, each from a store written by zarr-python
// (bench/climate_data.py) with its default compressor (blosc lz4, byte
// shuffle: the bare ids), with zstd (-ZSTD) and with none (-RAW, which
// leaves the engines' own costs with no decoder in front). They run only
// when named (--only CLIM-MEAN,VAR2-LZ4, or --only 'CLIM-*').
// They are made by a function, a workload for each step and codec.
var climateWorkloads = func() []workload {
	var ws []workload
	for _, codec := range []string{"lz4", "zstd", "raw"} {
		for _, st := range climateSteps {
			ws = append(ws, climateWorkload(st, codec))
		}
		ws = append(ws, var2Workload(codec))
	}
	return ws
}()

// A climateStep is one step of the analysis: spec gives its marsfs
// statements after x = from_zarr(...), the names fetched last; the
// Python side (climate_workloads.py) writes the same by its id.
type climateStep struct {
	id, text string
	spec     string // %[1]s is the output store's name, CODEC its compressor
	// want gives the expected summary of each fetched output (a mean) for
	// the params, from the formula of the field without its noise.
	want func(p map[string]int) []float64
}

var climateSteps = []climateStep{
	{id: "MEAN", text: "time mean x.mean(axis=0)",
		spec: "m = x.mean(axis=0)\nfetch m\n",
		want: func(p map[string]int) []float64 { return []float64{climMean(p)} }},
	{id: "STD", text: "x.std(axis=0)",
		spec: "s = x.std(axis=0)\nfetch s\n",
		want: func(p map[string]int) []float64 { return []float64{climStd(p)} }},
	{id: "ANOM", text: "anomaly x - x.mean(axis=0) written with to_zarr (the input's compressor), the mean fetched",
		spec: "m = x.mean(axis=0)\nto_zarr(x - m, OUT, compressor=CODEC, overwrite=True)\nfetch m\n",
		want: func(p map[string]int) []float64 { return []float64{climMean(p)} }},
	{id: "GMEAN", text: "area-weighted global-mean series: w = cos(lat), normalised, (x * w[:, None]).sum(axis=(1, 2))",
		spec: climWeights + "g = (x * w[:, None]).sum(axis=(1, 2))\nfetch g\n",
		want: func(p map[string]int) []float64 { return []float64{climGlobal(p)} }},
	{id: "SEAS", text: "seasonal cycle x.reshape(3, T/3, lat, lon).mean(axis=0) and its area-weighted global mean",
		spec: climWeights + "c = x.reshape(3, T3, LAT, LON).mean(axis=0)\ncg = (c * w[:, None]).sum(axis=(1, 2))\nfetch c, cg\n",
		want: func(p map[string]int) []float64 { return []float64{climMean(p), climGlobal(p)} }},
	{id: "ALL", text: "all of the above in one graph (Dask: one compute)",
		spec: climWeights + "m = x.mean(axis=0)\ns = x.std(axis=0)\nto_zarr(x - m, OUT, compressor=CODEC, overwrite=True)\n" +
			"g = (x * w[:, None]).sum(axis=(1, 2))\nc = x.reshape(3, T3, LAT, LON).mean(axis=0)\ncg = (c * w[:, None]).sum(axis=(1, 2))\nfetch m, s, g, c, cg\n",
		want: func(p map[string]int) []float64 {
			return []float64{climMean(p), climStd(p), climGlobal(p), climMean(p), climGlobal(p)}
		}},
}

// climWeights makes w, the normalised cos(lat) weights of a grid from 90
// to -90 degrees, such that the weighted sum over (lat, lon) is a mean.
const climWeights = "wl = cos(linspace(90, -90, LAT) * 0.017453292519943295)\nw = wl / (wl.sum() * LON)\n"

// codecs: the compressor name in the store's name, and to_zarr's.
var climCodecs = map[string]string{"lz4": `"blosc"`, "zstd": `"zstd"`, "raw": "None"}

func codecSuffix(codec string) string {
	if codec == "lz4" {
		return ""
	}
	return "-" + strings.ToUpper(codec)
}

// codecIndex numbers the codecs for the params (which are ints).
var codecNames = []string{"lz4", "zstd", "raw"}

func codecOf(p map[string]int) string { return codecNames[p["codec"]] }

func codecParam(codec string) int {
	for i, c := range codecNames {
		if c == codec {
			return i
		}
	}
	panic("bench: unknown codec " + codec)
}

func climateWorkload(st climateStep, codec string) workload {
	return workload{
		id:   "CLIM-" + st.id + codecSuffix(codec),
		text: st.text + ", float32 (4380, 181, 360) in chunks (24, 181, 360), " + codec,
		params: func(s float64) map[string]int {
			// T is a multiple of 3 for the seasonal reshape.
			return map[string]int{"t": 3 * scaled(1460, s), "lat": 181, "lon": 360, "tchunk": 24, "codec": codecParam(codec)}
		},
		spec: func(p map[string]int) string {
			body := strings.NewReplacer("OUT", fmt.Sprintf("%q", fmt.Sprintf("anom-marsfs-%s.zarr", codecOf(p))),
				"CODEC", climCodecs[codecOf(p)], "T3", fmt.Sprint(p["t"]/3), "LAT", fmt.Sprint(p["lat"]),
				"LON", fmt.Sprint(p["lon"])).Replace(st.spec)
			return fmt.Sprintf("x = from_zarr(%q)\n", climStoreName(p)) + body
		},
		check: func(p map[string]int, v []float64) error {
			for i, w := range st.want(p) {
				if err := near(v, i, w, 0.005); err != nil {
					return err
				}
			}
			return nil
		},
		// NumPy holds x, and for std and the anomaly a float32 copy or
		// two.
		numpyBytes: func(p map[string]int) int64 { return 3 * 4 * int64(p["t"]*p["lat"]*p["lon"]) },
		data:       climData,
		prepare: func(o options, p map[string]int, _ io.Writer) ([]string, error) {
			return nil, warmStore(o.dataDir, climStoreName(p))
		},
		onlyIfNamed:  true,
		reportTransf: true,
		goal:         goal{speedup: 1.5, describe: "≥1.5× best Dask, transfer ≤ 1% of input, peak ≤ Dask's"},
	}
}

func climStoreName(p map[string]int) string {
	return fmt.Sprintf("clim-%s-%dx%dx%d-c%d.zarr", codecOf(p), p["t"], p["lat"], p["lon"], p["tchunk"])
}

func var2StoreName(p map[string]int) string {
	return fmt.Sprintf("var2-%s-%dx%d-c%d.zarr", codecOf(p), p["rows"], p["cols"], p["rchunk"])
}

// climLats are the latitudes of the grid in radians, 90 to -90 degrees.
func climLats(p map[string]int) []float64 {
	n := p["lat"]
	phi := make([]float64, n)
	for i := range phi {
		phi[i] = (90 - 180*float64(i)/float64(n-1)) * math.Pi / 180
	}
	return phi
}

// climMean is the mean over the grid of the field's time mean: the
// seasonal and daily terms average to nothing over whole years, and the
// cos(3 lon) term over the longitudes.
func climMean(p map[string]int) float64 {
	s := 0.0
	for _, phi := range climLats(p) {
		s += 250 + 40*math.Cos(phi)
	}
	return s / float64(p["lat"])
}

// climGlobal is the cos(lat)-weighted mean of the same.
func climGlobal(p map[string]int) float64 {
	s, w := 0.0, 0.0
	for _, phi := range climLats(p) {
		c := math.Abs(math.Cos(phi))
		s += c * (250 + 40*math.Cos(phi))
		w += c
	}
	return s / w
}

// climStd is the mean over the grid of the standard deviation over time:
// noise (1), the seasonal swing 12 sin(lat) season(t) (variance 144 sin²
// times the season's over the T steps: a half over whole years) and the
// daily one 2 cos(lat) (variance 2 cos²: its four steps are a quarter
// turn apart).
func climStd(p map[string]int) float64 {
	var s1, s2 float64
	for t := range p["t"] {
		v := math.Sin(2 * math.Pi * float64(t) / 1460)
		s1 += v
		s2 += v * v
	}
	n := float64(p["t"])
	season := s2/n - (s1/n)*(s1/n)
	s := 0.0
	for _, phi := range climLats(p) {
		sn, cs := math.Sin(phi), math.Cos(phi)
		s += math.Sqrt(1 + 144*season*sn*sn + 2*cs*cs)
	}
	return s / float64(p["lat"])
}

func var2Workload(codec string) workload {
	return workload{
		id:   "VAR2-" + strings.ToUpper(codec),
		text: "two-pass variance m = x.mean(axis=0); d = ((x - m) ** 2).mean(axis=0), float64 (50000, 5000) in chunks (2500, 5000), " + codec,
		params: func(s float64) map[string]int {
			return map[string]int{"rows": scaled(50000, s), "cols": 5000, "rchunk": scaled(2500, s), "codec": codecParam(codec)}
		},
		spec: func(p map[string]int) string {
			return fmt.Sprintf("x = from_zarr(%q)\nm = x.mean(axis=0)\nd = ((x - m) ** 2).mean(axis=0)\nfetch m, d\n", var2StoreName(p))
		},
		check: func(p map[string]int, v []float64) error {
			if err := near(v, 0, 5, 0.001); err != nil {
				return err
			}
			return near(v, 1, 1, 0.01)
		},
		numpyBytes: func(p map[string]int) int64 { return 3 * 8 * int64(p["rows"]) * int64(p["cols"]) },
		data:       var2Data,
		prepare: func(o options, p map[string]int, _ io.Writer) ([]string, error) {
			return nil, warmStore(o.dataDir, var2StoreName(p))
		},
		onlyIfNamed:  true,
		reportTransf: true,
		goal:         goal{speedup: map[string]float64{"lz4": 1.5, "zstd": 1.2, "raw": 1.5}[codec], describe: "≥1.5× best Dask (zstd: 1.2×)"},
	}
}

// climData and var2Data write the workload's array into dir with
// zarr-python, unless it is there.
func climData(dir, python string, p map[string]int, log io.Writer) error {
	return pyStore(dir, python, climStoreName(p), log, "clim", p["t"], p["lat"], p["lon"], p["tchunk"], codecOf(p))
}

func var2Data(dir, python string, p map[string]int, log io.Writer) error {
	return pyStore(dir, python, var2StoreName(p), log, "var2", p["rows"], p["cols"], p["rchunk"], codecOf(p))
}

func pyStore(dir, python, name string, log io.Writer, args ...any) error {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cmdArgs := []string{filepath.Join(root, "bench", "climate_data.py"), fmt.Sprint(args[0]), path}
	for _, a := range args[1:] {
		cmdArgs = append(cmdArgs, fmt.Sprint(a))
	}
	fmt.Fprintf(log, "bench: writing %s with zarr-python, once\n", path)
	begin := time.Now()
	cmd := osexec.Command(python, cmdArgs...)
	cmd.Env = pythonEnv(os.Environ())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("writing %s: %v\n%s", name, err, lastLines(string(out), 5))
	}
	fmt.Fprintf(log, "bench: wrote %s in %.0f s\n", path, time.Since(begin).Seconds())
	return nil
}

// warmStore reads every file of the store once, untimed, so that the
// first engine to run finds it in the page cache as the others do (a
// store written hours before, or pushed out by the runs since, was read
// from disk by marsfs, which runs first, and from memory by Dask and
// NumPy after it).
func warmStore(dir, name string) error {
	buf := make([]byte, 1<<20)
	return filepath.WalkDir(filepath.Join(dir, name), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		for {
			if _, err := f.Read(buf); err == io.EOF {
				return nil
			} else if err != nil {
				return fmt.Errorf("warming %s: %w", path, err)
			}
		}
	})
}
