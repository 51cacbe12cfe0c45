"""tools/attention_steps.py on hand-made step stamps and a hand-made simfa timeline whose steps,
splits and turns are known."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import attention_steps  # noqa: E402


def cta(smid, start, offset, steps=10, step=2000, wgmma=600):
    """A CTA whose loop tops come every `step` cycles from start + offset, QK^T `wgmma` later."""
    tops = [start + offset + i * step for i in range(steps)]
    return dict(smid=smid, start=start, end=tops[-1] + step, tops=tops, dots=[t + wgmma for t in tops])


class AttentionStepsTest(unittest.TestCase):
    def test_split_leaves_out_the_first_and_last_step(self):
        tops, dots = [0, 900, 2900, 4900, 6900], [100, 1500, 3500, 5500, 7600]
        self.assertEqual(attention_steps.split(tops, dots), [(2000, 600, 1400)] * 3)

    def test_two_ctas_in_turn_and_one_alone(self):
        a = cta(0, 0, 0)
        b = cta(0, 10, 1000)  # half a step after a: in turn
        alone = cta(1, 0, 0)
        share, per_sm = attention_steps.in_turn_share([a, b, alone])
        self.assertEqual(per_sm, 2)
        self.assertEqual(share, 1.0)

    def test_two_ctas_in_phase(self):
        share, per_sm = attention_steps.in_turn_share([cta(0, 0, 0), cta(0, 5, 95)])
        self.assertEqual(per_sm, 2)
        self.assertEqual(share, 0.0)

    def test_one_cta_an_sm_has_no_share(self):
        self.assertEqual(attention_steps.in_turn_share([cta(0, 0, 0), cta(1, 0, 0)]), (None, 1))

    def test_timeline_steps_from_warpgroup_0(self):
        meta = [{"ph": "M", "pid": 0, "tid": 0, "args": {"name": "CTA 0 WG 0"}},
                {"ph": "M", "pid": 0, "tid": 1, "args": {"name": "CTA 0 WG 1"}}]
        events = []
        t = 0
        for _ in range(5):  # P V and QK^T issued after the softmax, a copy, the wait, the softmax
            events += [{"ph": "X", "pid": 0, "tid": 0, "name": "wgmma", "ts": t, "dur": 1},
                       {"ph": "X", "pid": 0, "tid": 0, "name": "wgmma", "ts": t + 1, "dur": 1},
                       {"ph": "X", "pid": 0, "tid": 0, "name": "tma_issue", "ts": t + 2, "dur": 1},
                       {"ph": "X", "pid": 0, "tid": 0, "name": "wait:wgmma", "ts": t + 3, "dur": 597},
                       {"ph": "X", "pid": 0, "tid": 0, "name": "bubble", "ts": t + 600, "dur": 1400},
                       {"ph": "X", "pid": 0, "tid": 1, "name": "bubble", "ts": t, "dur": 5}]
            t += 2000
        # the step's top is the copy's end (t + 3), as the silicon's loop top follows P V's copies
        self.assertEqual(attention_steps.timeline_steps(meta + events), [(2000, 597, 1403)] * 2)


if __name__ == "__main__":
    unittest.main()
