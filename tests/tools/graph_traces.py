#!/usr/bin/env python3
"""Hand-made capture traces and the served traces that replay their graphs, one pair per rule of
docs/inference.md's graph matching: ties settled by order (in a trace with no step recorded, and
step by step), near-exact replays (one node missing, one extra GPU event, an xDiT-sized graph that
never runs its last node) and an ambiguous near replay. Each case is (capture events, served
events, what the rule says, worked out by hand in the comments). tests/shell/graph_replay.py
checks them; run as a script, it writes them under OUTDIR/<case>/ (served.json, capture/cap.json).
usage: graph_traces.py OUTDIR"""
import json
import os
import sys


def x(cat, name, ts, dur, tid=1, pid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def launch(ts, kernel):
    """A ROCm launch call: it records the kernel's name (CUDA's do not)."""
    return x("cuda_runtime", "hipLaunchKernel", ts, 1, kernel=kernel)


class Capture:
    """A capture trace: graphs one after the other, each node an op (with its frame) over a launch call."""

    def __init__(self):
        self.events, self.t = [], 0

    def graph(self, nodes):
        """nodes: [(frame or None, op, dims, kernel)], in launch order."""
        self.t += 100
        self.events.append(x("cuda_runtime", "hipStreamBeginCapture", self.t, 1))
        for frame, op, dims, kernel in nodes:
            self.t += 10
            if frame:
                self.events.append(x("python_function", frame, self.t, 8))
            self.events.append(x("cpu_op", op, self.t + 1, 6, **({"Input Dims": dims} if dims else {})))
            self.events.append(launch(self.t + 2, kernel))
        self.t += 20
        self.events.append(x("cuda_runtime", "hipStreamEndCapture", self.t, 1))

    def own_replay(self, kernels, corr=900000):
        """A replay of a graph right after capture (the engine's warm-up), in the capture trace itself."""
        self.t += 100
        self.events.append(x("cuda_runtime", "hipGraphLaunch", self.t, 5, correlation=corr))
        for i, k in enumerate(kernels):
            self.events.append(gpu(k, 10_000_000 + self.t + 20 * i, 10, corr))


def gpu(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"correlation": corr, "device": 0, "stream": 7}}


class Served:
    """A served trace: graph launches (optionally inside step annotations), each replaying kernels on the GPU."""

    def __init__(self):
        self.events, self.t, self.corr = [], 0, 0

    def step(self, name, replays):
        start = self.t + 1
        for kernels in replays:
            self.replay(kernels)
        self.events.append(x("user_annotation", name, start, self.t + 5 - start))
        self.t += 10

    def replay(self, kernels, dur=10):
        """One graph launch; its kernels run one after the other, `dur` µs each."""
        self.corr += 1
        self.t += 10
        self.events.append(x("cuda_runtime", "hipGraphLaunch", self.t, 5, correlation=self.corr))
        for i, k in enumerate(kernels):
            self.events.append(gpu(k, 1_000_000 + 1000 * self.corr + 20 * i, dur, self.corr))


# Ties. Graph 0 (embedding), three identical decoder layers (graphs 1-3: the same ops, shapes and
# kernels, each in its own nn.Module frame) and graph 4 (head), as vLLM's PIECEWISE mode captures
# them. Layer replays match graphs 1, 2 and 3 equally: their place says which.
def layered_capture():
    c = Capture()
    c.graph([("nn.Module: Embedding_0", "aten::embedding", [[4], [100, 8]], "embed_k")])
    for layer in range(3):
        frame = f"nn.Module: DecoderLayer_{layer}"
        c.graph([(frame, "aten::mm", [[4, 8], [8, 8]], "mm_k"), (frame, "aten::relu", [[4, 8]], "relu_k")])
    c.graph([("nn.Module: LMHead_0", "aten::mm", [[4, 8], [8, 32]], "head_k")])
    return c


ROUND = [["embed_k"], ["mm_k", "relu_k"], ["mm_k", "relu_k"], ["mm_k", "relu_k"], ["head_k"]]


def ties():
    """No step recorded: the trace is the scope. Two rounds of graphs 0-4: 10 replays; the 6 layer
    replays tie between graphs 1-3 (6 = 2 x 3), so the j-th takes graph 1 + j mod 3:
    graphs 0 1 2 3 4 0 1 2 3 4, all 2 x (1 + 2 + 2 + 2 + 1) = 16 kernels attributed (160 µs)."""
    s = Served()
    for _ in range(2):
        for kernels in ROUND:
            s.replay(kernels)
    return layered_capture().events, s.events


def steps():
    """Steps: execute_4_a and execute_4_b replay graphs 0-4 each (3 layer replays per step: 3 of 3
    graphs, paired in order); execute_4_c replays 0, two layers and 4: 2 layer replays between 3
    equal graphs, not a multiple: not attributed (4 kernels, 40 µs), its graphs 0 and 4 are.
    Attributed: 8 + 8 + 2 = 18 kernels (180 µs) of 22 (220 µs)."""
    s = Served()
    s.step("execute_4_a", ROUND)
    s.step("execute_4_b", ROUND)
    s.step("execute_4_c", [ROUND[0], ROUND[1], ROUND[2], ROUND[4]])
    return layered_capture().events, s.events


def unlike():
    """Graphs 0 and 1 launch the same kernels (mm_k, relu_k) from ops of other shapes (aten::mm
    [8, 8] and [8, 16]): they tie, and are not alike. Step execute_4_a replays both: exactly 2 tied
    replays for 2 graphs in one step, paired in order (4 kernels, 40 µs). Then, outside any step,
    both again: the trace is no step, and order does not choose between different graphs there
    (4 kernels, 40 µs, not attributed)."""
    c = Capture()
    for n in (8, 16):
        c.graph([(None, "aten::mm", [[4, 8], [8, n]], "mm_k"), (None, "aten::relu", [[4, n]], "relu_k")])
    s = Served()
    s.step("execute_4_a", [["mm_k", "relu_k"], ["mm_k", "relu_k"]])
    s.replay(["mm_k", "relu_k"])
    s.replay(["mm_k", "relu_k"])
    return c.events, s.events


# Near-exact. Graph 0: four blocks of gemm_k, add_k, act_k, copy_k (16 nodes; near_bound 1), each
# block's ops in its own nn.Module frame; graph 1: something else (other_k x 8).
BLOCK = [("aten::mm", "gemm_k"), ("aten::add", "add_k"), ("aten::relu", "act_k"), ("aten::copy_", "copy_k")]


def blocks_capture(own_replay=None):
    c = Capture()
    c.graph([(f"nn.Module: Block_{b}", op, [[4, 8]], k) for b in range(4) for op, k in BLOCK])
    c.graph([(None, "aten::neg", [[4]], "other_k")] * 8)
    if own_replay:
        c.own_replay(own_replay)
    return c


BLOCK_KERNELS = [k for _ in range(4) for _, k in BLOCK]


def near_missing():
    """One replay of graph 0 that never runs Block_2's add_k (node 9): 15 events, one from graph 0
    (1 <= near_bound(16) = 1); graph 1 (8 nodes) is out of reach: graph 0, near-exact. All 15 pair in place:
    Block_3's add_k with Block_3's aten::add (not Block_2's, which the k-th-of-its-name rule would
    give), and Block_2's aten::add has no GPU time. 150 of 150 µs attributed. The capture trace
    replays graph 0 itself the same way (its own health row says so)."""
    ran = BLOCK_KERNELS[:9] + BLOCK_KERNELS[10:]
    s = Served()
    s.replay(ran)
    return blocks_capture(own_replay=ran).events, s.events


def near_extra():
    """One replay of graph 0 with a stray_k between Block_1 and Block_2: 17 events, 1 from graph 0:
    near-exact. 16 pair with their nodes (160 µs attributed); stray_k (10 µs) pairs with none and
    stays under the graph launch, counted unattributed."""
    ran = BLOCK_KERNELS[:8] + ["stray_k"] + BLOCK_KERNELS[8:]
    s = Served()
    s.replay(ran)
    return blocks_capture().events, s.events


def ambiguous():
    """Graphs 0 and 1: k1..k7, then 0 ends with k_a (aten::add) and 1 with k_b (aten::sub). A replay
    of k1..k7: one node short of both, equally: not attributed (70 µs), health says why."""
    c = Capture()
    head = [(None, f"aten::op{i}", [[4]], f"k{i}") for i in range(1, 8)]
    c.graph(head + [(None, "aten::add", [[4]], "k_a")])
    c.graph(head + [(None, "aten::sub", [[4]], "k_b")])
    s = Served()
    s.replay([f"k{i}" for i in range(1, 8)])
    return c.events, s.events


XDIT_NODES = 1567


def xdit():
    """One graph of 1,567 nodes (kernels x0..x49 in turn, each under its own op), replayed 4 times
    with 1,566 GPU events each, the last node never run, as the xDiT trace of the issue does:
    1 <= near_bound(1567) = 32: all 4 x 1,566 = 6,264 kernels attributed (62,640 µs)."""
    c = Capture()
    c.graph([(None, f"aten::op{i % 50}", [[i % 50 + 1]], f"x{i % 50}") for i in range(XDIT_NODES)])
    s = Served()
    for _ in range(4):
        s.replay([f"x{i % 50}" for i in range(XDIT_NODES - 1)])
    return c.events, s.events


CASES = {"ties": ties, "steps": steps, "unlike": unlike, "near_missing": near_missing, "near_extra": near_extra,
         "ambiguous": ambiguous, "xdit": xdit}


def write(case, outdir):
    """Writes OUTDIR/served.json and OUTDIR/capture/cap.json; returns (served path, capture dir)."""
    cap, served = CASES[case]()
    os.makedirs(os.path.join(outdir, "capture"), exist_ok=True)
    with open(os.path.join(outdir, "capture", "cap.json"), "w") as f:
        json.dump({"traceEvents": cap}, f)
    path = os.path.join(outdir, "served.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": served}, f)
    return path, os.path.join(outdir, "capture")


if __name__ == "__main__":
    for name in CASES:
        print(*write(name, os.path.join(sys.argv[1], name)))
