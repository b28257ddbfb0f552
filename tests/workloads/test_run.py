#!/usr/bin/env python3
"""The workload runner's rounds (run.py --repeat), without a GPU: the
workloads are replaced by a stand-in interpreter that prints the result line
a round and mode ask for (tests only: it is named so), and the vcuda-server
by nothing. Checks that every round runs both modes in alternating order,
that each mode's figure is the median of its rounds, that the rounds' ratio
range is printed, and that a round whose results differ fails with its
number. Run by ci/check.sh."""
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402

# The stand-in interpreter: appends "<mode> <round>" to a journal and prints
# the step time of that run from a table, and losses that differ from native
# in the round named by $FAKE_BAD_ROUND.
FAKE = r'''#!/usr/bin/env python3
import json, os, sys
mode = "vcuda" if os.environ.get("VCUDA_SOCKET") else "native"
journal = os.environ["FAKE_JOURNAL"]
with open(journal) as f:
    done = [l.split()[0] for l in f if l.strip()]
k = done.count(mode)
with open(journal, "a") as f:
    f.write("%s %d\n" % (mode, k))
times = json.loads(os.environ["FAKE_TIMES"])[mode]
losses = [1.0, 2.0]
if mode == "vcuda" and str(k + 1) == os.environ.get("FAKE_BAD_ROUND"):
    losses = [1.0, 2.5]
if sys.argv[1].endswith("torch_infer.py"):  # a decode: (rate, first pass's rate)
    print("RESULT " + json.dumps({"tokens": [[1, 2]], "tokens_per_s": times[k][0], "first_tokens_per_s": times[k][1]}))
else:
    print("RESULT " + json.dumps({"losses": losses, "median_step_ms": times[k], "ms_per_step": times[k] + 1}))
'''


class NoServer:
    def terminate(self):
        pass

    def wait(self):
        pass


class Rounds(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vcwl-test.")
        self.fake = os.path.join(self.dir, "fake-python-for-tests")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IEXEC)
        self.journal = os.path.join(self.dir, "journal")
        open(self.journal, "w").close()
        self.saved = run.start_server
        run.start_server = lambda *a: NoServer()

    def tearDown(self):
        run.start_server = self.saved
        shutil.rmtree(self.dir, ignore_errors=True)

    def main(self, times, bad_round=None, rounds=3, only="mlp-fp32"):
        env = {"FAKE_JOURNAL": self.journal, "FAKE_TIMES": json.dumps(times)}
        if bad_round:
            env["FAKE_BAD_ROUND"] = str(bad_round)
        old = dict(os.environ)
        os.environ.update(env)
        argv, sys.argv = sys.argv, ["run.py", "--python", self.fake, "--only", only,
                                    "--repeat", str(rounds), "--out", os.path.join(self.dir, "out")]
        out = io.StringIO()
        try:
            with redirect_stdout(out):
                rc = run.main()
        finally:
            sys.argv = argv
            os.environ.clear()
            os.environ.update(old)
        with open(self.journal) as f:
            order = [l.split()[0] for l in f if l.strip()]
        return rc, out.getvalue(), order

    def test_medians_and_range(self):
        rc, out, order = self.main({"native": [2.0, 4.0, 3.0], "vcuda": [2.0, 5.0, 2.0]})
        self.assertEqual(rc, 0, out)
        # Alternating: native first in rounds 1 and 3, vcuda first in round 2.
        self.assertEqual(order, ["native", "vcuda", "vcuda", "native", "native", "vcuda"])
        line = next(l for l in out.splitlines() if l.startswith("mlp-fp32"))
        self.assertIn("PASS", line)
        self.assertIn("native 3.000 ms", line)   # median of 2, 4, 3
        self.assertIn("vcuda 2.000 ms", line)    # median of 2, 5, 2
        self.assertIn("150%", line)              # 3 / 2
        self.assertIn("(rounds 80-150%)", line)  # 2/2, 4/5, 3/2
        logs = sorted(os.listdir(os.path.join(self.dir, "out")))
        for name in ("mlp-fp32.native.log", "mlp-fp32.native.2.log", "mlp-fp32.native.3.log",
                     "mlp-fp32.vcuda.log", "mlp-fp32.vcuda.2.log", "mlp-fp32.vcuda.3.log"):
            self.assertIn(name, logs)

    def test_a_differing_round_fails(self):
        rc, out, _ = self.main({"native": [2.0, 2.0, 2.0], "vcuda": [2.0, 2.0, 2.0]}, bad_round=2)
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL", out)
        self.assertIn("round 2: losses", out)

    def test_decode_shows_both_passes(self):
        rc, out, _ = self.main({"native": [[400.0, 20.0], [300.0, 30.0], [500.0, 25.0]],
                                "vcuda": [[480.0, 24.0], [200.0, 25.0], [480.0, 40.0]]}, only="gpt2-fp16")
        self.assertEqual(rc, 0, out)
        line = next(l for l in out.splitlines() if l.startswith("gpt2-fp16"))
        self.assertIn("native 400 tok/s", line)  # median of 400, 300, 500
        self.assertIn("vcuda 480 tok/s", line)   # median of 480, 200, 480
        self.assertIn("120%", line)              # 480 / 400
        self.assertIn("first pass 100%", line)   # medians 25 and 25

    def test_one_round_is_as_before(self):
        rc, out, order = self.main({"native": [2.0], "vcuda": [4.0]}, rounds=1)
        self.assertEqual(rc, 0, out)
        self.assertEqual(order, ["native", "vcuda"])
        line = next(l for l in out.splitlines() if l.startswith("mlp-fp32"))
        self.assertIn("50%", line)
        self.assertNotIn("rounds", line)


if __name__ == "__main__":
    unittest.main()
