"""Tests of the marsfs module against a running server.

The server's address comes from $MARSFS_ADDR (a unix socket, a loopback
host:port, or a mounted tree's directory); cmd/marsfs's TestPythonModule
starts a server and runs this file once for each kind of address.
"""

import io
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import marsfs  # noqa: E402


class SessionTest(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("MARSFS_ADDR"):
            self.skipTest("no MARSFS_ADDR: start marsfs up and set it")
        self.s = marsfs.Session()
        self.addCleanup(self.s.close)

    def test_run_returns_outputs(self):
        out = self.s.run("a = arange(12, chunks=5).reshape(3, 4)\nb = a.sum(axis=0)\nfetch a, b", progress=False)
        np.testing.assert_array_equal(out["a"], np.arange(12).reshape(3, 4))
        np.testing.assert_array_equal(out["b"], np.arange(12).reshape(3, 4).sum(axis=0))
        self.assertEqual(sorted(self.s.tensors), ["a", "b"])

    def test_upload_keeps_dtype_and_shape(self):
        x = np.random.default_rng(1).standard_normal((300, 7)).astype(np.float32)
        self.s.upload("x", x)
        np.testing.assert_array_equal(self.s["x"], x)
        out = self.s.run("m = x.mean(axis=0)", progress=False)
        self.assertEqual(out["m"].dtype, np.float32)
        np.testing.assert_allclose(out["m"], x.astype(np.float64).mean(axis=0), rtol=1e-5)

    def test_big_upload_and_fetch(self):
        # 24 MB: several messages each way.
        x = np.arange(3_000_000, dtype=np.float64)
        self.s.upload("big", x)
        out = self.s.run("t = big.sum()\nh = big[::1000]\nfetch t, h", progress=False)
        self.assertEqual(float(out["t"]), float(x.sum()))
        np.testing.assert_array_equal(out["h"], x[::1000])

    def test_refused_spec_raises_the_error_file(self):
        with self.assertRaises(marsfs.SpecError) as c:
            self.s.run("x = frobnicate(3)")
        self.assertEqual(str(c.exception), "1:5: unknown function frobnicate")
        # The session goes on serving.
        self.assertEqual(float(self.s.run("y = ones(4).sum()", progress=False)["y"]), 4.0)

    def test_failed_graph_raises_graph_error(self):
        self.s.upload("u", np.array([1, 2, 3]))
        with self.assertRaises(marsfs.GraphError) as c:
            self.s.run("v = u.astype(float64)[u > 5].max()", progress=False)
        self.assertEqual(c.exception.state, "FAILED")
        self.assertIn("empty", str(c.exception))

    def test_drop_and_missing(self):
        self.s.run("k = arange(3)", progress=False)
        self.s.drop("k")
        self.assertNotIn("k", self.s.tensors)
        with self.assertRaises(KeyError):
            self.s.fetch("k")
        with self.assertRaises(marsfs.SpecError):
            self.s.drop("k")

    def test_progress_bar_on_a_terminal(self):
        err = io.StringIO()
        old, sys.stderr = sys.stderr, err
        try:
            self.s.run("p = (rand(2000000, chunks=100000, seed=3) * 2).sum()", progress=True)
        finally:
            sys.stderr = old
        text = err.getvalue()
        self.assertTrue(text.startswith("\r["), text)
        self.assertRegex(text, r"100\.0% (\d+)/\1 operands")
        self.assertTrue(text.rstrip().endswith("SUCCEEDED"), text)
        self.assertTrue(text.endswith("\n"), text)

    def test_progress_bar_in_jupyter(self):
        try:
            import IPython  # noqa: F401
        except ImportError:
            self.skipTest("no IPython")
        updates = []

        class Handle:
            def update(self, obj):
                updates.append(obj.data)

        bar = marsfs._JupyterBar.__new__(marsfs._JupyterBar)
        from IPython.display import HTML
        bar.HTML, bar.handle = HTML, Handle()
        bar.show("[###---] 50.0% 1/2 operands 1B/2B 0.1s elapsed 0.1s left RUNNING")
        self.assertIn('value="50.0"', updates[-1])
        self.assertIn("1/2 operands", updates[-1])


class ModuleTest(unittest.TestCase):
    def test_run_alone_closes_its_session(self):
        if not os.environ.get("MARSFS_ADDR"):
            self.skipTest("no MARSFS_ADDR")
        c = marsfs.Client()
        before = c.sessions()
        out = marsfs.run("pi = 4 * ((rand(100000, seed=1)**2 + rand(100000, seed=2)**2) < 1).mean()", progress=False)
        self.assertAlmostEqual(float(out["pi"]), 3.14, delta=0.02)
        self.assertEqual(c.sessions(), before)
        c.close()

    def test_nobody_listens(self):
        with self.assertRaises(ConnectionRefusedError) as c:
            marsfs.Session(addr="/nonexistent/marsfs.sock")
        self.assertIn("no marsfs server listens there", str(c.exception))


if __name__ == "__main__":
    unittest.main()
