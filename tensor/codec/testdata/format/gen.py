#!/usr/bin/python3
"""Write the expected text renderings of tensor/codec/format_test.go.

For each case, NAME.npy holds the array and NAME.txt what str(array) prints
with NumPy's default print options. Run with NumPy 1.24:

    /usr/bin/python3 tensor/codec/testdata/format/gen.py
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def cases():
    np.random.seed(0)
    rng = np.random.default_rng(7)
    inf, nan = np.inf, np.nan
    yield "rand2", np.random.rand(2)
    yield "rand_3x4", np.random.rand(3, 4)
    yield "ones_float", np.array([1.0, 2.0])
    yield "mixed_width", np.array([1.0, 2.5, -10.25])
    yield "sci_small", np.array([1.5e-10, 1.0])
    yield "sci_big", np.array([1e8, 1.0])
    yield "sci_ratio", np.array([1.0, 1001.0])
    yield "sci_precision0", np.array([1e-10, 1.0])
    yield "sci_3digit_exp", np.array([1e-300, 2.5e300, -1.0])
    yield "sci_negative", np.array([-1.234e-7, 5.0, nan])
    yield "nan_inf", np.array([nan, 1.0, -inf])
    yield "nan_only", np.array([nan, nan])
    yield "inf_only", np.array([inf, -inf])
    yield "nan_small", np.array([nan, 0.5])
    yield "zeros", np.zeros(4)
    yield "neg_zero", np.array([-0.0, 0.0, 1.5])
    yield "cutoff", np.array([0.123456789012, 1.0, 2.0 / 3.0])
    yield "big_positional", np.array([12345678.123456789, 0.5])
    yield "float32", np.array([0.1, 0.2, 1.0 / 3.0], dtype=np.float32)
    yield "float32_rand", np.random.rand(2, 5).astype(np.float32)
    yield "float32_small", np.array([1e-4, 1.0], dtype=np.float32)
    yield "float32_big", np.array([3e38, -1.5], dtype=np.float32)
    yield "float32_big_int", np.array([-88457152, 1e6 + 0.5, 16777217], dtype=np.float32)
    yield "scalar_f32_big_int", np.array(-88457152, dtype=np.float32)
    yield "normal_5x5", rng.standard_normal((5, 5))
    yield "float_wrap", np.arange(30) * 1.1
    yield "float_2d_wrap", rng.standard_normal((3, 12))
    yield "float_3d", rng.standard_normal((2, 3, 2)).round(2)
    yield "ints", np.array([1, -20, 3])
    yield "int32", np.arange(-4, 8, dtype=np.int32).reshape(3, 4)
    yield "int64_extremes", np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max])
    yield "int_wrap", np.arange(100)
    yield "int_3d", np.arange(24).reshape(2, 3, 4)
    yield "int_4d", np.arange(16, dtype=np.int32).reshape(2, 2, 2, 2)
    yield "bools", np.array([True, False, True])
    yield "bools_2d", rng.random((3, 4)) < 0.5
    yield "bools_wrap", rng.random(40) < 0.5
    yield "summary_1d", np.arange(2000)
    yield "summary_1001", np.arange(1001, dtype=np.float64) / 7
    yield "summary_2d", np.arange(2000, dtype=np.float64).reshape(40, 50) / 3
    yield "summary_3d", np.arange(2000, dtype=np.int32).reshape(10, 10, 20)
    yield "summary_rows_only", np.arange(3000).reshape(1000, 3)
    yield "summary_bool", np.arange(1200).reshape(30, 40) % 3 == 0
    yield "summary_nan", np.where(np.arange(1500) % 2 == 0, np.arange(1500) * 0.5, nan)
    yield "one_elem", np.array([[[2.5]]])
    yield "col", np.arange(4.0).reshape(4, 1)
    yield "scalar_f64", np.array(0.5)
    yield "scalar_f64_int", np.array(1.0)
    yield "scalar_f64_big", np.array(1e16)
    yield "scalar_f64_small", np.array(1e-5)
    yield "scalar_f64_third", np.array(1.0 / 3.0)
    yield "scalar_nan", np.array(nan)
    yield "scalar_neg_inf", np.array(-inf)
    yield "scalar_f32", np.array(0.1, dtype=np.float32)
    yield "scalar_int", np.array(-42)
    yield "scalar_int32", np.array(7, dtype=np.int32)
    yield "scalar_bool", np.array(False)
    yield "empty_1d", np.zeros(0)
    yield "empty_2d", np.zeros((2, 0), dtype=np.int32)


def main():
    for name, a in cases():
        np.save(os.path.join(HERE, name + ".npy"), a)
        with open(os.path.join(HERE, name + ".txt"), "w") as f:
            f.write(str(a))


if __name__ == "__main__":
    main()
