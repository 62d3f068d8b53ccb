"""The importers (python/doppler/importers.py, `doppler graph import`): FLOPs, bytes, edges and
names on small hand-checked cases (a Linear, a Conv2d, an MLP's training step, a GPT-style decoder
defined here), torchvision's ResNet-50, Inception-V3 and ViT-B/16 against their published
multiply-add counts and parameter counts, an ONNX export read back, and the round trip: a
placement applied to the traced module gives the unplaced module's outputs.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (scripts/install-deps.sh);
without one the tests that need it SKIP naming the package, and under CI=true they fail."""

import importlib
import json
import math
import os
import sys
from collections import defaultdict

import numpy as np
import pytest

import doppler
from conftest import run_cli

DEBIAN = {"torch": "python3-torch", "torchvision": "python3-torchvision", "onnx": "python3-onnx"}


def need(module):
    try:
        return importlib.import_module(module)
    except ImportError:
        msg = "Python's %s is not installed (Debian: %s; sh scripts/install-deps.sh)" % (module, DEBIAN[module])
        if os.environ.get("CI") == "true":
            pytest.fail("CI: " + msg, pytrace=False)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def torch():
    t = need("torch")
    t.manual_seed(0)
    return t


def ops_of(g):
    return {o["name"]: o for o in g.torch.doc["ops"]}


def by_phase_kind(g):
    s = defaultdict(float)
    for o in g.torch.doc["ops"]:
        s[(o.get("phase"), o["kind"])] += o["flops"]
    return s


# ---- small hand-checked cases ----

def test_linear_flops_bytes_edges_names(torch):
    class One(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 4)

        def forward(self, x):
            return self.fc(x)

    g = doppler.Graph.from_torch(One(), torch.randn(2, 3))
    assert g.op_names == ["x", "fc"] and g.op_kinds.tolist() == ["input", "matmul"]
    # y = x W^T + b: 2 M N K = 2 * 2 * 4 * 3 multiply-adds' FLOPs, + M N for the bias
    assert g.work.tolist() == [0.0, 2 * 2 * 4 * 3 + 2 * 4]
    assert g.out_size.tolist() == [2 * 3 * 4, 2 * 4 * 4]  # fp32 bytes
    assert g.edges.tolist() == [[0, 1]] and g.edge_size.tolist() == [24.0]
    assert g.op_shapes == [(2, 3), (2, 4)]
    fc = ops_of(g)["fc"]
    assert fc["op_type"] == "Linear" and fc["param_bytes"] == (12 + 4) * 4
    assert g.torch.doc["memory"]["param_bytes"] == 64 and g.torch.doc["unclassified"] == {}


def test_conv2d_flops(torch):
    conv = torch.nn.Conv2d(3, 8, 3, padding=1)
    # the traced module itself is not a leaf: torch.fx follows its forward into F.conv2d, the
    # weight and bias read by get_attr (ops of kind param)
    g = doppler.Graph.from_torch(conv, torch.randn(2, 3, 8, 8))
    assert g.op_names == ["input_1", "weight", "bias", "conv2d"]
    assert g.op_kinds.tolist() == ["input", "param", "param", "conv"]
    # output 2 x 8 x 8 x 8 = 1024 elements, each 3 * 3 * 3 multiply-adds, + a bias add
    assert g.work.tolist() == [0.0, 0.0, 0.0, 2 * 1024 * 27 + 1024]
    assert g.out_size.tolist() == [2 * 3 * 64 * 4, 8 * 27 * 4, 8 * 4, 1024 * 4]
    assert sorted(g.edges.tolist()) == [[0, 3], [1, 3], [2, 3]]
    # grouped, no bias, no padding, as a module call: 1 x 8 x 3 x 3 = 72 outputs, each
    # (4 / 2) * 9 multiply-adds
    seq = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, groups=2, bias=False))
    g2 = doppler.Graph.from_torch(seq, torch.randn(1, 4, 5, 5))
    assert g2.work.tolist() == [0.0, 2 * 72 * 2 * 9] and g2.op_kinds.tolist() == ["input", "conv"]
    assert g2.torch.doc["ops"][1]["op_type"] == "Conv2d"


def test_einsum_and_attention_flops(torch):
    class Ein(torch.nn.Module):
        def forward(self, a, b):
            return torch.einsum("bij,bjk->bik", a, b)

    args = (torch.randn(2, 3, 4), torch.randn(2, 4, 5))
    # 2 x (b i j k = 2 * 3 * 4 * 5); make_fx lowers it to a bmm of the same count
    for level in ("module", "aten"):
        g = doppler.Graph.from_torch(Ein(), args, level=level)
        assert g.work.sum() == 2 * 2 * 3 * 4 * 5 and g.torch.doc["unclassified"] == {}

    class Att(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    g = doppler.Graph.from_torch(Att().eval(), torch.randn(1, 3, 8))
    att = ops_of(g)["attn"]
    # N 1, L = S = 3, E 8, h 2: q, k, v and out projections 4 x 2 * 3 * 8 * 8; scores and the
    # weighted sum 2 x 2 * 3 * 3 * 8; softmax 3 * 2 * 3 * 3; biases (2 * 3 + 2 * 3) * 8
    assert att["kind"] == "attention" and att["op_type"] == "MultiheadAttention"
    assert att["flops"] == 4 * 384 + 2 * 144 + 54 + 96


def test_mlp_training_step_by_hand(torch):
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    g = doppler.Graph.from_torch(m, torch.randn(2, 3), training=True)
    ops = ops_of(g)
    s = by_phase_kind(g)
    # forward: addmm 2*2*4*3 + 8, relu 8, addmm 2*2*2*4 + 4, loss sum over 4 outputs
    assert s[("forward", "matmul")] == 56 + 36 and s[("forward", "elementwise")] == 8
    assert s[("forward", "reduce")] == 4
    # backward: dL/dh (2x2 @ 2x4), dL/dW2 (2x2^T @ 2x4), dL/dW1 (4x2 @ 2x3): 32 + 32 + 48;
    # bias gradients sum 2x2 and 2x4; relu's backward 8
    assert s[("backward", "matmul")] == 32 + 32 + 48
    assert s[("backward", "reduce")] == 4 + 8 and s[("backward", "elementwise")] == 8
    # sgd: p - lr g, 2 FLOPs per parameter (26 parameters)
    assert s[("optimizer", "elementwise")] == 2 * 26
    assert sum(s.values()) == g.work.sum()
    for name in ("param:0.weight", "param:0.bias", "param:2.weight", "param:2.bias", "input0"):
        assert ops[name]["flops"] == 0 and ops[name]["phase"] == "input"
    assert ops["param:0.weight"]["param_bytes"] == 48 and g.torch.doc["memory"]["param_bytes"] == 104
    # the first addmm reads the bias, the input and the transposed weight
    names = g.op_names
    preds = sorted(names[s_] for s_, d in g.edges.tolist() if names[d] == "addmm")
    assert preds == ["input0", "param:0.bias", "t"]
    # adam: moments as inputs, more element-wise work, the same forward and backward
    ga = doppler.Graph.from_torch(m, torch.randn(2, 3), training=True, optimizer="adam")
    sa = by_phase_kind(ga)
    assert sa[("backward", "matmul")] == s[("backward", "matmul")]
    assert sa[("optimizer", "elementwise")] > s[("optimizer", "elementwise")]
    assert sum(1 for n in ga.op_names if n.startswith("adam_m:")) == 4


# ---- a GPT-style decoder ----

def gpt_module(torch, vocab=50, d=16, h=2, t=8, layers=2):
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(d)
            self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
            self.proj = torch.nn.Linear(d, d, bias=False)
            self.ln2 = torch.nn.LayerNorm(d)
            self.fc1 = torch.nn.Linear(d, 4 * d, bias=False)
            self.act = torch.nn.GELU()
            self.fc2 = torch.nn.Linear(4 * d, d, bias=False)
            self.register_buffer("mask", torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1))

        def forward(self, x):
            b = x.size(0)
            qkv = self.qkv(self.ln1(x)).split(d, dim=2)  # not unpacked: torch.fx cannot iterate
            q, k, v = qkv[0], qkv[1], qkv[2]
            q = q.view(b, t, h, d // h).transpose(1, 2)
            k = k.view(b, t, h, d // h).transpose(1, 2)
            v = v.view(b, t, h, d // h).transpose(1, 2)
            att = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
            att = att.masked_fill(self.mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))

    class GPT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = torch.nn.Embedding(vocab, d)
            self.pos = torch.nn.Parameter(torch.randn(1, t, d) * 0.02)
            self.blocks = torch.nn.ModuleList([Block() for _ in range(layers)])
            self.ln = torch.nn.LayerNorm(d)
            self.head = torch.nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT()


def test_gpt_decoder_flops_by_hand(torch):
    B, V, d, h, T, L = 2, 50, 16, 2, 8, 2
    m = gpt_module(torch, V, d, h, T, L).eval()
    idx = torch.randint(0, V, (B, T))
    g = doppler.Graph.from_torch(m, idx)
    assert g.torch.doc["source"].startswith("torch.fx.symbolic_trace")
    kinds = defaultdict(float)
    for k, w in zip(g.op_kinds.tolist(), g.work.tolist()):
        kinds[k] += w
    # per layer: qkv, q k^T, att v, proj, fc1, fc2 (2 M N K each); the vocabulary head
    per_layer = (2 * B * T * d * 3 * d + 2 * B * h * T * T * (d // h) * 2 + 2 * B * T * d * d
                 + 2 * B * T * d * 4 * d * 2)
    assert kinds["matmul"] == L * per_layer + 2 * B * T * d * V
    # 3 LayerNorms a layer... 2 a layer and the final one, 5 FLOPs an element
    assert kinds["norm"] == 5 * B * T * d * (2 * L + 1)
    assert kinds["softmax"] == 3 * B * h * T * T * L
    # element-wise: the scale and the mask per score, GELU per hidden unit, 2 residuals, the positions
    assert kinds["elementwise"] == L * (2 * B * h * T * T + B * T * 4 * d + 2 * B * T * d) + B * T * d
    assert g.work.sum() == sum(kinds.values()) and g.torch.doc["unclassified"] == {}
    names = g.op_names
    assert "blocks_0_qkv" in names and "head" in names and "pos" in names
    assert ops_of(g)["pos"]["kind"] == "param" and ops_of(g)["tok"]["kind"] == "view"
    # the training step: every product's backward is two products of its size
    gt = doppler.Graph.from_torch(m, idx, training=True)
    s = by_phase_kind(gt)
    assert s[("forward", "matmul")] == kinds["matmul"]
    assert s[("backward", "matmul")] == 2 * kinds["matmul"]
    assert s[("optimizer", "elementwise")] == 2 * sum(p.numel() for p in m.parameters())
    assert gt.n_ops > g.n_ops and set(o["phase"] for o in gt.torch.doc["ops"]) == {
        "input", "forward", "backward", "optimizer"}


# ---- the round trip ----

def expected_moves(imp, assignment):
    """(producer, other device) pairs over the graph's cross-device edges that carry tensors: a
    tensor's copy, or the elements of a tuple its getitems read (those were missing until a
    review); a size or other Python value moves nothing. A move names its producer as the graph
    does (the fx node's name, arg9_1, at the aten level: a review)."""
    g = imp.graph()
    out = set()
    for s, d in g.edges.tolist():
        if assignment[s] != assignment[d] and imp.doc["ops"][s]["out_bytes"] > 0:
            out.add((g.op_names[s], int(assignment[d])))
    return out


def test_round_trip_forward(torch):
    m = gpt_module(torch).eval()
    idx = torch.randint(0, 50, (3, 8))
    g = doppler.Graph.from_torch(m, idx)
    ref = m(idx)
    mach = doppler.Machine(devices=4)
    rng = np.random.default_rng(1)
    placements = [doppler.place(g, m_, machine=mach).assignment for m_ in ("round-robin", "heft")]
    placements += [rng.integers(0, 4, g.n_ops) for _ in range(3)]
    for a in placements:
        placed = g.torch.apply_placement(a, ["cpu"] * 4)
        assert torch.equal(placed(*g.torch.inputs), ref)
        assert set(placed.doppler_moves) == expected_moves(g.torch, a)
        assert len(placed.doppler_moves) == len(set(placed.doppler_moves))
        assert len(placed.doppler_moves) > 0 or len(set(a.tolist())) == 1
    one = g.torch.apply_placement(np.arange(g.n_ops) % 2, ["cpu", "cpu"])
    assert torch.equal(one(*g.torch.inputs), ref)

    # a module called from two devices (shared weights) runs on a copy on the second
    class Twice(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(torch.relu(self.fc(x)))

    tw, x = Twice(), torch.randn(3, 4)
    gt = doppler.Graph.from_torch(tw, x)
    assert gt.op_names == ["x", "fc", "relu", "fc_1"]
    placed = gt.torch.apply_placement([0, 0, 1, 1], ["cpu", "cpu"])
    assert torch.equal(placed(x), tw(x))
    assert [n.target for n in placed.graph.nodes if n.op == "call_module"] == ["fc", "fc__on_device1"]
    assert placed.doppler_moves == [("fc", 1)]
    with pytest.raises(ValueError, match="outside 0..1"):
        g.torch.apply_placement([2] * g.n_ops, ["cpu", "cpu"])
    with pytest.raises(ValueError, match=r"apply_placement: assignment: expected shape \(%d,\), got \(1,\)" % g.n_ops):
        g.torch.apply_placement([0], ["cpu"])
    # an assignment is integers, as Engine.simulate takes it: a float array ran each op on int() of
    # its entry (0.7 on device 0) without a word, and a NaN or a 2-D array said only NumPy's error
    for bad in (np.full(g.n_ops, 0.7), np.full(g.n_ops, np.nan), np.zeros(g.n_ops, bool)):
        with pytest.raises(TypeError, match="apply_placement: assignment: expected integer device ids"):
            g.torch.apply_placement(bad, ["cpu", "cpu"])
    with pytest.raises(ValueError, match=r"apply_placement: assignment: expected shape"):
        g.torch.apply_placement(np.zeros((1, g.n_ops), int), ["cpu"])
    # devices: a list of torch device names ("cpu" was three devices, "c", "p", "u")
    with pytest.raises(TypeError, match="devices is a list of torch device names"):
        g.torch.apply_placement([0] * g.n_ops, "cpu")
    with pytest.raises(ValueError, match=r"devices\[1\] 'gpu9' is not a torch device"):
        g.torch.apply_placement([0] * g.n_ops, ["cpu", "gpu9"])
    with pytest.raises(ValueError, match="devices is empty"):
        g.torch.apply_placement([0] * g.n_ops, [])


def test_round_trip_resnet_forward_and_training_step(torch):
    torchvision = need("torchvision")
    m = torchvision.models.resnet18(weights=None, num_classes=10)
    x = torch.randn(2, 3, 32, 32)
    # the forward pass at the module level: in-place ReLUs and residual adds (+=) on moved copies
    gf = doppler.Graph.from_torch(m.eval(), x)
    assert gf.torch.doc["source"].startswith("torch.fx.symbolic_trace")
    a = np.random.default_rng(2).integers(0, 4, gf.n_ops)
    placed = gf.torch.apply_placement(a, ["cpu"] * 4)
    assert torch.equal(placed(x), m(x)) and len(placed.doppler_moves) > gf.n_ops / 2
    g = doppler.Graph.from_torch(m, x, training=True)
    p = doppler.place(g, "heft", machine=doppler.Machine(devices=3))
    placed = g.torch.apply_placement(p.assignment, ["cpu"] * 3)
    ref = g.torch.graph_module(*g.torch.inputs)
    out = placed(*g.torch.inputs)
    assert len(out) == len(ref) and all(torch.equal(a, b) for a, b in zip(out, ref))
    assert set(placed.doppler_moves) == expected_moves(g.torch, p.assignment)
    # the step's loss is the module's
    assert torch.allclose(ref[0], m.train()(x).sum(), rtol=1e-5)
    # each convolution's backward gives the weight's gradient and, but for the first (its input
    # needs none), the input's: twice the forward's multiply-adds less the first's
    s = by_phase_kind(g)
    first = next(o for o in g.torch.doc["ops"] if o["kind"] == "conv")
    assert s[("backward", "conv")] == 2 * s[("forward", "conv")] - first["flops"]


# ---- torchvision at full size ----

# multiply-adds (torchvision's documented GFLOPS, counted as multiply-adds) and parameters
TORCHVISION = {
    "resnet50": ((1, 3, 224, 224), 4.09e9, 53, {}),
    "inception_v3": ((1, 3, 299, 299), 5.71e9, 94, {"aux_logits": False, "init_weights": False}),
    "vit_b_16": ((1, 3, 224, 224), 17.56e9, 1, {}),
}


@pytest.mark.parametrize("model", sorted(TORCHVISION))
def test_torchvision_models(torch, model, tmp_path):
    torchvision = need("torchvision")
    shape, macs, n_conv, kw = TORCHVISION[model]
    m = getattr(torchvision.models, model)(weights=None, **kw).eval()
    g = doppler.Graph.from_torch(m, torch.randn(*shape))
    doc = g.torch.doc
    assert g.n_ops == len(g.torch.nodes) == len([n for n in g.torch.graph_module.graph.nodes if n.op != "output"])
    assert g.op_names == [o["name"] for o in doc["ops"]] and doc["unclassified"] == {}
    kinds = g.op_kinds.tolist()
    assert kinds.count("conv") == n_conv
    # the products' FLOPs are twice the published multiply-adds (within 1%: they round)
    prod = sum(w for k, w in zip(kinds, g.work.tolist()) if k in ("conv", "matmul", "attention"))
    assert abs(prod / (2 * macs) - 1) < 0.01, prod
    params = sum(p.numel() * 4 for p in m.parameters()) + sum(b.numel() * b.element_size() for b in m.buffers())
    assert doc["memory"]["param_bytes"] == params
    assert all(w > 0 for k, w in zip(kinds, g.work.tolist()) if k in ("conv", "matmul", "norm", "attention"))
    # bytes on every edge; an op without output bytes is a view of no tensor (ViT's unused
    # attention weights, None)
    assert (g.edge_size > 0).all()
    assert all(k == "view" and g.n_successors[i] == 0 for i, (k, b) in enumerate(zip(kinds, g.out_size)) if b == 0)
    # a DAG in the library's eyes, written and read back the same
    order = {int(v): i for i, v in enumerate(g.topological_order)}
    assert all(order[s] < order[d] for s, d in g.edges.tolist())
    path = tmp_path / (model + ".json")
    g.torch.write(str(path))
    back = doppler.Graph.read(str(path))
    assert back.work.tolist() == g.work.tolist() and back.edges.tolist() == g.edges.tolist()
    # and placed on 8 devices
    mach = doppler.Machine(devices=8)
    rr = doppler.place(g, "round-robin", machine=mach).makespan
    cp = doppler.place(g, "cp", machine=mach).makespan
    assert 0 < cp <= rr
    _, out, _ = run_cli("graph", "info", str(path))
    assert "ops:             %d" % g.n_ops in out


# ---- ONNX and the command ----

def small_onnx(torch, path, dynamic=False):
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 8 * 8, 10))
    kw = {"dynamic_axes": {"x": {0: "batch"}, "y": {0: "batch"}}} if dynamic else {}
    torch.onnx.export(m, torch.randn(2, 3, 8, 8), str(path), input_names=["x"], output_names=["y"], **kw)
    return m


def test_onnx_import_command(torch, tmp_path):
    need("onnx")
    src = tmp_path / "small.onnx"
    m = small_onnx(torch, src)
    out = tmp_path / "small.json"
    _, text, _ = run_cli("graph", "import", src, "--out", out)
    assert "5 ops, 4 edges" in text
    d = json.loads(out.read_text())
    assert [o["op_type"] for o in d["ops"]] == ["input", "Conv", "Relu", "Flatten", "Gemm"]
    assert d["ops"][0]["name"] == "x" and d["name"] == "small"
    # the hand-checked counts of test_conv2d_flops and a 512 -> 10 Gemm with bias
    assert [o["flops"] for o in d["ops"]] == [0, 2 * 1024 * 27 + 1024, 1024, 0, 2 * 2 * 10 * 512 + 20]
    assert [e["bytes"] for e in d["edges"]] == [2 * 3 * 64 * 4, 4096, 4096, 4096]
    assert d["memory"]["param_bytes"] == sum(p.numel() * 4 for p in m.parameters())
    # the same FLOPs as the torch import of the same module
    gt = doppler.Graph.from_torch(m, torch.randn(2, 3, 8, 8))
    assert gt.work.tolist() == [o["flops"] for o in d["ops"]]
    g = doppler.Graph.from_onnx(str(src))
    assert g.work.tolist() == gt.work.tolist() and g.edges.tolist() == gt.edges.tolist()


def test_onnx_errors_name_the_file_and_write_nothing(torch, tmp_path):
    need("onnx")
    dyn = tmp_path / "dyn.onnx"
    small_onnx(torch, dyn, dynamic=True)
    out = tmp_path / "g.json"
    rc, _, err = run_cli("graph", "import", dyn, "--out", out, check=False)
    assert rc == 1 and "dyn.onnx" in err and "'batch'" in err and "--dim batch=N" in err and not out.exists()
    run_cli("graph", "import", dyn, "--out", out, "--dim", "batch=2")
    assert json.loads(out.read_text())["ops"][1]["flops"] == 2 * 1024 * 27 + 1024
    bad = tmp_path / "bad.onnx"
    bad.write_text("not a model\n")
    out2 = tmp_path / "bad.json"
    rc, _, err = run_cli("graph", "import", bad, "--out", out2, check=False)
    assert rc == 1 and "bad.onnx: not an ONNX model" in err and not out2.exists()
    rc, _, err = run_cli("graph", "import", tmp_path / "none.onnx", "--out", out2, check=False)
    assert rc == 1 and "none.onnx: no such file" in err
    rc, _, err = run_cli("graph", "import", dyn, check=False)
    assert rc == 2 and "--out" in err
    rc, _, err = run_cli("graph", "import", dyn, "--dim", "batch=2", "--out", tmp_path / "no" / "g.json", check=False)
    assert rc == 1 and "no/g.json: cannot write: No such file or directory" in err and "[Errno" not in err
    assert list(tmp_path.glob(".doppler-import-*")) == []
    # an empty file parses as an empty ONNX model: it wrote a graph of 0 ops, exit 0 (2026-12-06)
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    rc, _, err = run_cli("graph", "import", empty, "--out", out2, check=False)
    assert rc == 1 and "empty.onnx: not an ONNX model, or one without nodes" in err and not out2.exists()
    rc, _, err = run_cli("graph", "import", tmp_path, "--out", out2, check=False)
    assert rc == 1 and "is a directory, not an ONNX file" in err and not out2.exists()
    # a directory as the output is refused by name; a FIFO is written in place, not replaced (the
    # rename replaced any special file: as root, --out /dev/full left a JSON file there)
    rc, _, err = run_cli("graph", "import", dyn, "--dim", "batch=2", "--out", tmp_path, check=False)
    assert rc == 1 and "is a directory: doppler writes regular files" in err
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    import stat
    import threading
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    run_cli("graph", "import", dyn, "--dim", "batch=2", "--out", fifo)
    reader.join(60)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and json.loads(got[0])["ops"][1]["flops"] == 2 * 1024 * 27 + 1024
    assert list(tmp_path.glob(".doppler-import-*")) == []


def test_command_imports_a_torchvision_training_step(torch, tmp_path):
    need("torchvision")
    out = tmp_path / "r18.json"
    run_cli("graph", "import", "torchvision:resnet18", "--training", "--input-shape", "2x3x32x32", "--out", out)
    d = json.loads(out.read_text())
    assert d["name"] == "resnet18" and {o["phase"] for o in d["ops"]} == {"input", "forward", "backward", "optimizer"}
    g = doppler.Graph.read(str(out))
    assert g.n_ops == len(d["ops"]) and g.work.sum() > 0
    rc, _, err = run_cli("graph", "import", "torchvision:nonesuch", "--out", out, check=False)
    assert rc == 1 and "torchvision:nonesuch: no such model" in err


def test_missing_package_is_named(monkeypatch, tmp_path):
    from doppler import importers
    monkeypatch.setitem(sys.modules, "onnx", None)
    model = tmp_path / "any.onnx"  # a file that exists: a missing one is said first (FileError)
    model.write_bytes(b"")
    with pytest.raises(ImportError, match="python3-onnx"):
        importers.onnx_to_doc(str(model))
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="python3-torch"):
        doppler.Graph.from_torch(object(), ())


def test_training_step_with_frozen_parameters(torch):
    # a frozen parameter is an input op param:NAME with its bytes, as a trained one, without a
    # gradient or an update; a frozen convolution's weight crashed the convolution's rule
    # (IndexError), a frozen Linear became a _param_constant op of 0 bytes (a review)
    from doppler.importers import trace_torch
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(144, 2))
    m[0].requires_grad_(False)
    x = torch.randn(1, 3, 8, 8)
    d = trace_torch(m, x, training=True).doc
    names = [o["name"] for o in d["ops"]]
    assert not any("_param_constant" in n for n in names)
    for p in ("0.weight", "0.bias", "3.weight", "3.bias"):
        assert "param:" + p in names
    assert d["memory"]["param_bytes"] == sum(p.numel() * 4 for p in m.parameters())
    # the update is of the Linear's two parameters only: SGD, 2 FLOPs an element
    opt = sum(o["flops"] for o in d["ops"] if o.get("phase") == "optimizer")
    assert opt == 2 * (144 * 2 + 2)
    da = trace_torch(m, x, training=True, optimizer="adam").doc
    assert sum(1 for o in da["ops"] if o["name"].startswith("adam_m:")) == 2
    m.requires_grad_(False)
    with pytest.raises(ValueError, match="needs a parameter that requires grad"):
        trace_torch(m, x, training=True)


def test_import_command_output_and_errors(torch, tmp_path):
    # --out names the native JSON format (a .dot name got JSON, exit 0), - is stdout; the file
    # is readable by others under umask 022 (mkstemp's 0600 was kept); a shape the model
    # refuses is one line naming the model (a 66-line traceback), exit 1, nothing written; ops
    # without a FLOP rule are named on stderr (exit 0)
    need("torchvision")
    need("onnx")
    src = tmp_path / "small.onnx"
    small_onnx(torch, src)
    rc, _, err = run_cli("graph", "import", src, "--out", tmp_path / "g.dot", check=False)
    assert rc == 2 and "native JSON format" in err and not (tmp_path / "g.dot").exists()
    _, text, _ = run_cli("graph", "import", src, "--out", "-")
    assert json.loads(text)["ops"][1]["op_type"] == "Conv"
    old = os.umask(0o022)
    try:
        run_cli("graph", "import", src, "--out", tmp_path / "g.json")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "g.json").st_mode & 0o777 == 0o644
    out = tmp_path / "r.json"
    rc, _, err = run_cli("graph", "import", "torchvision:resnet18", "--input-shape", "1x3x8", "--out", out, check=False)
    assert rc == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "torchvision:resnet18: RuntimeError:" in err and "channels" in err and not out.exists()
    lstm = tmp_path / "lstm.onnx"
    torch.onnx.export(torch.nn.LSTM(8, 16), torch.randn(3, 1, 8), str(lstm))
    rc, _, err = run_cli("graph", "import", lstm, "--out", tmp_path / "l.json", check=False)
    assert rc == 0 and "without a FLOP rule" in err and "LSTM" in err


def test_python_importers_warn_of_ops_without_a_flop_rule(torch, tmp_path):
    # Graph.from_onnx dropped the list of op types without a FLOP rule, and neither import said
    # a word (a review: an LSTM's FLOPs counted 160)
    need("onnx")
    lstm = tmp_path / "lstm.onnx"
    torch.onnx.export(torch.nn.LSTM(8, 16), torch.randn(3, 1, 8), str(lstm))
    with pytest.warns(UserWarning, match="without a FLOP rule.*LSTM"):
        g = doppler.Graph.from_onnx(str(lstm))
    assert g.unclassified.get("LSTM", 0) >= 1


# ---- a review of the importers (2026-12-06): each case held the wrong value before its fix ----

def test_shared_parameters_counted_once(torch):
    # a module called twice, and a weight tied to another module's: the forward import counted
    # their bytes once per use (160 and 320 bytes), the training step's trace once
    class Twice(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.l(self.l(x))

    for training in (False, True):
        g = doppler.Graph.from_torch(Twice(), torch.randn(2, 4), training=training)
        assert g.torch.doc["memory"]["param_bytes"] == 80

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)
            self.out = torch.nn.Linear(4, 10, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, idx):
            return self.out(self.emb(idx)) + torch.nn.functional.linear(self.emb(idx), self.emb.weight)

    g = doppler.Graph.from_torch(Tied(), torch.randint(0, 10, (2, 3)))
    assert g.torch.doc["memory"]["param_bytes"] == 160


def test_round_trip_moves_tuple_elements(torch):
    # a getitem of a tuple made on another device reads a transfer: a copy and a listed move
    # (it was a plain .to, and doppler_moves was empty)
    class M(torch.nn.Module):
        def forward(self, x):
            a, b = torch.max(x, 1)
            return a * 2

    x = torch.randn(3, 4)
    g = doppler.Graph.from_torch(M(), x)
    assert g.op_names == ["input0", "max_1", "getitem", "getitem_1", "mul"]  # traced by make_fx
    placed = g.torch.apply_placement([0, 0, 1, 1, 1], ["cpu", "cpu"])
    assert torch.equal(placed(x), M()(x))
    assert placed.doppler_moves == [("max_1", 1)]
    copies = [n for n in placed.graph.nodes if n.op == "call_function" and n.target is doppler.importers._transfer
              and n.kwargs.get("copy", True)]
    assert len(copies) == 2
    # on one device: no move
    assert g.torch.apply_placement([0] * 5, ["cpu"]).doppler_moves == []


def test_forward_import_refuses_extra_inputs_and_keeps_the_module(torch):
    class L(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(3, 3)

        def forward(self, x):
            return self.l(x)

    with pytest.raises(TypeError, match="takes 1 input, 2 example inputs"):
        doppler.Graph.from_torch(L(), (torch.randn(2, 3), torch.randn(7, 7, 7)))
    # the import ran the module's BatchNorm in training mode: its running statistics changed
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    doppler.Graph.from_torch(m, torch.randn(2, 3, 8, 8))
    assert all(torch.equal(before[k], v) for k, v in m.state_dict().items())


def test_flop_rules_bilinear_addbmm_pool_binary_max(torch):
    F = torch.nn.functional

    class Bi(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b = torch.nn.Bilinear(3, 4, 5)

        def forward(self, x, y):
            return self.b(x, y)

    g = doppler.Graph.from_torch(Bi(), (torch.randn(2, 3), torch.randn(2, 4)))
    assert ops_of(g)["b"]["flops"] == 2 * 10 * 3 * 4 + 10

    class Fn(torch.nn.Module):
        def forward(self, c, a, b, img, u, v):
            return (torch.addbmm(c, a, b), F.max_pool2d(img, 2), torch.max(u, v))

    g = doppler.Graph.from_torch(Fn(), (torch.randn(2, 5), torch.randn(4, 2, 3), torch.randn(4, 3, 5),
                                        torch.randn(2, 4, 4), torch.randn(1, 4), torch.randn(3, 4)))
    ops = ops_of(g)
    assert ops["addbmm"]["flops"] == 2 * 4 * 2 * 3 * 5 + 10
    assert ops["max_pool2d"]["flops"] == 2 * 2 * 2 * 4  # 8 outputs, a 2 x 2 window
    assert ops["max_1"]["flops"] == 12 and ops["max_1"]["kind"] == "elementwise"


def test_training_phases_and_tuple_outputs(torch):
    # BatchNorm's count update and allocations are the forward pass's, unread outputs of the
    # convolution's backward the backward's: they were all "optimizer"; the update is SGD's two
    # ops a parameter
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(4 * 6 * 6, 2))
    g = doppler.Graph.from_torch(m, torch.randn(2, 3, 8, 8), training=True)
    ops = g.torch.doc["ops"]
    n_params = sum(1 for _ in m.parameters())
    opt = [o for o in ops if o["phase"] == "optimizer"]
    assert len(opt) == 2 * n_params and {o["op_type"] for o in opt} == {"aten.mul.Tensor", "aten.sub.Tensor"}
    assert all(o["phase"] == "forward" for o in ops if o["op_type"].startswith(("aten.add_", "aten.empty")))

    # a module returning a tuple (torchvision's GoogLeNet returns a named tuple in training):
    # the default loss sums every floating-point output (output.sum() raised AttributeError)
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(3, 2)

        def forward(self, x):
            y = self.l(x)
            return y, y * 3

    two, x = Two(), torch.randn(4, 3)
    g = doppler.Graph.from_torch(two, x, training=True)
    ref = g.torch.graph_module(*g.torch.inputs)
    assert torch.allclose(ref[0], two(x)[0].sum() + two(x)[1].sum())


def test_import_command_dims_before_inference_and_existing_out(torch, tmp_path):
    need("onnx")

    class R(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(12, 4)

        def forward(self, x):
            return self.l(x.view(x.shape[0], -1))

    src = tmp_path / "dyn.onnx"
    torch.onnx.export(R(), torch.randn(3, 3, 4), str(src), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    out = tmp_path / "dyn.json"
    run_cli("graph", "import", src, "--dim", "batch=3", "--out", out)
    d = json.loads(out.read_text())
    assert sum(o["flops"] for o in d["ops"]) == 2 * 3 * 4 * 12 + 12
    # an existing file that is not FILE.json is refused too, and left as it was
    dot = tmp_path / "g.dot"
    dot.write_text("digraph g { a -> b; }\n")
    rc, _, err = run_cli("graph", "import", src, "--dim", "batch=3", "--out", dot, check=False)
    assert rc == 2 and "native JSON format" in err and dot.read_text() == "digraph g { a -> b; }\n"


# ---- a review of the importers (2026-12-07): each case held the wrong value before ----

def test_tied_weights_training_step(torch):
    """An embedding tied to the output layer: one parameter input, the gradient through both uses
    (functional_call swapped one name only: the second use was a constant, the gradient wrong and
    the parameter's bytes counted twice)."""
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.e = torch.nn.Embedding(10, 4)
            self.o = torch.nn.Linear(4, 10, bias=False)
            self.o.weight = self.e.weight

        def forward(self, x):
            return self.o(self.e(x))
    m, x = Tied(), torch.tensor([[1, 2, 3]])
    g = doppler.Graph.from_torch(m, x, training=True)
    res = g.torch.graph_module(*g.torch.inputs)
    want, = torch.autograd.grad(m(x).sum(), [m.e.weight])
    assert torch.allclose(res[1], want)
    assert g.torch.doc["memory"]["param_bytes"] == 160.0
    assert not any(o["op_type"] == "get_attr" for o in g.torch.doc["ops"])
    # the output layer's weight gradient: a 3 x 10 by 3 x 4 product, 2 * 10 * 4 * 3 FLOPs
    assert any(o.get("phase") == "backward" and o["kind"] == "matmul" and o["flops"] == 240 for o in g.torch.doc["ops"])


def test_tensor_constant_has_its_bytes(torch):
    """A plain tensor attribute (no parameter, no buffer) under make_fx: its bytes (it had 0, and
    a convolution reading one failed in its rule)."""
    class C(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = torch.randn(64, 64)
            self.w = torch.randn(4, 3, 3, 3)

        def forward(self, x, y):
            n, c = x.shape  # make_fx: symbolic_trace cannot unpack a shape
            return x @ self.m, torch.nn.functional.conv2d(y, self.w)
    g = doppler.Graph.from_torch(C(), (torch.randn(2, 64), torch.randn(1, 3, 8, 8)))
    ops = g.torch.doc["ops"]
    consts = [o for o in ops if o["op_type"] == "get_attr"]
    assert sorted(o["out_bytes"] for o in consts) == [432.0, 16384.0]
    conv = next(o for o in ops if "convolution" in o["op_type"])
    assert conv["flops"] == 2 * 4 * 6 * 6 * 3 * 3 * 3


def test_unused_parameter_and_inputs_left_alone(torch):
    """A parameter the loss does not use: no gradient, no update (autograd.grad refused the whole
    step); the caller's example inputs are not changed by an in-place op of the module."""
    class U(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(4, 4)
            self.unused = torch.nn.Linear(4, 4)

        def forward(self, x):
            x.mul_(2)
            return self.a(x)
    x = torch.ones(2, 4)
    for training in (False, True):
        g = doppler.Graph.from_torch(U(), x, training=training)
        assert float(x[0, 0]) == 1.0
        if training:
            names = [o["name"] for o in g.torch.doc["ops"]]
            assert "param:unused.weight" in names
            res = g.torch.graph_module(*g.torch.inputs)
            assert len(res) == 1 + 2 + 2  # the loss, a's two gradients, a's two updates
    with pytest.raises(TypeError, match="example input 1 is a int"):
        doppler.Graph.from_torch(U(), (x, 3), training=True)


def test_getitem_edge_carries_its_tensor(torch):
    """split's four parts: each getitem's edge carries its part (it carried the whole tuple), as
    the round trip copies."""
    class S(torch.nn.Module):
        def forward(self, x):
            a, b, c, d = torch.split(x, 256, 1)
            return a.relu(), b.relu(), c.relu(), d.relu()
    g = doppler.Graph.from_torch(S(), torch.randn(1, 1024), level="aten")
    doc = g.torch.doc
    split = next(i for i, o in enumerate(doc["ops"]) if "split" in o["op_type"])
    out = [e["bytes"] for e in doc["edges"] if e["src"] == split]
    assert out == [1024.0] * 4


def test_training_round_trip_on_another_device(torch):
    """The loss's seed (make_fx's ones_like(..., device=cpu)) is made on its op's device: a
    training step placed on the meta device runs (it failed: meta and cpu)."""
    g = doppler.Graph.from_torch(torch.nn.Linear(4, 4), torch.randn(2, 4), training=True)
    gm = g.torch.apply_placement([0] * g.n_ops, ["meta"])
    out = gm(*g.torch.inputs)
    assert all(t.device.type == "meta" for t in out)


def test_inplace_variants_and_allocations_have_rules(torch):
    """bernoulli_ (Dropout in a training step) takes bernoulli's rule, new_empty_strided is an
    allocation (no FLOPs): neither is reported as without a rule."""
    from doppler.importers import _named_rule
    assert _named_rule("bernoulli_", [(4, 4)], 16, [], {}).classified
    assert _named_rule("silu_", [(4, 4)], 16, [], {}).classified
    r = _named_rule("new_empty_strided", [(4, 4)], 16, [], {})
    assert r.classified and r.flops == 0


def test_data_dependent_control_flow_names_both_tracers(torch):
    class D(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2
            return x
    with pytest.raises(RuntimeError, match="torch.fx.symbolic_trace: .*make_fx: "):
        doppler.Graph.from_torch(D(), torch.randn(3))


def test_onnx_bfloat16_subgraph_and_bad_dims(torch, tmp_path):
    """bfloat16 is 2 bytes (4: numpy's storage type); an If's branches reading an outer tensor make
    an edge from its producer (none: the If could run first); a bad dims size and a NUL in a name
    are refused naming the ONNX file."""
    onnx = need("onnx")
    from onnx import helper, TensorProto as T
    vi = lambda n, t=T.BFLOAT16: helper.make_tensor_value_info(n, t, [4, 8])
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x")], [vi("y")]),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, str(tmp_path / "bf16.onnx"))
    assert list(doppler.Graph.from_onnx(str(tmp_path / "bf16.onnx")).out_size) == [64, 64]
    f = lambda n: helper.make_tensor_value_info(n, T.FLOAT, [4, 8])
    then_g = helper.make_graph([helper.make_node("Sigmoid", ["h"], ["o1"])], "then", [], [f("o1")])
    else_g = helper.make_graph([helper.make_node("Tanh", ["h"], ["o2"])], "else", [], [f("o2")])
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="relu"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    m = helper.make_model(helper.make_graph(nodes, "g", [f("x"), helper.make_tensor_value_info("c", T.BOOL, [])],
                                            [f("y")]), opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, str(tmp_path / "if.onnx"))
    from doppler.importers import onnx_to_doc
    doc = onnx_to_doc(str(tmp_path / "if.onnx"))
    names = [o["name"] for o in doc["ops"]]
    assert (names.index("relu"), names.index("if")) in [(e["src"], e["dst"]) for e in doc["edges"]]
    for bad in (-3, 2.5, 0, True, "x"):
        with pytest.raises(ValueError, match="bf16.onnx: dimension 'batch': expected a positive integer"):
            onnx_to_doc(str(tmp_path / "bf16.onnx"), dims={"batch": bad})
    # sizes of a dimension the model names (one it does not name is refused: the next test)
    vd = lambda n: helper.make_tensor_value_info(n, T.BFLOAT16, ["batch", 8])
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vd("x")], [vd("y")]),
                          opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, str(tmp_path / "dyn.onnx"))
    for fine in (np.int64(4), np.int32(4), 4.0, "4", 4):  # numpy's integers were refused (a review)
        onnx_to_doc(str(tmp_path / "dyn.onnx"), dims={"batch": fine})
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="a\0b")], "g", [f("x")],
                                            [f("y")]), opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, str(tmp_path / "nul.onnx"))
    with pytest.raises(ValueError, match="nul.onnx: node 0 .*NUL"):
        onnx_to_doc(str(tmp_path / "nul.onnx"))


def test_vector_products_flops(torch, tmp_path):
    """mv, dot, vdot, addmv have the matmul rule (2 N(out) K, K the contracted size): they counted
    one FLOP an output element (matmul of (4,3,6) x (6) at the aten level is mv: 12, 144 by hand);
    outer is one multiply an output element (a classified rule, as aten's mul is). ONNX's MatMul
    with a 1-D operand counts the same."""
    class MV(torch.nn.Module):
        def forward(self, a, v):
            return torch.matmul(a, v)

    g = doppler.Graph.from_torch(MV(), (torch.randn(4, 3, 6), torch.randn(6)), level="aten")
    flops = {o["op_type"]: o["flops"] for o in g.torch.doc["ops"]}
    assert flops["aten.mv.default"] == 2 * 4 * 3 * 6

    class V(torch.nn.Module):
        def forward(self, a, b):
            m = torch.ones(3, 6)
            return (torch.dot(a, b), torch.vdot(a, b), torch.mv(m, b), torch.addmv(a[:3], m, b),
                    torch.outer(a, b))

    for level, pre in (("module", "torch."), ("aten", "aten.")):
        g = doppler.Graph.from_torch(V(), (torch.randn(6), torch.randn(6)), level=level)
        flops = {o["op_type"].split(".default")[0]: o["flops"] for o in g.torch.doc["ops"]}
        assert flops[pre + "dot"] == 2 * 6 and flops[pre + "vdot"] == 2 * 6
        assert flops[pre + "mv"] == 2 * 3 * 6 and flops[pre + "addmv"] == 2 * 3 * 6 + 3
        assert flops["torch.outer" if level == "module" else "aten.mul.Tensor"] == 36
        assert g.torch.doc["unclassified"] == {}
    onnx = need("onnx")
    from onnx import helper, TensorProto as T
    from doppler.importers import onnx_to_doc
    vi = lambda n, s: helper.make_tensor_value_info(n, T.FLOAT, s)
    nodes = [helper.make_node("MatMul", ["a", "v"], ["y"], name="mv"),
             helper.make_node("MatMul", ["v", "v"], ["z"], name="dot")]
    m = helper.make_model(helper.make_graph(nodes, "g", [vi("a", [4, 3, 6]), vi("v", [6])],
                                            [vi("y", [4, 3]), vi("z", [])]), opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, str(tmp_path / "mv.onnx"))
    doc = onnx_to_doc(str(tmp_path / "mv.onnx"))
    assert [o["flops"] for o in doc["ops"] if o["kind"] == "matmul"] == [144, 12]


def test_onnx_subgraph_weights_are_parameters(torch, tmp_path):
    """Weights read only inside an If's branch or a Loop's body, and a branch's own initializers,
    are parameter bytes (they were not: a scripted loop over a Linear(4, 4) had 0), each
    initializer counted once however many branches read it."""
    onnx = need("onnx")
    from onnx import helper, numpy_helper, TensorProto as T
    from doppler.importers import onnx_to_doc
    f = lambda n: helper.make_tensor_value_info(n, T.FLOAT, [2, 4])
    w = lambda n, k: numpy_helper.from_array(np.ones(k, np.float32), n)
    then_g = helper.make_graph([helper.make_node("MatMul", ["h", "W2"], ["t1"]),
                                helper.make_node("MatMul", ["t1", "W"], ["o1"])], "then", [], [f("o1")])
    else_g = helper.make_graph([helper.make_node("Add", ["h", "b"], ["o2"])], "else", [], [f("o2")],
                               initializer=[w("b", (4,))])
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
             helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)]
    m = helper.make_model(helper.make_graph(nodes, "g", [f("x"), helper.make_tensor_value_info("c", T.BOOL, [])],
                                            [f("y")], initializer=[w("W", (4, 4)), w("W2", (4, 4))]),
                          opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, str(tmp_path / "if.onnx"))
    doc = onnx_to_doc(str(tmp_path / "if.onnx"))
    # W 64 bytes (read by mm, then by the then-branch: once), W2 64, the else-branch's b 16
    assert {o["name"]: o.get("param_bytes") for o in doc["ops"]} == {"x": None, "c": None, "mm": 64, "if": 80}
    assert doc["memory"]["param_bytes"] == 144

    class Loop(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x, n: int):
            for _ in range(n):
                x = self.fc(x)
            return x
    path = str(tmp_path / "loop.onnx")
    torch.onnx.export(torch.jit.script(Loop()), (torch.randn(2, 4), 3), path, opset_version=13,
                      input_names=["x", "n"], output_names=["y"])
    # the loop's output shape is left symbolic by ONNX's inference: sized here
    dims = {d.dim_param: v for d, v in zip(onnx.shape_inference.infer_shapes(onnx.load(path)).graph.output[0]
                                           .type.tensor_type.shape.dim, (2, 4)) if d.dim_param}
    doc = onnx_to_doc(path, dims)
    assert doc["memory"]["param_bytes"] == (16 + 4) * 4
    assert [o["param_bytes"] for o in doc["ops"] if o["op_type"] == "Loop"] == [80]


def test_onnx_out_of_order_and_unmade_tensors_refused(torch, tmp_path):
    """A node that reads a tensor a later node makes (nodes out of topological order, a file
    onnx.checker refuses) was imported without that edge, exit 0; a tensor no node, graph input or
    initializer makes (only value_info names it) too. Both are refused naming node and tensor."""
    onnx = need("onnx")
    from onnx import helper, TensorProto as T
    from doppler.importers import onnx_to_doc
    f = lambda n: helper.make_tensor_value_info(n, T.FLOAT, [2, 4])

    def save(nodes, name, value_info=(), inputs=("x",)):
        m = helper.make_model(helper.make_graph(nodes, "g", [f(x) for x in inputs] + (
            [helper.make_tensor_value_info("c", T.BOOL, [])] if "c" in inputs else []), [f("y")],
            value_info=list(value_info)), opset_imports=[helper.make_opsetid("", 13)])
        p = str(tmp_path / name)
        onnx.save(m, p)
        return p, m
    p, m = save([helper.make_node("Sigmoid", ["h"], ["y"], name="sig"),
                 helper.make_node("Relu", ["x"], ["h"], name="relu")], "order.onnx", [f("h")])
    with pytest.raises(onnx.checker.ValidationError):
        onnx.checker.check_model(m)
    with pytest.raises(ValueError, match=r"order.onnx: node 0 \(Sigmoid sig\) reads tensor 'h' before node 1 "
                                         r"\(Relu relu\) makes it: the nodes are not in topological order"):
        onnx_to_doc(p)
    out = tmp_path / "order.json"
    rc, _, err = run_cli("graph", "import", p, "--out", out, check=False)
    assert rc == 1 and "'h'" in err and "topological" in err and not out.exists()
    # an If's branch reading a tensor a later node makes
    then_g = helper.make_graph([helper.make_node("Sigmoid", ["h"], ["o1"])], "then", [], [f("o1")])
    else_g = helper.make_graph([helper.make_node("Tanh", ["x"], ["o2"])], "else", [], [f("o2")])
    p, _ = save([helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g),
                 helper.make_node("Relu", ["x"], ["h"], name="relu")], "iforder.onnx", [f("h")], ("x", "c"))
    with pytest.raises(ValueError, match=r"node 0 \(If if\) reads tensor 'h' \(in a subgraph\) before node 1"):
        onnx_to_doc(p)
    # a tensor only value_info names
    p, _ = save([helper.make_node("Add", ["x", "ghost"], ["y"], name="add")], "ghost.onnx", [f("ghost")])
    with pytest.raises(ValueError, match=r"ghost.onnx: node 0 \(Add add\) reads tensor 'ghost', which no node, "
                                         r"graph input or initializer makes"):
        onnx_to_doc(p)


def test_onnx_reshape_of_computed_shape_before_opset_14(torch, tmp_path):
    """x.view(x.shape[0], -1) exported with a dynamic batch at opset 11 or 13: ONNX's inference
    (onnx 1.12) leaves the Reshape's output unknown there (no data propagation), and the import
    failed; its shape is now computed from the shape arithmetic (Shape, Gather, Unsqueeze, Concat,
    ...), the same graph as at opset 14 and 16 (2 x 5 x 8 x 12 + 40 FLOPs). A shape the import
    cannot compute names the tensor and the input."""
    onnx = need("onnx")
    from onnx import helper, numpy_helper, TensorProto as T
    from doppler.importers import onnx_to_doc, _reshape_target

    class R(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(12, 8)

        def forward(self, x):
            return self.fc(x.view(x.shape[0], -1))
    flops = {}
    for opset in (11, 13, 14, 16):
        p = str(tmp_path / ("r%d.onnx" % opset))
        torch.onnx.export(R(), torch.randn(2, 3, 4), p, opset_version=opset, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        doc = onnx_to_doc(p, {"batch": 5})
        flops[opset] = sum(o["flops"] for o in doc["ops"])
        assert [o["shape"] for o in doc["ops"] if o["op_type"] == "Reshape"] == [[5, 12]]
        assert [o["shape"] for o in doc["ops"] if o["op_type"] == "Gemm"] == [[5, 8]]
    assert flops == {k: 2 * 5 * 8 * 12 + 5 * 8 for k in (11, 13, 14, 16)}
    out = tmp_path / "r11.json"
    run_cli("graph", "import", tmp_path / "r11.onnx", "--out", out, "--dim", "batch=5")
    assert sum(o["flops"] for o in json.loads(out.read_text())["ops"]) == 1000

    # Slice, Squeeze, Cast, Mul, Div, and 0 (copy the input's dimension) and -1 (the rest)
    i64 = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)
    c = lambda out, v: helper.make_node("Constant", [], [out], value=v)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             c("one", i64("one", [1])), c("two", i64("two", [2])), c("ax0", i64("ax0", [0])),
             helper.make_node("Slice", ["s", "one", "two"], ["s1"]),                  # [3]
             helper.make_node("Squeeze", ["s1", "ax0"], ["n3"]),                      # 3
             helper.make_node("Cast", ["n3"], ["f3"], to=T.FLOAT),
             c("four", numpy_helper.from_array(np.array(4.0, np.float32), "four")),
             helper.make_node("Mul", ["f3", "four"], ["f12"]),
             helper.make_node("Cast", ["f12"], ["n12"], to=T.INT64),
             c("half", i64("half", 2)),
             helper.make_node("Div", ["n12", "half"], ["n6"]),                        # 6
             helper.make_node("Unsqueeze", ["n6", "ax0"], ["u6"]),
             c("zero", i64("zero", [0])), c("minus", i64("minus", [-1])),
             helper.make_node("Concat", ["zero", "u6", "minus"], ["shape"], axis=0),  # [0, 6, -1]
             helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]
    xi = helper.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 4])
    yi = helper.make_tensor_value_info("y", T.FLOAT, ["o0", "o1", "o2"])
    m = helper.make_model(helper.make_graph(nodes, "g", [xi], [yi]), opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, str(tmp_path / "chain.onnx"))
    doc = onnx_to_doc(str(tmp_path / "chain.onnx"), {"batch": 5})
    shapes = {o["name"]: o.get("shape") for o in doc["ops"]}
    assert shapes["reshape"] == shapes["relu"] == [5, 6, 2]

    # a shape the graph takes as an input: not computable, said so
    si = helper.make_tensor_value_info("s", T.INT64, [3])
    m = helper.make_model(helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape"),
                                             helper.make_node("Relu", ["r"], ["y"])], "g", [xi, si], [yi]),
                          opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, str(tmp_path / "input_shape.onnx"))
    with pytest.raises(ValueError, match=r"input_shape.onnx: .*tensor 'r' has no inferred shape: its shape input "
                                         r"'s' is not computable: it is the graph input 's'"):
        onnx_to_doc(str(tmp_path / "input_shape.onnx"), {"batch": 5})
    # the spec's 0 and -1
    assert _reshape_target([5, 3, 4], [0, -1]) == [5, 12]
    assert _reshape_target([5, 3, 4], [-1, 0, 2]) == [10, 3, 2]
    assert _reshape_target([0, 3], [0, 3], allowzero=True) == [0, 3]
    for bad, why in (([-1, -1], "more than one -1"), ([7, -1], "do not divide"), ([0, 0, 0, 0], "no input dimension"),
                     ([5, 5], "do not make"), ([-2, 30], "dimension -2")):
        with pytest.raises(ValueError, match=why):
            _reshape_target([5, 3, 4], bad)


def test_round_trip_moves_name_the_graph_ops(torch):
    """At the aten level (make_fx) doppler_moves named inputs and parameters by fx's names
    (arg1_1); it names them as the graph's ops (input0, param:fc.bias)."""
    x = torch.randn(2, 4)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    g = doppler.Graph.from_torch(m, x, level="aten")
    a = [0 if n.startswith(("param:", "input")) else 1 for n in g.op_names]
    placed = g.torch.apply_placement(a, ["cpu", "cpu"])
    assert torch.equal(placed(*g.torch.inputs), m(x))
    assert sorted(placed.doppler_moves) == [("input0", 1), ("param:0.bias", 1), ("param:0.weight", 1)]


def test_inplace_changes_are_dependencies_and_round_trip(torch):
    """An op that changes a tensor in place is a dependency of every later read of it or of a view
    of it: y.add_(1) then y * 2 had no edge from add_ to mul (torch.fx read relu), and the round
    trip lost the change made on a copy; y[:, 0] = 0.0 (aten's fill_ on a select) likewise. Every
    placement on 2 devices gives the module's outputs, or is refused where the ops sharing a
    storage changed through a view are on two devices."""
    import itertools

    class IP(torch.nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            y.add_(1)
            return y * 2

    class SI(torch.nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            y[:, 0] = 0.0
            return y * 2

    class Stale(torch.nn.Module):  # a copy made before the change is not reused after it
        def forward(self, x):
            y = torch.relu(x)
            a = y * 3
            y[:, 0] = 0.0
            return a + y * 2

    class View(torch.nn.Module):  # a view taken before a change of its base
        def forward(self, x):
            y = torch.relu(x)
            v = y[0]
            y.add_(1)
            return v * 2, y * 3

    x = torch.randn(3, 4)
    for M, level, edges in ((IP, "module", [[0, 1], [1, 2], [2, 3]]), (IP, "aten", [[0, 1], [1, 2], [2, 3]]),
                            (SI, "aten", None), (Stale, "aten", None), (View, "module", None)):
        g = doppler.Graph.from_torch(M(), x, level=level)
        ref = M()(x)
        if edges is not None:
            assert g.edges.tolist() == edges
        names = g.op_names
        if M is SI:
            # fill_ -> mul: an edge of no bytes (relu's edge carries the tensor)
            fill, mul = names.index("fill_"), names.index("mul")
            assert {"src": fill, "dst": mul, "bytes": 0.0} in g.torch.doc["edges"]
        shared = [names.index(n) for ns in g.torch.shared_storage.values() for n in ns]
        ok = refused = 0
        for a in itertools.product([0, 1], repeat=g.n_ops):
            one_device = len({a[i] for i in shared}) <= 1
            try:
                placed = g.torch.apply_placement(list(a), ["cpu", "cpu"])
            except ValueError as e:
                assert not one_device and "share the storage" in str(e)
                refused += 1
                continue
            out = placed(*g.torch.inputs)
            outs, refs = (out, ref) if isinstance(ref, tuple) else ((out,), (ref,))
            assert all(torch.equal(o, r) for o, r in zip(outs, refs)), (M.__name__, level, a)
            ok += 1
        assert ok >= 2 ** g.n_ops // 2 ** max(len(shared) - 1, 0)
        assert (refused > 0) == (len(shared) > 0), (M.__name__, shared)
    assert not doppler.Graph.from_torch(IP(), x).torch.shared_storage


def test_fallback_to_aten_warns_and_write_keeps_the_import(torch, tmp_path):
    """A module torch.fx cannot follow (the usual `q, k, v = qkv(x).split(D, dim=2)`) is traced by
    make_fx with a warning that its traced module takes the parameters first (the fallback was
    silent, and placed(x) failed with 'forward() missing 30 required positional arguments': a
    review); Graph.write keeps the importer's fields, and Graph.source names the import, not the
    deleted temporary file."""
    import warnings

    class Attn(torch.nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.d = d
            self.qkv = torch.nn.Linear(d, 3 * d)

        def forward(self, x):
            q, k, v = self.qkv(x).split(self.d, dim=2)
            return torch.softmax(q @ k.transpose(1, 2), dim=-1) @ v

    m = Attn().eval()
    x = torch.randn(2, 4, 8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = doppler.Graph.from_torch(m, x)
    msgs = [str(x.message) for x in w if "cannot follow it" in str(x.message)]
    assert len(msgs) == 1 and "placed(*g.torch.inputs)" in msgs[0], [str(x.message) for x in w]
    assert g.torch.level == "aten"
    p = doppler.place(g, "round-robin", machine=doppler.Machine(devices=2))
    placed = g.torch.apply_placement(p.assignment, ["cpu"] * 2)
    assert torch.equal(placed(*g.torch.inputs), m(x))
    # level "module" where torch.fx follows the module, and no warning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g2 = doppler.Graph.from_torch(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()), x)
    assert g2.torch.level == "module" and not [x for x in w if "cannot follow it" in str(x.message)]
    # Graph.write keeps param_bytes, memory and source; Graph.source names the import
    gt = doppler.Graph.from_torch(m, x, training=True)
    out = tmp_path / "attn.json"
    gt.write(str(out))
    d = json.loads(out.read_text())
    assert d["source"] == gt.source and "training step" in gt.source and "doppler-import-" not in gt.source
    assert "memory" in d and any("phase" in op for op in d["ops"]) and any(op.get("param_bytes") for op in d["ops"])
    back = doppler.Graph.read(str(out))
    assert back.n_ops == gt.n_ops
    # the library's messages name the import too (they named the deleted temporary file)
    with pytest.raises(doppler.Error) as ei:
        doppler.place(gt, "random", doppler.Machine(devices=1, memory_limit=1), samples=3)
    assert str(ei.value).startswith(gt.source) and "doppler-import-" not in str(ei.value), str(ei.value)
    # DOT is the library's writer, as before
    gt.write(str(tmp_path / "attn.dot"))
    assert (tmp_path / "attn.dot").read_text().startswith("digraph")


def test_onnx_dims_of_no_such_name_refused(torch, tmp_path):
    """A size for a symbolic dimension the model does not name (a misspelt --dim batsh=2) is
    refused naming the model's (it was ignored, and the error asked for the size given: a new
    researcher's trial)."""
    need("onnx")
    from doppler.importers import onnx_to_doc
    m = torch.nn.Linear(4, 3)
    path = str(tmp_path / "lin.onnx")
    torch.onnx.export(m, torch.randn(2, 4), path, input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    assert onnx_to_doc(path, dims={"batch": 2})["ops"]
    with pytest.raises(ValueError, match=r"lin.onnx: no symbolic dimension named 'batsh' \(the model's: batch"):
        onnx_to_doc(path, dims={"batsh": 2})
    # a name shape inference makes, which the error asks for, is one (it was refused: a review)
    from onnx import helper, TensorProto as T
    onnx = need("onnx")
    m = helper.make_model(helper.make_graph(
        [helper.make_node("NonZero", ["X"], ["Y"]), helper.make_node("Cast", ["Y"], ["Z"], to=T.FLOAT)], "g",
        [helper.make_tensor_value_info("X", T.FLOAT, [2, 3])], [helper.make_tensor_value_info("Z", T.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, str(tmp_path / "nz.onnx"))
    with pytest.raises(ValueError, match=r"give its size \(--dim unk__0=N\)"):
        onnx_to_doc(str(tmp_path / "nz.onnx"))
    assert len(onnx_to_doc(str(tmp_path / "nz.onnx"), dims={"unk__0": 4})["ops"]) == 3


def test_write_json_to_a_descriptor_in_place(tmp_path):
    """/dev/stdout redirected to a file is the descriptor, appended in its mode: realpath took it
    for the file and the rename replaced it (`>> log` lost the log's lines: a review)."""
    import subprocess
    log = tmp_path / "log"
    log.write_text("prior\n")
    code = "from doppler.importers import _write_json; _write_json({'a': 1}, '/dev/stdout')"
    with open(log, "a") as f:
        subprocess.run([sys.executable, "-c", code], stdout=f, env=os.environ, check=True)
    assert log.read_text() == 'prior\n{"a":1}\n'
    assert list(tmp_path.glob(".doppler-import-*")) == []


def test_from_onnx_missing_file_is_a_file_error(tmp_path):
    """Graph.from_onnx of a file that does not exist raised ValueError "not an ONNX model ([Errno
    2] ...)" (Graph.read raises FileError, an OSError, and the command said "no such file"); None
    was a ValueError too, and an int read that file descriptor (a review). Checked before ONNX is
    needed, so without python3-onnx as well."""
    with pytest.raises(doppler.FileError, match="none.onnx: no such file") as ei:
        doppler.Graph.from_onnx(tmp_path / "none.onnx")
    assert isinstance(ei.value, OSError) and ei.value.kind == "i/o error"
    with pytest.raises(doppler.FileError, match="is a directory, not an ONNX file"):
        doppler.Graph.from_onnx(str(tmp_path))
    for bad in (None, 5, ["a.onnx"]):
        with pytest.raises(TypeError, match="an ONNX file name"):
            doppler.Graph.from_onnx(bad)
    with pytest.raises(ValueError, match="NUL"):
        doppler.Graph.from_onnx("a\0b.onnx")


def test_example_inputs_of_another_kind_refused(torch):
    """A NumPy array as example_inputs was iterated as several inputs, its rows: ResNet's forward
    'takes 1 input, 2 example inputs given' of an array of batch 2, or a Linear traced on its rows
    (a review); an int said "'int' object is not iterable". Each is a TypeError saying what it takes."""
    m = torch.nn.Linear(4, 2)
    with pytest.raises(TypeError, match=r"example_inputs is a tensor or a tuple.*got ndarray \(torch.from_numpy"):
        doppler.Graph.from_torch(m, np.zeros((1, 4), np.float32))
    for bad in (5, "x", {"x": 1}):
        with pytest.raises(TypeError, match="example_inputs is a tensor or a tuple of the forward's inputs, got"):
            doppler.Graph.from_torch(m, bad)
    one = doppler.Graph.from_torch(m, torch.zeros(1, 4))
    assert doppler.Graph.from_torch(m, [torch.zeros(1, 4)]).n_ops == one.n_ops


def test_import_writer_errors_name_the_file(tmp_path):
    """The importer's JSON writer (g.write of an imported graph, doppler graph import --out) said
    "[Errno 28] No space left on device" naming no file on a full disk (/dev/full), and a
    directory was a ValueError where Graph.write of a read graph raises FileError (a review)."""
    from doppler.importers import _write_json
    doc = {"name": "x", "ops": [{"name": "a", "flops": 1}], "edges": []}
    if os.path.exists("/dev/full"):
        with pytest.raises(doppler.FileError, match="^/dev/full: write failed: No space left on device$"):
            _write_json(doc, "/dev/full")
    with pytest.raises(doppler.FileError, match="is a directory: doppler writes regular files"):
        _write_json(doc, str(tmp_path))
    with pytest.raises(doppler.FileError, match="no/g.json: cannot write: No such file or directory"):
        _write_json(doc, str(tmp_path / "no" / "g.json"))
    _write_json(doc, str(tmp_path / "g.json"))
    assert json.loads((tmp_path / "g.json").read_text()) == doc


def test_imported_graph_writes_any_path(torch, tmp_path):
    """An imported graph's write of a pathlib.Path was an AttributeError ('PosixPath' object has no
    attribute 'startswith'), of bytes a TypeError inside, of a NUL Python's "embedded null byte"
    (a review); it takes every path Graph.write takes, with the importer's fields."""
    g = doppler.Graph.from_torch(torch.nn.Linear(3, 3), torch.zeros(1, 3))
    for path in (tmp_path / "p.json", os.fsencode(str(tmp_path / "b.json")), str(tmp_path / "s.json")):
        g.write(path)
        doc = json.loads(open(path).read())
        assert any("param_bytes" in op for op in doc["ops"]) and len(doc["ops"]) == g.n_ops
    with pytest.raises(ValueError, match="Graph.write: path: .* contains a NUL character"):
        g.write(str(tmp_path / "n\0.json"))
