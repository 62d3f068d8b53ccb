"""Importers of real models: PyTorch modules (torch.fx) and ONNX files, as doppler graphs.

    imp = doppler.importers.trace_torch(module, example_inputs, training=False)
    imp.write("model.json")                     # the native JSON format (doc/graph-format.md)
    g = imp.graph()                             # a doppler.Graph (Graph.from_torch does both)
    placed = imp.apply_placement(assignment, ["cuda:0", "cuda:1"])   # item 2: the round trip
    placed(*imp.inputs)                         # runs each node on its op's device

    doc = doppler.importers.onnx_to_doc("model.onnx")  # ONNX (`doppler graph import model.onnx`)

One op per node of the traced program, in its order (a topological one), named as the node is
(torch.fx node names; ONNX node names, else OPTYPE_INDEX), `op_type` the node's type (the module
class for a module call, `torch.matmul`, `method:view`, `aten.convolution.default`, the ONNX
op_type), `kind` its FLOP rule's name. An edge per (producer, consumer) pair, carrying the
producer's output bytes (elements x dtype size, every tensor of a tuple output), and one of 0
bytes from an op that changes a storage in place to each later reader of it (_mutations). Inputs are ops
of kind `input` and parameters (training: placeholders; forward: get_attr nodes) ops of kind
`param`, both with 0 FLOPs; the output node is not an op. A module call's op records its
parameters and buffers in `param_bytes`; the graph's `memory` holds the parameter and activation
totals (fields the library does not read).

FLOPs (a multiply-add counts 2, as the generators do); N(t) is the element count of tensor t:

    matmul     mm, bmm, matmul, linear, addmm, baddbmm, mv, addmv, dot, vdot, inner, Gemm, MatMul:
               2 N(out) K, K the contracted size (the first operand's last dimension; a vector's
               length), + N(out) for a bias (dot of two n-vectors: 2 n)
    conv       2 N(out) (C_in / groups) prod(kernel) (+ N(out) bias); transposed: 2 N(in)
               (C_out / groups) prod(kernel); convolution_backward: that for each gradient its
               output_mask asks (input, weight), + N(grad_out) for the bias's
    einsum     2 x the product of every index's size (a multiply-add per point of the iteration space)
    attention  nn.MultiheadAttention and aten's _native_multi_head_attention (query L x E, key
               and value S, N batch, h heads):
               projections 2 N L E^2 + 2 N S (k_dim + v_dim) E + 2 N L E^2, scores and weighted
               sum 2 x 2 N L S E, softmax 3 N h L S, biases N (2 L + 2 S) E
    softmax    softmax, log_softmax and their backward: 3 per element (exp, sum, divide)
    norm       batch, layer, group, instance norms and their backward: 5 per element
    pool       max/avg pooling: N(out) prod(kernel); adaptive and global pools and pool
               backward: 1 per input element
    reduce     sum, mean, max, amax, var, norm, ...: 1 per input element
    view       reshapes, permutes, slices, concatenation, copies, casts, creation: 0
    elementwise  add, mul, relu, gelu, dropout, threshold_backward, outer, ...: 1 per output element
               (outer: a multiply, no sum)

A node no rule names is counted as element-wise and listed in the graph's `unclassified`.
"""

import argparse
import copy
import json
import math
import operator
import os
import stat
import sys
import tempfile

_DEBIAN = {"torch": "python3-torch", "torchvision": "python3-torchvision", "onnx": "python3-onnx"}


def _need(module):
    """Import torch, torchvision or onnx, or raise ImportError naming the Debian package."""
    try:
        return __import__(module)
    except ImportError as e:
        raise ImportError("doppler.importers: Python's %s is not installed (Debian: apt-get install %s, or "
                          "sh scripts/install-deps.sh): %s" % (module, _DEBIAN[module], e)) from e


def _prod(xs):
    return math.prod(int(x) for x in xs)


# ---- FLOP rules by name (torch functions, Tensor methods, aten ops, ONNX op types) ----

_VIEW = {
    "getitem", "getattr", "size", "dim", "view", "_unsafe_view", "reshape", "flatten", "unflatten", "permute",
    "transpose", "t", "contiguous", "unsqueeze", "squeeze", "expand", "expand_as", "chunk", "split", "split_with_sizes",
    "unbind", "cat", "stack", "narrow", "slice", "select", "repeat", "type_as", "to", "float", "half", "double",
    "bfloat16", "clone", "detach", "alias", "_reshape_alias", "_to_copy", "copy", "copy_", "as_strided", "view_as",
    "new_zeros",
    "new_ones", "new_empty", "new_empty_strided", "empty_strided", "new_full", "zeros", "ones", "zeros_like",
    "ones_like", "empty", "empty_like", "full", "full_like",
    "arange", "scalar_tensor", "lift_fresh_copy", "index_select", "gather", "embedding", "identity", "dropout_eval",
    "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice", "Gather", "Shape",
    "Constant", "Identity", "Expand", "Cast", "ConstantOfShape", "Range", "Tile", "Size", "GatherElements",
}
# the products over a contracted size K, the first operand's last dimension (a vector's length:
# mv, dot, vdot, inner); mv, dot, vdot and addmv counted one FLOP an output element (torch.matmul
# of (4,3,6) x (6) at the aten level is mv: 12 FLOPs where 144 is right: a review)
_MATMUL = {"mm", "bmm", "matmul", "linear", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "inner",
           "MatMul", "Gemm"}
_MATMUL_BIAS = {"addmm", "baddbmm", "addbmm", "addmv"}
_SOFTMAX = {"softmax", "log_softmax", "_softmax", "_log_softmax", "_softmax_backward_data",
            "_log_softmax_backward_data", "Softmax", "LogSoftmax"}
_NORM = {"layer_norm", "batch_norm", "group_norm", "instance_norm", "native_layer_norm", "native_batch_norm",
         "native_group_norm", "native_layer_norm_backward", "native_batch_norm_backward",
         "native_group_norm_backward", "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
         "BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization"}
_POOL_WINDOW = {"max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                "max_pool2d_with_indices", "max_pool3d_with_indices", "MaxPool", "AveragePool"}
_POOL_INPUT = {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d",
               "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "max_pool2d_with_indices_backward",
               "avg_pool2d_backward", "GlobalAveragePool", "GlobalMaxPool"}
_REDUCE = {"sum", "mean", "max", "min", "amax", "amin", "prod", "var", "std", "norm", "logsumexp", "argmax",
           "argmin", "var_mean", "nll_loss", "nll_loss_forward", "nll_loss_backward", "cross_entropy",
           "mse_loss", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
           "ReduceSumSquare", "ArgMax", "ArgMin"}
_ELEMENTWISE = {
    "add", "sub", "mul", "div", "truediv", "floordiv", "mod", "neg", "pow", "rsub", "iadd", "isub", "imul", "itruediv",
    "add_", "sub_", "mul_", "div_", "addcmul", "addcdiv", "relu", "relu_", "relu6", "gelu", "silu", "sigmoid", "tanh",
    "exp", "log", "sqrt", "rsqrt", "abs", "clamp", "clamp_min", "clamp_max", "where", "masked_fill", "dropout",
    "native_dropout", "native_dropout_backward", "hardswish", "hardsigmoid", "hardtanh", "leaky_relu", "elu",
    "softplus",
    "mish", "erf", "sin", "cos", "maximum", "minimum", "reciprocal", "sign", "square", "lt", "gt", "le", "ge", "eq",
    "ne", "logical_not", "logical_and", "tril", "triu", "threshold", "threshold_backward", "gelu_backward",
    "silu_backward", "sigmoid_backward", "tanh_backward", "hardswish_backward", "hardtanh_backward",
    "leaky_relu_backward", "fill", "fill_", "zero_", "bernoulli", "rand_like", "randn_like", "sub_", "lerp",
    "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Pow", "Exp", "Log", "Neg", "Clip",
    "Where", "Equal", "Less", "Greater", "Not", "Dropout", "LeakyRelu", "HardSigmoid", "HardSwish", "Gelu",
    "Reciprocal", "Abs", "Max", "Min", "Softplus", "Elu", "Mish", "Sin", "Cos", "Trilu", "Sum", "Mean",
    # an outer product: one multiply an output element, no sum (aten's trace of it is a mul)
    "outer", "ger",
}
# module classes (a call_module node's rule, by the class's name)
_MODULE_ELEMENTWISE = {"ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid", "Hardtanh",
                       "LeakyReLU", "ELU", "Mish", "Softplus", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                       "AlphaDropout", "PReLU", "SELU", "CELU", "GLU"}
_MODULE_VIEW = {"Identity", "Flatten", "Unflatten", "Embedding", "EmbeddingBag", "ZeroPad2d", "ConstantPad2d"}
_MODULE_NORM = {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d",
                "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "SyncBatchNorm"}


class _Rule:
    """The FLOPs of one node: kind (the rule's name), flops, classified (False: the default)."""

    def __init__(self, kind, flops, classified=True):
        self.kind, self.flops, self.classified = kind, float(flops), classified


def _tuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _named_rule(name, ins, out_numel, args, kwargs):
    """The rule of a function, method, aten op or ONNX op type by name. ins: shapes of the
    tensor inputs in argument order; args/kwargs: the node's arguments (kernel sizes, masks)."""
    n_in = _prod(ins[0]) if ins else 0
    if name in _MATMUL:
        a = ins[1] if name in _MATMUL_BIAS and len(ins) >= 3 else (ins[0] if ins else ())
        if name == "Gemm" and kwargs.get("transA"):
            k = a[0] if a else 1
        else:
            k = a[-1] if a else 1
        # addbmm sums the products of its batch into one matrix: each output element has
        # batch x K multiply-adds (it counted K: a review)
        if name == "addbmm" and len(a) == 3:
            k *= a[0]
        bias = name in _MATMUL_BIAS or (name == "linear" and len(ins) >= 3) or (name == "Gemm" and len(ins) >= 3)
        return _Rule("matmul", 2 * out_numel * k + (out_numel if bias else 0))
    if name in ("conv1d", "conv2d", "conv3d", "Conv"):
        w = ins[1]
        return _Rule("conv", 2 * out_numel * _prod(w[1:]) + (out_numel if len(ins) >= 3 else 0))
    if name in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "ConvTranspose"):
        w = ins[1]
        return _Rule("conv", 2 * n_in * _prod(w[1:]) + (out_numel if len(ins) >= 3 else 0))
    if name == "convolution":  # aten: input, weight, bias, stride, padding, dilation, transposed, ...
        w = ins[1]
        transposed = bool(args[6]) if len(args) > 6 else False
        f = 2 * (n_in if transposed else out_numel) * _prod(w[1:])
        return _Rule("conv", f + (out_numel if len(ins) >= 3 else 0))
    if name == "convolution_backward":
        # grad_out, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding,
        # groups, output_mask: each gradient asked costs the forward convolution's multiply-adds
        g, x, w = ins[0], ins[1], ins[2]
        transposed = bool(args[7]) if len(args) > 7 else False
        fwd = 2 * (_prod(x) if transposed else _prod(g)) * _prod(w[1:])
        mask = list(args[10]) if len(args) > 10 else [True, True, True]
        return _Rule("conv", fwd * (int(bool(mask[0])) + int(bool(mask[1]))) + (_prod(g) if mask[2] else 0))
    if name in ("einsum", "Einsum"):
        eq = args[0] if name == "einsum" else kwargs.get("equation", "")
        return _einsum_rule(eq, ins, out_numel)
    if name == "_native_multi_head_attention":
        # aten: query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, ...
        q, k = ins[0], ins[1]
        e, h = int(args[3]), int(args[4])
        n, lq, ls = (q[0], q[1], k[1]) if len(q) == 3 else (1, q[0], k[0])
        return _Rule("attention", _attention(n, lq, ls, e, h, e, e, len(ins) >= 5))
    if name in _SOFTMAX:
        return _Rule("softmax", 3 * max(out_numel, n_in))
    if name in _NORM:
        return _Rule("norm", 5 * max(out_numel, n_in))
    if name in _POOL_WINDOW:
        k = kwargs.get("kernel_shape") or kwargs.get("kernel_size") or (args[1] if len(args) > 1 else 1)
        # an int kernel spans the pool's dimensions, which its name gives (max_pool2d on an
        # unbatched C x H x W input took one: a review); ONNX's kernel_shape lists them all
        base = name[:-len("_with_indices")] if name.endswith("_with_indices") else name
        nd = int(base[-2]) if base[-2:] in ("1d", "2d", "3d") else (max(len(ins[0]) - 2, 1) if ins else 1)
        return _Rule("pool", out_numel * _prod(_tuple(k, nd)))
    if name in _POOL_INPUT:
        return _Rule("pool", max(_prod(s) for s in ins) if ins else 0)
    if name in ("max", "min") and len(ins) >= 2:
        # torch.max(a, b): the element-wise maximum (a reduction of a counted a's elements: a review)
        return _Rule("elementwise", out_numel)
    if name in _REDUCE:
        return _Rule("reduce", n_in)
    if name in _VIEW:
        return _Rule("view", 0)
    if name in _ELEMENTWISE:
        return _Rule("elementwise", out_numel)
    if name.endswith("_") and not name.endswith("__") and len(name) > 1:
        # an in-place variant (aten's bernoulli_, silu_, hardswish_): its out-of-place form's rule
        # (they were reported as without a rule: a review)
        return _named_rule(name[:-1], ins, out_numel, args, kwargs)
    return _Rule("elementwise", out_numel, classified=False)


def _einsum_rule(eq, ins, out_numel):
    eq = str(eq).replace(" ", "")
    lhs = eq.split("->")[0].split(",")
    if "." in eq or len(lhs) != len(ins):
        return _Rule("einsum", out_numel, classified=False)
    size = {}
    for labels, shape in zip(lhs, ins):
        for c, d in zip(labels, shape):
            size[c] = int(d)
    return _Rule("einsum", 2 * _prod(size.values()))


def _module_rule(mod, ins, out_numel):
    """The rule of a call to a torch.nn module (a leaf of torch.fx's trace)."""
    cls = type(mod).__name__
    n_in = _prod(ins[0]) if ins else 0
    if cls in ("Linear", "LazyLinear", "NonDynamicallyQuantizableLinear"):
        return _Rule("matmul", 2 * out_numel * mod.in_features + (out_numel if mod.bias is not None else 0))
    if cls in ("Bilinear", "LazyBilinear"):
        # y_k = x1^T A_k x2 + b_k: in1 x in2 multiply-adds an output element (it read
        # mod.in_features, which Bilinear does not have: a review)
        return _Rule("matmul", 2 * out_numel * mod.in1_features * mod.in2_features +
                     (out_numel if mod.bias is not None else 0))
    if cls in ("Conv1d", "Conv2d", "Conv3d"):
        f = 2 * out_numel * (mod.in_channels // mod.groups) * _prod(mod.kernel_size)
        return _Rule("conv", f + (out_numel if mod.bias is not None else 0))
    if cls in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        f = 2 * n_in * (mod.out_channels // mod.groups) * _prod(mod.kernel_size)
        return _Rule("conv", f + (out_numel if mod.bias is not None else 0))
    if cls == "MultiheadAttention":
        return _Rule("attention", _attention_flops(mod, ins))
    if cls in ("Softmax", "LogSoftmax", "Softmin"):
        return _Rule("softmax", 3 * out_numel)
    if cls in _MODULE_NORM:
        return _Rule("norm", 5 * out_numel)
    if cls.startswith("Adaptive"):
        return _Rule("pool", n_in)
    if cls in ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"):
        nd = int(cls[-2])
        return _Rule("pool", out_numel * _prod(_tuple(mod.kernel_size, nd)))
    if cls in _MODULE_VIEW:
        return _Rule("view", 0)
    if cls in _MODULE_ELEMENTWISE:
        return _Rule("elementwise", out_numel)
    return _Rule("elementwise", out_numel, classified=False)


def _attention_flops(mod, ins):
    """nn.MultiheadAttention(query, key, value): the formula in the module's docstring."""
    e, h = mod.embed_dim, mod.num_heads
    q, k = ins[0], ins[1] if len(ins) > 1 else ins[0]
    if len(q) == 3:
        n, lq = (q[0], q[1]) if mod.batch_first else (q[1], q[0])
        ls = k[1] if mod.batch_first else k[0]
    else:
        n, lq, ls = 1, q[0], k[0]
    return _attention(n, lq, ls, e, h, mod.kdim, mod.vdim, mod.in_proj_bias is not None)


def _attention(n, lq, ls, e, h, kdim, vdim, bias):
    """Multi-head attention: batch n, query length lq, key length ls, width e, h heads."""
    proj = 2 * n * lq * e * e + 2 * n * ls * (kdim + vdim) * e + 2 * n * lq * e * e
    scores = 2 * (2 * n * lq * ls * e)
    return proj + scores + 3 * n * h * lq * ls + (n * (2 * lq + 2 * ls) * e if bias else 0)


# ---- torch ----

def _tensor_metas(meta):
    """The TensorMetadata records of a node's value (a tensor, or nested tuples/lists/dicts of them)."""
    if meta is None:
        return []
    if hasattr(meta, "shape") and hasattr(meta, "dtype"):
        return [meta]
    if isinstance(meta, dict):
        meta = list(meta.values())
    if isinstance(meta, (list, tuple)):
        return [m for x in meta for m in _tensor_metas(x)]
    return []


def _node_metas(node):
    """The tensors a node makes. make_fx records no metadata for a tuple of tensors
    (max_pool2d_with_indices, native_batch_norm): those of the getitem nodes reading it then."""
    metas = _tensor_metas(node.meta.get("tensor_meta"))
    if metas or "tensor_meta" in node.meta:
        return metas
    items = {}
    for u in node.users:
        if getattr(u.target, "__name__", "") == "getitem" and len(u.args) > 1 and isinstance(u.args[1], int):
            items.setdefault(u.args[1], _tensor_metas(u.meta.get("tensor_meta")))
    return [m for k in sorted(items) for m in items[k]]


def _itemsize(torch, dtype):
    return torch.empty((), dtype=dtype).element_size()


def _transfer(t, device, copy=True):
    """t on device: a real copy (copy=True, also to the device it is on), or t itself where it is
    there already (copy=False). A tensor that is not the whole of its storage from its start (a
    view: split, transpose, a slice) keeps its layout: its storage is copied and the view made
    again on the copy, with its sizes, strides and offset, so that the strides an aten-level trace
    recorded (make_fx's _reshape_alias, as_strided) hold; Tensor.to made such a view contiguous,
    and the placed module of a make_fx trace read past it (NaN where the module gave numbers: a
    review). Autograd follows every step."""
    import torch
    if not isinstance(t, torch.Tensor):
        return t
    device = torch.device(device)
    if not copy and t.device == device:
        return t
    try:
        n = t.untyped_storage().nbytes() // t.element_size()
    except AttributeError:  # torch before 2.0
        n = t.storage().size()
    if t.is_contiguous() and t.storage_offset() == 0 and t.numel() == n:
        return t.to(device, copy=True)
    whole = torch.as_strided(t, (n,), (1,), 0)
    return torch.as_strided(whole.to(device, copy=True), t.size(), t.stride(), t.storage_offset())


def _is_tensor_node(node):
    m = node.meta.get("tensor_meta")
    return m is not None and hasattr(m, "shape") and hasattr(m, "dtype")


def _target_name(node):
    """(rule name, op_type) of a call_function / call_method node."""
    t = node.target
    if node.op == "call_method":
        return t, "method:" + t
    packet = getattr(t, "overloadpacket", None)
    if packet is not None:  # an aten OpOverload (make_fx)
        return packet.__name__, str(t)
    name = getattr(t, "__name__", str(t))
    mod = getattr(t, "__module__", None) or ""
    if mod in ("_operator", "operator"):
        mod = "operator"
    elif mod.startswith("torch.nn.functional"):
        mod = "torch.nn.functional"
    elif mod.startswith("torch"):
        mod = "torch"
    return name, (mod + "." + name) if mod else name


class TorchImport:
    """A torch model traced into a doppler graph.

    graph_module  the traced torch.fx GraphModule (torch.fx.symbolic_trace of the module, or make_fx
                  of its forward pass or of a training step at the level of aten ops)
    nodes         op index -> the torch.fx node it is (the output node is not an op)
    inputs        the arguments graph_module takes: the example inputs (symbolic_trace), or the
                  parameters, buffers, optimizer state and example inputs (make_fx), as traced
    doc           the graph in the native JSON format, as a dict
    level         "module" (torch.fx.symbolic_trace: graph_module takes the example inputs) or
                  "aten" (make_fx: graph_module takes inputs, the parameters first; run it as
                  graph_module(*inputs))
    """

    def __init__(self, graph_module, nodes, inputs, doc, level="module"):
        self.graph_module, self.nodes, self.inputs, self.doc = graph_module, nodes, inputs, doc
        self.level = level
        # a tensor changed in place through a view and read after: its producer's node name ->
        # the nodes sharing its storage (_mutations), which the round trip puts on one device
        self.shared_storage = {}

    @property
    def n_ops(self):
        return len(self.nodes)

    def write(self, path):
        """Write the graph in the native JSON format (atomic: the file is complete or absent)."""
        _write_json(self.doc, path)

    def graph(self):
        """The graph as a doppler.Graph (read back through the library, so checked as any file is)."""
        return _doc_graph(self.doc)

    def apply_placement(self, assignment, devices):
        """A copy of the traced GraphModule in which each op runs on its device: assignment[i] is
        op i's device index into devices (torch device names, e.g. ["cuda:0", "cuda:1"]; "cpu" for
        every index runs the mechanism on a machine without GPUs). A module call's parameters move
        to its device (a module called on several devices is copied to each); every tensor a node
        reads from an op on another device is copied there before it (Tensor.to(device,
        copy=True), once per producer and device); inputs, parameters and values made without tensor inputs are moved to their op's
        device. The outputs stay on the devices of the ops that make them. Returns the GraphModule;
        its attribute doppler_moves lists the (producer op's name, device index) transfers it makes:
        one per producer and other device that reads it; the name is the graph's (input0,
        param:fc.bias at the aten level, where the fx node is arg9_1). A placement that puts the
        ops sharing a storage changed in place through a view (shared_storage, _mutations) on
        two devices is refused (ValueError): the change would be made on a copy."""
        torch = _need("torch")
        from .engine import _int_array
        # integers of the graph's length, as Engine.simulate takes them (int() of each cut a float
        # array, 0.7 running on device 0 without a word, and a NaN or a 2-D array said only
        # NumPy's error: a review)
        a = _int_array(assignment, (self.n_ops,), "apply_placement: assignment").tolist()
        if isinstance(devices, (str, bytes)) or not hasattr(devices, "__len__"):
            # ("cpu" was three devices, "c", "p", "u")
            raise TypeError("apply_placement: devices is a list of torch device names, got %s %r"
                            % (type(devices).__name__, devices))
        if len(devices) == 0:
            raise ValueError("apply_placement: devices is empty (a torch device name for each device index)")
        tdev = []
        for k, x in enumerate(devices):
            try:
                tdev.append(torch.device(x))
            except (RuntimeError, TypeError) as e:
                raise ValueError("apply_placement: devices[%d] %r is not a torch device (%s)" % (k, x, e)) from None
        bad = [i for i, d in enumerate(a) if not 0 <= d < len(devices)]
        if bad:
            raise ValueError("apply_placement: op %d (%s) is on device %d, outside 0..%d" %
                             (bad[0], self.nodes[bad[0]].name, a[bad[0]], len(devices) - 1))
        # a tensor changed in place through a view (y[:, 0] = 0.0) and read after: the change
        # must reach the storage the later reads copy, so every op sharing it runs on one device
        # (a change made on a copy was lost: a review); refused otherwise
        op_of = {n.name: i for i, n in enumerate(self.nodes)}
        for rname, names in self.shared_storage.items():
            ds = sorted({a[op_of[x]] for x in names})
            if len(ds) > 1:
                listed = ", ".join("%d (%s)" % (op_of[x], self.doc["ops"][op_of[x]]["name"]) for x in names)
                raise ValueError("apply_placement: ops %s share the storage of op %d (%s), which one of them changes "
                                 "in place and later ops read: the placed module computes the module's values only "
                                 "with them on one device; they are on devices %s" % (
                                     listed, op_of[rname], self.doc["ops"][op_of[rname]]["name"], ds))
        changes = {x: names for names in self.shared_storage.values() for x in names[1:]}
        gm = copy.deepcopy(self.graph_module)
        by_name = {n.name: n for n in gm.graph.nodes}
        # device indices decide the moves (two indices naming one torch device still move, so
        # the mechanism runs on a machine with CPUs only)
        dev = {by_name[orig.name]: d for orig, d in zip(self.nodes, a)}
        g = gm.graph
        moves, moved, module_dev, origin = [], {}, {}, {}
        # a move names its producer as the graph does (make_fx's placeholders are arg9_1 where the
        # op is input0 or param:a.bias: a review)
        label = {orig.name: op["name"] for orig, op in zip(self.nodes, self.doc["ops"])}
        for node in list(g.nodes):
            if node.op == "output" or node not in dev:
                continue
            d, td = dev[node], tdev[dev[node]]
            if node.name in changes:
                # a copy made before an op that may change its storage is stale after it: later
                # readers on another device copy again (the move is listed again)
                stale = set(changes[node.name])
                for key in [k for k in moved if k[0].name in stale or origin.get(k[0]) in stale]:
                    del moved[key]
            tensor_inputs = [s for s in node.all_input_nodes if _is_tensor_node(s)]
            if node.op == "call_function" and isinstance(node.kwargs.get("device"), torch.device):
                # a value made on a device the trace recorded (make_fx's ones_like(..., device=cpu),
                # the loss's seed of a training step): made on the op's device (a training step
                # could run on no device but the CPU: a review)
                node.kwargs = dict(node.kwargs, device=td)
            for src in tensor_inputs:
                if src not in dev or dev[src] == d:
                    continue
                key = (src, d)
                if key not in moved:
                    with g.inserting_before(node):
                        # copy=True: a real copy also where two indices name one device,
                        # so a run on CPUs only reads what a run on GPUs would
                        moved[key] = g.call_function(_transfer, (src, str(td)))
                    moved[key].meta["tensor_meta"] = src.meta["tensor_meta"]
                    dev[moved[key]] = d
                    moves.append((label.get(origin.get(src, src.name), src.name), d))
                node.replace_input_with(src, moved[key])
            if node.op == "call_module":
                mod = gm.get_submodule(node.target)
                if any(True for _ in mod.parameters()) or any(True for _ in mod.buffers()):
                    owner = module_dev.setdefault(node.target, d)
                    if owner != d:  # a module called from two devices: a copy on the second
                        alias = "%s__on_device%d" % (node.target.replace(".", "_"), d)
                        if not hasattr(gm, alias):
                            gm.add_submodule(alias, copy.deepcopy(mod).to(td))
                        node.target = alias
                    else:
                        mod.to(td)
            if _is_tensor_node(node) and (node.op in ("placeholder", "get_attr") or not tensor_inputs
                                          or node.target is operator.getitem):
                # values that do not come from moved tensors: pin them to the op's device. A
                # getitem of a tuple made on another device reads a transfer: a real copy, and
                # the move listed once per tuple and device (it was a plain .to, listed nowhere:
                # a review)
                src = node.args[0] if node.target is operator.getitem and node.args else None
                cross = src in dev and dev[src] != d if isinstance(src, torch.fx.Node) else False
                users = list(node.users)
                with g.inserting_after(node):
                    pin = g.call_function(_transfer, (node, str(td)), {} if cross else {"copy": False})
                if cross and (src, d) not in moved:
                    moved[(src, d)] = pin
                    moves.append((label.get(origin.get(src, src.name), src.name), d))
                pin.meta["tensor_meta"] = node.meta["tensor_meta"]
                origin[pin] = node.name
                for u in users:
                    u.replace_input_with(node, pin)
                dev[pin] = d
        g.lint()
        gm.recompile()
        gm.doppler_moves = moves
        return gm


def trace_torch(module, example_inputs, training=False, name=None, loss_fn=None, optimizer="sgd", lr=0.01,
                level=None):
    """Trace a torch.nn.Module into a doppler graph (TorchImport).

    example_inputs: a tensor or a tuple of tensors, the module's positional arguments; they fix
    every shape (the trace runs the module on them once). training=False: the forward pass.
    training=True: one training step: the forward pass, loss_fn(output) (default: the sum of every
    floating-point tensor the module returns, _sum_of_outputs),
    the backward pass (torch.autograd.grad of the loss with respect to every parameter that
    requires grad) and the update: optimizer "sgd" (p - lr g) or "adam" (Kingma and Ba's update,
    its moments as inputs). Each op of a training step records its `phase`: forward, backward or
    optimizer (input: inputs, parameters, buffers, state; the rule in _torch_doc).

    level: "module" traces with torch.fx.symbolic_trace (torch.nn modules stay single ops: a
    Conv2d is one op; shapes by torch.fx's ShapeProp); "aten" with make_fx, at the level of aten
    ops, parameters and buffers as inputs (ops named param:NAME, buffer:NAME, input0, ...). None:
    "module" for the forward pass, falling back to "aten" when the module's Python cannot be
    traced symbolically (shape unpacking, data-dependent control flow: torchvision's ViT), and
    "aten" for a training step (its backward pass exists only there).

    Raises ImportError naming the Debian package when torch is missing, TypeError when the
    module is not a torch.nn.Module, ValueError for a bad option, torch.fx's errors when it
    cannot be traced."""
    torch = _need("torch")
    if not isinstance(module, torch.nn.Module):
        raise TypeError("trace_torch: module must be a torch.nn.Module, got %s" % type(module).__name__)
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    elif type(example_inputs).__module__ == "numpy" or isinstance(example_inputs, (str, bytes, dict)) or \
            not hasattr(example_inputs, "__iter__"):
        # a NumPy array was iterated as several inputs, its rows ("ResNet's forward takes 1 input,
        # 2 example inputs given" of an array of batch 2: a review)
        raise TypeError("trace_torch: example_inputs is a tensor or a tuple of the forward's inputs, got %s%s" % (
            type(example_inputs).__name__, " (torch.from_numpy(a) makes a tensor of it)"
            if type(example_inputs).__module__ == "numpy" else ""))
    # the trace runs the module on copies: an in-place op of the module changed the caller's
    # tensors (a review); the placed module's inputs are another copy, as the caller gave them
    example_inputs = tuple(example_inputs)
    pristine = tuple(x.detach().clone() if isinstance(x, torch.Tensor) else x for x in example_inputs)
    example_inputs = tuple(x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor) else x
                           for x in example_inputs)
    if optimizer not in ("sgd", "adam"):
        raise ValueError("trace_torch: optimizer must be \"sgd\" or \"adam\", got %r" % (optimizer,))
    if level not in (None, "module", "aten"):
        raise ValueError("trace_torch: level must be \"module\", \"aten\" or None, got %r" % (level,))
    if training and level == "module":
        raise ValueError("trace_torch: a training step is traced at the aten level (level=\"aten\" or None)")
    name = name or type(module).__name__
    gm = None
    fx_error = None
    if not training and level != "aten":
        from torch.fx.passes.shape_prop import ShapeProp
        try:
            gm = torch.fx.symbolic_trace(module)
        except Exception as e:  # torch.fx.proxy.TraceError, TypeError, ...: Python fx cannot follow
            if level == "module":
                raise
            fx_error = e
        if gm is not None:
            n_inputs = sum(1 for n in gm.graph.nodes if n.op == "placeholder")
            if len(example_inputs) > n_inputs:
                # ShapeProp ignored the extra ones, and the placed module could not run (a review)
                raise TypeError("trace_torch: %s's forward takes %d input%s, %d example inputs given" % (
                    type(module).__name__, n_inputs, "" if n_inputs == 1 else "s", len(example_inputs)))
            # ShapeProp prints a traceback of its own before it raises: kept from the user's
            # stderr, the error (raised) says what failed. It runs the module's own submodules:
            # their buffers (BatchNorm's running statistics in training mode) are put back as they
            # were (the import changed the caller's module: a review)
            import contextlib
            import io
            saved = [(b, b.detach().clone()) for b in gm.buffers()]
            try:
                with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
                    ShapeProp(gm).propagate(*example_inputs)
            finally:
                with torch.no_grad():
                    for b, c in saved:
                        b.copy_(c)
            inputs, labels, roles = pristine, None, None
    if gm is None:
        bad = [i for i, x in enumerate(example_inputs) if not isinstance(x, torch.Tensor)]
        if bad:
            # (it failed with "'int' object has no attribute 'detach'": a review)
            raise TypeError("trace_torch: example input %d is a %s: %s takes tensors only (a training step, or the "
                            "aten level where torch.fx.symbolic_trace cannot follow the module)" % (
                                bad[0], type(example_inputs[bad[0]]).__name__, "make_fx"))
        try:
            gm, inputs, labels, roles = _trace_aten(torch, module, example_inputs, training, loss_fn, optimizer, lr)
        except Exception as e:
            if fx_error is None:
                raise
            # both tracers failed (data-dependent control flow): say what torch.fx said too (its
            # error was swallowed, and make_fx's alone misled: a review)
            raise RuntimeError("trace_torch: %s cannot be traced: torch.fx.symbolic_trace: %s; make_fx: %s" % (
                type(module).__name__, fx_error, e)) from e
        n_in = len(example_inputs)
        inputs = tuple(inputs[:len(inputs) - n_in]) + pristine
        if fx_error is not None:
            # the fallback changes what the placed module takes (the parameters, then the inputs):
            # it was silent, and placed(x) then failed with "forward() missing 30 required
            # positional arguments" (a review)
            import warnings
            warnings.warn("trace_torch: %s: torch.fx.symbolic_trace cannot follow it (%s): traced with make_fx at "
                          "the level of aten ops; the traced and placed modules take the parameters before the "
                          "inputs: run them as placed(*g.torch.inputs) (level=\"aten\" says so and warns not)" % (
                              type(module).__name__, str(fx_error).splitlines()[0] if str(fx_error) else type(fx_error).__name__),
                          UserWarning, stacklevel=3)
    changed, deps, storages = _mutations(gm)
    if changed:
        gm.recompile()
    nodes, doc = _torch_doc(torch, gm, name, labels, roles, training, deps)
    how = "make_fx (aten ops)" if labels is not None else "torch.fx.symbolic_trace"
    doc["source"] = "%s of %s, %s" % (how, type(module).__name__, "training step" if training else "forward")
    imp = TorchImport(gm, nodes, inputs, doc, level="aten" if labels is not None else "module")
    imp.shared_storage = {r.name: [n.name for n in ns] for r, ns in storages.items()}
    return imp


def _trace_aten(torch, module, example_inputs, training, loss_fn, optimizer, lr):
    """make_fx of the forward pass or of a training step over (parameters, buffers, optimizer
    state, inputs): (GraphModule, its inputs, op names of the placeholders, their roles)."""
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.utils.stateless import functional_call
    # every parameter is an input (param:NAME), frozen ones too: left to the module, make_fx took
    # a frozen one as a constant of the graph (_param_constant0, no bytes, no parameter memory),
    # and a frozen convolution's weight was then no input of its op (an IndexError in the
    # convolution's rule: a review). The backward pass and the update are of those that
    # require grad (trained).
    pnames = [n for n, _ in module.named_parameters()]
    bnames = [n for n, _ in module.named_buffers()]
    pdict = dict(module.named_parameters())
    # every path of each tensor: a weight tied to another module's (an embedding and its output
    # layer) has one name in named_parameters() and two in the module; functional_call swaps the
    # names it is given only, so the second use was the module's own tensor, a constant of the
    # graph (no gradient through it, a wrong gradient, its bytes counted twice: a review)
    ppaths = _all_paths(module, "_parameters")
    bpaths = _all_paths(module, "_buffers")
    trained = [i for i, n in enumerate(pnames) if pdict[n].requires_grad] if training else []
    if training and not trained:
        raise ValueError("trace_torch: a training step needs a parameter that requires grad; %s has none%s" % (
            type(module).__name__, " (every one is frozen)" if pnames else ""))
    params = [pdict[n].detach().clone().requires_grad_(i in trained) for i, n in enumerate(pnames)]
    buffers = [b.detach().clone() for _, b in module.named_buffers()]
    np_, nb = len(pnames), len(bnames)
    state = []
    if training and optimizer == "adam":
        state = [torch.zeros_like(params[i]) for i in trained] + [torch.zeros_like(params[i]) for i in trained]
    loss_fn = loss_fn or _sum_of_outputs
    b1, b2, eps = 0.9, 0.999, 1e-8

    def step(*flat):
        ps, bs = flat[:np_], flat[np_:np_ + nb]
        st = flat[np_ + nb:np_ + nb + len(state)]
        xs = flat[np_ + nb + len(state):]
        by_id = {id(pdict[n]): p for n, p in zip(pnames, ps)}
        by_id.update({id(b): x for (_, b), x in zip(module.named_buffers(), bs)})
        swap = {path: by_id[id(t)] for path, t in ppaths + bpaths if id(t) in by_id}
        out = functional_call(module, swap, tuple(xs))
        if not training:
            return out
        loss = loss_fn(out)
        ps = [ps[i] for i in trained]
        # a parameter the loss does not use gets no gradient and no update, as torch.optim
        # skips a parameter whose grad is None (autograd.grad refused the whole step: a review)
        grads = torch.autograd.grad(loss, ps, allow_unused=True)
        used = [i for i, g in enumerate(grads) if g is not None]
        if not used:
            raise ValueError("trace_torch: the loss depends on no parameter that requires grad")
        ps, grads = [ps[i] for i in used], [grads[i] for i in used]
        st = [st[i] for i in used] + [st[len(trained) + i] for i in used] if st else st
        if optimizer == "sgd":
            new = [p - lr * g for p, g in zip(ps, grads)]
            return (loss,) + tuple(grads) + tuple(new)
        ms, vs = st[:len(ps)], st[len(ps):]
        m2 = [b1 * m + (1 - b1) * g for m, g in zip(ms, grads)]
        v2 = [b2 * v + (1 - b2) * g * g for v, g in zip(vs, grads)]
        new = [p - lr * m / (torch.sqrt(v) + eps) for p, m, v in zip(ps, m2, v2)]
        return (loss,) + tuple(grads) + tuple(new) + tuple(m2) + tuple(v2)

    flat = tuple(params) + tuple(buffers) + tuple(state) + tuple(example_inputs)
    was = module.training
    if training:
        module.train()
    try:
        with torch.set_grad_enabled(training):
            gm = make_fx(step)(*flat)
    finally:
        module.train(was)
    tnames = [pnames[i] for i in trained]
    labels = (["param:" + n for n in pnames] + ["buffer:" + n for n in bnames] +
              (["adam_m:" + n for n in tnames] + ["adam_v:" + n for n in tnames] if state else []) +
              ["input%d" % i for i in range(len(example_inputs))])
    roles = ["param"] * np_ + ["buffer"] * nb + ["state"] * len(state) + ["input"] * len(example_inputs)
    # the trace's own copies of the parameters: the placed module runs on these
    inputs = tuple(t.detach() for t in flat)
    return gm, inputs, labels, roles


def _all_paths(module, attr):
    """Every (dotted path, tensor) of module's own and its submodules' parameters (attr
    "_parameters") or buffers ("_buffers"), a tensor under each path it has (named_parameters()
    lists a tied or shared one once)."""
    out = []

    def walk(m, prefix):
        for n, t in getattr(m, attr).items():
            if t is not None:
                out.append((prefix + n, t))
        for n, c in m._modules.items():
            if c is not None:
                walk(c, prefix + n + ".")
    walk(module, "")
    return out


def _sum_of_outputs(out):
    """The default loss of a training step: the sum of every floating-point tensor the module
    returns (a tensor, or tuples, lists, dicts and named tuples of them); output.sum() for one
    tensor. (output.sum() failed on a tuple or torchvision's GoogLeNetOutputs: a review.)"""
    torch = _need("torch")
    if isinstance(out, torch.Tensor):
        return out.sum()
    flat, stack = [], [out]
    while stack:
        x = stack.pop()
        if isinstance(x, torch.Tensor):
            if x.is_floating_point():
                flat.append(x)
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed(list(x)))
    if not flat:
        raise ValueError("trace_torch: the module returns no floating-point tensor to sum into a loss; pass loss_fn")
    loss = flat[0].sum()
    for t in flat[1:]:
        loss = loss + t.sum()
    return loss


def _ancestors(nodes):
    seen, stack = set(), list(nodes)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


def _torch_doc(torch, gm, name, labels, roles, training, deps=()):
    ops, nodes, index, edges = [], [], {}, []
    # make_fx records no metadata for a tensor attribute of the module that is neither parameter
    # nor buffer (a graph constant): its shape and dtype from the tensor itself (it had 0 bytes,
    # and a convolution reading it failed in its rule: a review)
    from torch.fx.passes.shape_prop import _extract_tensor_metadata
    for n in gm.graph.nodes:
        if n.op == "get_attr" and "tensor_meta" not in n.meta:
            attr = gm
            for part in str(n.target).split("."):
                attr = getattr(attr, part, None)
            if isinstance(attr, torch.Tensor):
                n.meta["tensor_meta"] = _extract_tensor_metadata(attr)
    unclassified = {}
    phase_of = {}
    if training:
        out = next(n for n in gm.graph.nodes if n.op == "output")
        res = list(out.args[0])  # (loss, gradients..., updated parameters..., [moments...])
        # the gradients: of the trained parameters only (a frozen one is an input without one),
        # so counted from the results: SGD's (loss, g..., p'...), Adam's (loss, g..., p'..., m..., v...)
        n_grads = (len(res) - 1) // (4 if "state" in roles else 2)
        nodes_of = lambda rs: [r for r in rs if hasattr(r, "all_input_nodes")]
        forward = _ancestors([res[0]])
        backward = _ancestors(nodes_of(res[1:1 + n_grads])) - forward
        update = _ancestors(nodes_of(res[1 + n_grads:])) - forward - backward
        # What the loss needs is the forward pass, what the gradients need besides the backward
        # pass, what the updates need besides the optimizer's. An op no result needs (a buffer's
        # update such as BatchNorm's count, an allocation, an output of a multi-output op nobody
        # reads) takes the latest phase of the ops it reads (forward when it reads only inputs),
        # and a getitem its tuple's: they were all "optimizer", a third of ResNet-18's (a review)
        rank = {"forward": 0, "backward": 1, "optimizer": 2}
        for n in gm.graph.nodes:  # topological order
            if n.op in ("placeholder", "output"):
                phase_of[n] = "forward"
            elif n.target is operator.getitem and n.args and n.args[0] in phase_of:
                phase_of[n] = phase_of[n.args[0]]
            elif n in forward:
                phase_of[n] = "forward"
            elif n in backward:
                phase_of[n] = "backward"
            elif n in update:
                phase_of[n] = "optimizer"
            else:
                phase_of[n] = max((phase_of[u] for u in n.all_input_nodes), key=rank.get, default="forward")
    ph = 0
    param_total = 0
    # the graph's parameter total counts each tensor once: a module called twice, or a weight
    # tied to another module's, counted once per use in a forward import (a review)
    counted = set()

    def count_once(tensors):
        nonlocal param_total
        for t in tensors:
            if id(t) not in counted:
                counted.add(id(t))
                param_total += t.numel() * t.element_size()
    for node in gm.graph.nodes:
        if node.op == "output":
            continue
        metas = _node_metas(node)
        out_bytes = sum(_prod(m.shape) * _itemsize(torch, m.dtype) for m in metas)
        out_numel = _prod(metas[0].shape) if metas else 0  # the first output's (values, not indices)
        ins = [tuple(s.meta["tensor_meta"].shape) for s in _flat_arg_nodes(node) if _is_tensor_node(s)]
        op = {"name": node.name}
        param_bytes = 0
        if node.op == "placeholder":
            role = roles[ph] if roles else "input"
            op["name"] = labels[ph] if labels else node.name
            ph += 1
            kind, flops, op_type = ("input" if role == "input" else "param"), 0, "placeholder:" + role
            if role != "input":
                param_bytes = out_bytes
                param_total += param_bytes
        elif node.op == "get_attr":
            kind, flops, op_type = "param", 0, "get_attr"
            param_bytes = out_bytes
            attr = gm
            for part in str(node.target).split("."):
                attr = getattr(attr, part, None)
            if isinstance(attr, torch.Tensor):
                count_once([attr])
            else:
                param_total += param_bytes
        elif node.op == "call_module":
            mod = gm.get_submodule(node.target)
            rule = _module_rule(mod, ins, out_numel)
            kind, flops, op_type = rule.kind, rule.flops, type(mod).__name__
            tensors = list(mod.parameters()) + list(mod.buffers())
            param_bytes = sum(t.numel() * t.element_size() for t in tensors)
            count_once(tensors)
            if not rule.classified:
                unclassified[op_type] = unclassified.get(op_type, 0) + 1
        else:
            rname, op_type = _target_name(node)
            args = [a for a in node.args]
            rule = _named_rule(rname, ins, out_numel, args, dict(node.kwargs))
            kind, flops = rule.kind, rule.flops
            if not rule.classified:
                unclassified[op_type] = unclassified.get(op_type, 0) + 1
        op.update({"kind": kind, "op_type": op_type, "flops": flops, "out_bytes": float(out_bytes)})
        if len(metas) == 1 and 1 <= len(metas[0].shape) <= 8 and all(int(d) > 0 for d in metas[0].shape):
            op["shape"] = [int(d) for d in metas[0].shape]
        if param_bytes:
            op["param_bytes"] = float(param_bytes)
        if training:
            op["phase"] = "input" if node.op == "placeholder" else phase_of[node]
        index[node] = len(ops)
        ops.append(op)
        nodes.append(node)
        for src in node.all_input_nodes:
            b = ops[index[src]]["out_bytes"]
            if node.target is operator.getitem and node.args and node.args[0] is src and len(_node_metas(src)) > 1:
                # a getitem reads one tensor of its producer's several (split's parts,
                # convolution_backward's gradients): that tensor's bytes, as the round trip
                # copies (it carried the whole tuple: a review)
                b = op["out_bytes"]
            edges.append({"src": index[src], "dst": index[node], "bytes": b})
    # a read after an in-place change of its tensor's storage (through a view) depends on the
    # change: an edge of no bytes (the tensor travels on its producer's edge, after the change)
    have = {(e["src"], e["dst"]) for e in edges}
    for m, n in deps:
        if (index[m], index[n]) not in have:
            have.add((index[m], index[n]))
            edges.append({"src": index[m], "dst": index[n], "bytes": 0.0})
    return nodes, _doc(name, ops, edges, param_total, unclassified)


# ---- in-place mutation: which ops change a tensor, which later ops read it ----

# ops whose result shares its input's storage (a view, or the input itself: contiguous and to may
# return it); conservative: an op listed that copies only adds a dependency
_ALIAS_VIEW = {
    "view", "view_as", "reshape", "reshape_as", "_reshape_alias", "_unsafe_view", "flatten", "unflatten", "permute",
    "transpose", "t", "unsqueeze", "squeeze", "expand", "expand_as", "narrow", "select", "slice", "split",
    "split_with_sizes", "chunk", "unbind", "detach", "alias", "contiguous", "to", "type_as", "float", "half", "double",
    "bfloat16", "getitem", "movedim", "swapaxes", "diagonal", "unfold", "as_strided", "real", "imag", "T", "mT",
    "Identity", "Flatten", "Unflatten",
}
_INPLACE_OPERATORS = {"iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior", "ixor",
                      "ilshift", "irshift", "imatmul"}


def _alias_effect(gm, node):
    """(the nodes node changes in place, whether it returns the tensor it changed, the node whose
    storage its result shares or None) of one torch.fx node."""
    args = [a for a in node.args]
    first = args[0] if args and hasattr(args[0], "op") else None
    schema = getattr(node.target, "_schema", None)
    if node.op == "call_function" and schema is not None:  # aten: the schema's alias annotations
        written, view_of = [], None
        for i, arg in enumerate(schema.arguments):
            v = args[i] if i < len(args) else node.kwargs.get(arg.name)
            info = arg.alias_info
            if info is None or not hasattr(v, "op"):
                continue
            if info.is_write:
                written.append(v)
            elif view_of is None:
                view_of = v
        rets = schema.returns
        returns_written = (bool(written) and bool(rets) and rets[0].alias_info is not None
                           and rets[0].alias_info.is_write)
        return written, returns_written, (None if written else view_of)
    if first is None:
        return [], False, None
    if node.op == "call_module":
        mod = gm.get_submodule(node.target)
        if getattr(mod, "inplace", False) is True:
            return [first], True, None
        return [], False, (first if type(mod).__name__ in _ALIAS_VIEW else None)
    if node.op == "call_method":
        name = node.target
    elif node.op == "call_function":
        name = getattr(node.target, "__name__", "")
        if node.target is operator.setitem:
            return [first], False, None
        if name in _INPLACE_OPERATORS or node.kwargs.get("inplace") is True:
            return [first], True, None
    else:
        return [], False, None
    if name.endswith("_") and not name.endswith("__"):  # add_, copy_, fill_, torch.relu_
        return [first], True, None
    return [], False, (first if name in _ALIAS_VIEW else None)


def _mutations(gm):
    """Make the ops after an in-place change read it, and say which reads need more.

    An op that changes a tensor in place and returns it (add_, copy_, an inplace=True module):
    later reads of that tensor read the op's result instead (gm is rewritten: torch.fx's dataflow
    read the tensor's producer, so the change had no edge to them and ran on a copy in the round
    trip: a review; make_fx records aten's so). A read of a tensor sharing storage with one a
    later op changed (a view taken before the change, the base of a view changed in place:
    y[:, 0] = 0.0 is aten's fill_ on a select of y) depends on that op: (mutator, reader) pairs,
    an edge of the graph. Returns (whether gm changed, those pairs, root node -> the nodes
    sharing its storage, for the storages such a read needs: one device in the round trip)."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    root, whole, current, last_mut, members = {}, {}, {}, {}, {}
    deps, constrained, changed = [], set(), False
    for n in list(gm.graph.nodes):
        for a in list(n.all_input_nodes):
            c = current.get(whole.get(a, a))
            if c is not None and c is not a:
                n.replace_input_with(a, c)
                changed = True
        for s in n.all_input_nodes:
            r = root.get(s, s)
            m = last_mut.get(r)
            if m is not None and m is not n and order[s] < order[m]:
                constrained.add(r)
                if n.op != "output" and (m, n) not in deps:
                    deps.append((m, n))
        if n.op == "output":
            continue
        written, returns_written, view_of = _alias_effect(gm, n)
        if view_of is not None and not _is_tensor_node(view_of) and view_of not in root:
            # a getitem of a tuple of new tensors (native_batch_norm's output, mean, invstd): its
            # own storage, not its siblings' (a split's parts are views of the split's input)
            view_of = None
        src = written[0] if written else view_of
        if src is not None:
            root[n] = root.get(src, src)
            members.setdefault(root[n], []).append(n)
        for w in written:
            r = root.get(w, w)
            if r is not root.get(n, n):
                members.setdefault(r, []).append(n)
            last_mut[r] = n
        if written and returns_written:
            whole[n] = whole.get(written[0], written[0])
            current[whole[n]] = n
    return changed, deps, {r: [r] + members.get(r, []) for r in constrained}


def _flat_arg_nodes(node):
    """The Node arguments of a node in argument order (nested lists flattened), repeats kept."""
    out = []

    def walk(a):
        if hasattr(a, "all_input_nodes") and hasattr(a, "op"):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            for x in a:
                walk(x)
        elif isinstance(a, dict):
            for x in a.values():
                walk(x)
    walk(list(node.args))
    walk(dict(node.kwargs))
    return out


def _doc(name, ops, edges, param_bytes, unclassified):
    act = sum(o["out_bytes"] for o in ops if o["kind"] not in ("param", "input"))
    return {"format": "doppler-graph", "version": 1, "name": name, "cost_kind": "physical", "ops": ops,
            "edges": edges, "memory": {"param_bytes": float(param_bytes), "activation_bytes": float(act)},
            "unclassified": unclassified}


# ---- ONNX ----

def onnx_to_doc(path, dims=None, name=None):
    """The native JSON graph (a dict) of an ONNX model file. Shapes come from the file and ONNX's
    shape inference, and a Reshape's output it leaves unknown (before opset 14) from the values of
    its shape input, folded from the shape arithmetic (_onnx_complete_reshapes); dims gives a
    size to each symbolic dimension by name ({"batch": 8}); a tensor whose shape stays unknown or
    symbolic is an error naming the file, the node and the tensor.
    Graph inputs are ops of kind input; initializers (weights) are not ops: their bytes are the
    param_bytes of the first node that reads them, itself or in a subgraph (an If's branch, a
    Loop's or Scan's body), each once; a subgraph's own initializers are its node's. Raises
    doppler.FileError (no such file, a directory), TypeError (path not a str or a path),
    ValueError (bad file or shapes; a node that reads a tensor before the node that makes it, the
    nodes out of topological order, or one no node, graph input or initializer makes),
    ImportError (onnx missing: Debian python3-onnx)."""
    # the file first, as Graph.read checks its own: a missing file was "not an ONNX model
    # ([Errno 2] ...)", a ValueError, from Graph.from_onnx (the command said "no such file"), None
    # the same, and an int read that file descriptor (a review)
    from . import _lib
    from ._errors import FileError
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError("onnx_to_doc: path: an ONNX file name (a str or a path), got %s" % (
            "None" if path is None else "%s %r" % (type(path).__name__, path)))
    name_of = os.fsdecode(path)
    if "\0" in name_of:
        raise ValueError("onnx_to_doc: path %r contains a NUL character" % name_of)
    if os.path.isdir(path):
        raise FileError("%s: is a directory, not an ONNX file" % name_of, _lib.DP_EIO)
    if not os.path.exists(path):
        raise FileError("%s: no such file" % name_of, _lib.DP_EIO)
    path = name_of
    onnx = _need("onnx")
    dims = dict(dims or {})
    for k, v in list(dims.items()):
        # (a size of -3 gave negative bytes, reported against a temporary file; 2.5 was cut to 2:
        # a review) an integer of any kind (numpy's too), or a float or text that is one
        size = None
        if not isinstance(v, bool):
            try:
                size = operator.index(v)
            except TypeError:
                if isinstance(v, float) and v.is_integer():
                    size = int(v)
                elif isinstance(v, str) and v.strip().isdigit():
                    size = int(v)
        if size is None or size <= 0:
            raise ValueError("%s: dimension '%s': expected a positive integer size, got %s" % (path, k, repr(v)))
        dims[k] = size
    try:
        model = onnx.load(path)
    except Exception as e:  # protobuf's DecodeError and friends
        raise ValueError("%s: not an ONNX model (%s)" % (path, e)) from e
    if len(model.graph.node) == 0:
        # an empty file parses as an empty model (protobuf's defaults): it wrote a graph of 0 ops
        raise ValueError("%s: not an ONNX model, or one without nodes (an empty graph)" % path)
    # the sizes given to symbolic dimensions before shape inference, so that it propagates them
    # (after it, a reshape of a dynamic batch left a dimension named by the inference itself,
    # unk__0, which the user cannot know: a review)
    named = set()
    for vi in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                if not d.HasField("dim_value") and d.dim_param:
                    named.add(d.dim_param)
                if not d.HasField("dim_value") and d.dim_param in dims:
                    d.dim_value = int(dims[d.dim_param])
    try:
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception as e:
        raise ValueError("%s: ONNX shape inference failed: %s" % (path, e)) from e
    # a size for a dimension the model does not name (a misspelt --dim batsh=2) was ignored, and
    # the error then asked for the size it had been given (a new researcher's trial); the names
    # shape inference makes (unk__0, which the error below asks for) count too
    for vi in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            named.update(d.dim_param for d in vi.type.tensor_type.shape.dim if d.dim_param)
    unknown = sorted(set(dims) - named)
    if unknown:
        raise ValueError("%s: no symbolic dimension named %s (the model's: %s)" % (
            path, ", ".join("'%s'" % k for k in unknown), ", ".join(sorted(named)) or "none"))
    try:
        model, reshape_why = _onnx_complete_reshapes(onnx, model, dims)
    except Exception as e:
        raise ValueError("%s: ONNX shape inference failed: %s" % (path, e)) from e
    graph = model.graph
    try:
        from onnx.mapping import TENSOR_TYPE_TO_NP_TYPE as to_np
    except ImportError:  # newer onnx
        to_np = None
    import numpy as np

    def itemsize(elem_type):
        if elem_type == onnx.TensorProto.BFLOAT16:
            return 2  # onnx 1.12 maps it to numpy's float32, its storage type (4 bytes: a review)
        if to_np is not None:
            return np.dtype(to_np[elem_type]).itemsize
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)).itemsize

    shapes = {}  # tensor name -> (shape, itemsize)
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        shape = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                shape.append(int(d.dim_value))
            elif d.dim_param in dims:
                shape.append(int(dims[d.dim_param]))
            else:
                shape.append(d.dim_param or "?")
        shapes[vi.name] = (shape, itemsize(t.elem_type))
    inits = {}
    for t in graph.initializer:
        shapes[t.name] = (list(t.dims), itemsize(t.data_type))
        inits[t.name] = _prod(t.dims) * itemsize(t.data_type)

    def shape_of(tensor, where):
        if tensor in reshape_why:
            # a Reshape's output the import could not size: say which input it could not compute
            raise ValueError("%s: %s: tensor '%s' has no inferred shape: %s" % (path, where, tensor,
                                                                                 reshape_why[tensor]))
        if tensor not in shapes:
            raise ValueError("%s: %s: tensor '%s' has no inferred shape" % (path, where, tensor))
        s, isz = shapes[tensor]
        sym = [d for d in s if not isinstance(d, int)]
        if sym:
            raise ValueError("%s: %s: tensor '%s' has the symbolic dimension '%s'; give its size (--dim %s=N)"
                             % (path, where, tensor, sym[0], sym[0]))
        return s, isz

    ops, edges, producer, used_names = [], [], {}, set()
    param_total, unclassified, claimed = 0, {}, set()

    def unique(n):
        base, k = n, 1
        while n in used_names:
            n = "%s_%d" % (base, k)
            k += 1
        used_names.add(n)
        return n

    for vi in graph.input:
        if vi.name in inits:
            continue
        if "\0" in vi.name:
            raise ValueError("%s: graph input %r: its name holds a NUL character" % (path, vi.name))
        s, isz = shape_of(vi.name, "graph input")
        op = {"name": unique(vi.name), "kind": "input", "op_type": "input", "flops": 0.0,
              "out_bytes": float(_prod(s) * isz)}
        if 1 <= len(s) <= 8 and all(d > 0 for d in s):
            op["shape"] = s
        producer[vi.name] = len(ops)
        ops.append(op)
    def outer_inputs(node):
        """The tensors a node's subgraphs (If's branches, Loop's and Scan's bodies) read from the
        scopes around them: inputs of the node as much as its own (they made no edge: the node
        could run before their producer; a review)."""
        found = []

        def walk(g, bound):
            bound = set(bound) | {x.name for x in g.input} | {x.name for x in g.initializer}
            for n in g.node:
                for t in n.input:
                    if t and t not in bound and t not in found:
                        found.append(t)
                for a in n.attribute:
                    for sg in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        walk(sg, bound)
                bound |= {t for t in n.output if t}
        for a in node.attribute:
            for sg in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                walk(sg, ())
        return [t for t in found if t not in node.input]

    def subgraph_init_bytes(node):
        """The bytes of the initializers of a node's subgraphs (nested ones too): weights of the
        node's own, each subgraph being the node's alone."""
        total = 0

        def walk(g):
            nonlocal total
            total += sum(_prod(t.dims) * itemsize(t.data_type) for t in g.initializer)
            for n in g.node:
                for a in n.attribute:
                    for sg in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        walk(sg)
        for a in node.attribute:
            for sg in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                walk(sg)
        return total

    made_by = {}  # tensor -> the first node that makes it
    for i, node in enumerate(graph.node):
        for t in node.output:
            if t:
                made_by.setdefault(t, i)
    for i, node in enumerate(graph.node):
        where = "node %d (%s %s)" % (i, node.op_type, node.name or "unnamed")
        for text, what in ((node.name, "name"), (node.op_type, "op type")):
            if "\0" in text:
                # (written as \u0000, a file the JSON reader refuses: a review)
                raise ValueError("%s: %s: its %s holds a NUL character" % (path, where, what))
        # every tensor read is made before: by an earlier node, a graph input or an initializer
        # (a node read before its producer made no edge, the import exit 0: a review). A file
        # whose nodes are out of topological order is invalid (onnx.checker refuses it): refused.
        outer = outer_inputs(node)
        for t in [t for t in node.input if t] + outer:
            if t in producer or t in inits:
                continue
            sub = "" if t in node.input else " (in a subgraph)"
            if t in made_by:
                j = graph.node[made_by[t]]
                raise ValueError("%s: %s reads tensor '%s'%s before node %d (%s %s) makes it: the nodes are not in "
                                 "topological order (an invalid ONNX file: onnx.checker refuses it)" % (
                                     path, where, t, sub, made_by[t], j.op_type, j.name or "unnamed"))
            raise ValueError("%s: %s reads tensor '%s'%s, which no node, graph input or initializer makes" % (
                path, where, t, sub))
        ins = [shape_of(t, where)[0] for t in node.input if t]
        outs = [shape_of(t, where) for t in node.output if t]
        out_numel = _prod(outs[0][0]) if outs else 0  # the first output's (values, not indices)
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if isinstance(attrs.get("equation"), bytes):
            attrs["equation"] = attrs["equation"].decode()
        rule = _named_rule(node.op_type, ins, out_numel, [], attrs)
        if not rule.classified:
            unclassified[node.op_type] = unclassified.get(node.op_type, 0) + 1
        op = {"name": unique(node.name or "%s_%d" % (node.op_type, i)), "kind": rule.kind,
              "op_type": node.op_type, "flops": rule.flops,
              "out_bytes": float(sum(_prod(s) * isz for s, isz in outs))}
        if len(outs) == 1 and 1 <= len(outs[0][0]) <= 8 and all(d > 0 for d in outs[0][0]):
            op["shape"] = outs[0][0]
        # the weights the node reads, its subgraphs' included (an If's branch, a Loop's body:
        # a scripted loop over a Linear had 0 parameter bytes, a review), each initializer once
        read = [t for t in list(node.input) + outer if t in inits and t not in claimed]
        pb = sum(inits[t] for t in dict.fromkeys(read)) + subgraph_init_bytes(node)
        claimed.update(read)
        if pb:
            op["param_bytes"] = float(pb)
            param_total += pb
        me = len(ops)
        carried = {}
        for t in list(node.input) + outer:
            if t in producer and producer[t] != me:
                s, isz = shapes[t]
                carried.setdefault(producer[t], {})[t] = _prod(s) * isz
        for src, ts in carried.items():
            edges.append({"src": src, "dst": me, "bytes": float(sum(ts.values()))})
        for t in node.output:
            if t:
                producer[t] = me
        ops.append(op)
    gname = name or os.path.splitext(os.path.basename(path))[0]
    doc = _doc(gname, ops, edges, param_total, unclassified)
    doc["source"] = "ONNX %s (opset %s)" % (os.path.basename(path),
                                           ",".join(str(o.version) for o in model.opset_import))
    return doc


# ---- ONNX: shapes ONNX's inference leaves unknown (a Reshape at opset <= 13) ----

# the ops of the shape arithmetic torch's export emits (x.view(x.shape[0], -1)), folded to values
_SHAPE_ARITH = {"Constant", "Identity", "Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast",
                "Add", "Sub", "Mul", "Div"}
_FOLD_MAX_ELEMENTS = 1024  # a shape's values, not a weight's: larger constants are not folded


def _onnx_known_shapes(graph, dims):
    """tensor -> (shape, elem_type) of the tensors whose every dimension is known (dims sizes the
    symbolic ones)."""
    out = {}
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
            continue
        s = [int(d.dim_value) if d.HasField("dim_value") else dims.get(d.dim_param) for d in t.shape.dim]
        if all(isinstance(d, int) for d in s):
            out[vi.name] = (s, t.elem_type)
    for t in graph.initializer:
        out[t.name] = (list(t.dims), t.data_type)
    return out


def _onnx_fold_values(onnx, graph, known):
    """The values of the tensors of graph's shape arithmetic (_SHAPE_ARITH) computable from its
    constants, initializers and the known shapes (known: _onnx_known_shapes), as numpy arrays;
    and for the others, why not (tensor -> a sentence)."""
    import numpy as np
    from onnx import numpy_helper
    vals, why = {}, {}
    for t in graph.initializer:
        if _prod(t.dims) <= _FOLD_MAX_ELEMENTS:
            vals[t.name] = numpy_helper.to_array(t)
    for vi in graph.input:
        if vi.name not in vals:
            why[vi.name] = "it is the graph input '%s', known at run time only" % vi.name
    for i, node in enumerate(graph.node):
        op = node.op_type
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        ins = list(node.input)
        val = lambda k: vals.get(ins[k]) if k < len(ins) and ins[k] else None
        res, reason = None, None
        if op not in _SHAPE_ARITH or node.domain not in ("", "ai.onnx"):
            reason = "it is made by node %d (%s %s), whose values the import does not compute" % (
                i, op, node.name or "unnamed")
        elif op == "Shape":
            if ins[0] in known:
                s = known[ins[0]][0]
                res = np.array(s[attrs.get("start", 0):attrs.get("end", len(s))], dtype=np.int64)
            else:
                reason = "the shape of '%s' is not known" % ins[0]
        elif op == "Constant":
            if "value" in attrs:
                res = numpy_helper.to_array(attrs["value"])
            elif "value_int" in attrs or "value_ints" in attrs:
                res = np.array(attrs.get("value_int", attrs.get("value_ints")), dtype=np.int64)
            elif "value_float" in attrs or "value_floats" in attrs:
                res = np.array(attrs.get("value_float", attrs.get("value_floats")), dtype=np.float32)
            else:
                reason = "it is a Constant of a kind the import does not read (node %d)" % i
        else:
            missing = [t for t in ins if t and t not in vals]
            if missing:
                reason = why.get(missing[0], "'%s' is not computable" % missing[0])
            else:
                try:
                    res = _fold_op(onnx, op, attrs, [val(k) for k in range(len(ins))])
                except Exception as e:  # a value the op refuses (an index out of range, ...)
                    reason = "node %d (%s %s) cannot be computed on its values: %s" % (i, op, node.name or "unnamed", e)
        for t in node.output:
            if not t:
                continue
            if res is not None and t == node.output[0] and res.size <= _FOLD_MAX_ELEMENTS:
                vals[t] = res
            else:
                why[t] = reason or "'%s' is not computable" % t
    return vals, why


def _fold_op(onnx, op, attrs, xs):
    """One op of _SHAPE_ARITH (but Shape and Constant) on numpy values xs (None: an omitted
    optional input), as ONNX defines it."""
    import numpy as np
    if op == "Identity":
        return xs[0]
    if op == "Gather":
        return np.take(xs[0], xs[1], axis=attrs.get("axis", 0))
    if op in ("Unsqueeze", "Squeeze"):
        axes = attrs.get("axes", xs[1] if len(xs) > 1 else None)  # an input from opset 13
        x = xs[0]
        if op == "Squeeze":
            if axes is None:
                return np.squeeze(x)
            return np.squeeze(x, axis=tuple(int(a) % x.ndim for a in np.ravel(axes)))
        rank = x.ndim + len(np.ravel(axes))
        for a in sorted(int(a) % rank for a in np.ravel(axes)):
            x = np.expand_dims(x, a)
        return x
    if op == "Concat":
        return np.concatenate([x for x in xs if x is not None], axis=attrs["axis"])
    if op == "Slice":
        x = xs[0]
        if "starts" in attrs:  # opset < 10: attributes
            starts, ends, axes, steps = attrs["starts"], attrs["ends"], attrs.get("axes"), None
        else:
            starts, ends = xs[1], xs[2]
            axes = xs[3] if len(xs) > 3 else None
            steps = xs[4] if len(xs) > 4 else None
        starts, ends = [int(v) for v in np.ravel(starts)], [int(v) for v in np.ravel(ends)]
        axes = list(range(len(starts))) if axes is None else [int(a) % x.ndim for a in np.ravel(axes)]
        steps = [1] * len(starts) if steps is None else [int(v) for v in np.ravel(steps)]
        idx = [slice(None)] * x.ndim
        for a, s, e, st in zip(axes, starts, ends, steps):
            idx[a] = slice(s, e, st)  # Python's slice clamps as ONNX does (INT64_MAX, -INT64_MAX)
        return x[tuple(idx)]
    if op == "Cast":
        try:
            from onnx.mapping import TENSOR_TYPE_TO_NP_TYPE
            dt = TENSOR_TYPE_TO_NP_TYPE[attrs["to"]]
        except ImportError:  # newer onnx
            dt = onnx.helper.tensor_dtype_to_np_dtype(attrs["to"])
        return xs[0].astype(dt)
    a, b = xs[0], xs[1]
    if op == "Add":
        return a + b
    if op == "Sub":
        return a - b
    if op == "Mul":
        return a * b
    if np.issubdtype(a.dtype, np.integer):  # Div: an integer's truncates toward zero, as C's
        return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)
    return a / b


def _reshape_target(data_shape, target, allowzero=False):
    """The output shape of ONNX's Reshape of a tensor of data_shape to the values target: 0
    copies the input's dimension at that index (unless allowzero), -1 is what the element count
    leaves. Raises ValueError saying what is wrong."""
    out = []
    for i, v in enumerate(int(v) for v in target):
        if v == 0 and not allowzero:
            if i >= len(data_shape):
                raise ValueError("its 0 at index %d has no input dimension to copy (input rank %d)" % (
                    i, len(data_shape)))
            v = data_shape[i]
        elif v < -1:
            raise ValueError("it asks for the dimension %d" % v)
        out.append(v)
    total = _prod(data_shape)
    if out.count(-1) > 1:
        raise ValueError("it has more than one -1: %s" % out)
    if -1 in out:
        rest = _prod(v for v in out if v != -1)
        if rest == 0 or total % rest:
            raise ValueError("%d elements do not divide into %s" % (total, out))
        out[out.index(-1)] = total // rest
    if _prod(out) != total:
        raise ValueError("%d elements do not make the shape %s" % (total, out))
    return out


def _onnx_complete_reshapes(onnx, model, dims):
    """The model with the output shapes of its Reshapes that ONNX's inference left unknown (onnx
    1.12 uses no data propagation for Reshape before opset 14: torch's x.view(x.shape[0], -1)
    failed with a dynamic batch at opset 11 and 13: a review) computed from their shape inputs,
    inferred again through the ops after them; and tensor -> why the shape of a Reshape's
    output could not be computed."""
    reasons = {}
    reshapes = [n for n in model.graph.node if n.op_type == "Reshape" and n.domain in ("", "ai.onnx")]
    for _ in range(len(reshapes)):
        graph = model.graph
        known = _onnx_known_shapes(graph, dims)
        vals, why = None, None
        added = False
        for node in reshapes:
            out = node.output[0]
            if out in known or len(node.input) < 2:
                continue
            if vals is None:
                vals, why = _onnx_fold_values(onnx, graph, known)
            if node.input[0] not in known:
                reasons[out] = "its data input '%s' has no known shape" % node.input[0]
                continue
            if node.input[1] not in vals:
                reasons[out] = "its shape input '%s' is not computable: %s" % (
                    node.input[1], why.get(node.input[1], "no node makes it"))
                continue
            allowzero = any(a.name == "allowzero" and a.i for a in node.attribute)
            try:
                s = _reshape_target(known[node.input[0]][0], vals[node.input[1]].ravel(), allowzero)
            except ValueError as e:
                reasons[out] = "its shape input '%s' is %s, and %s" % (node.input[1], vals[node.input[1]].tolist(), e)
                continue
            reasons.pop(out, None)
            vi = next((v for v in list(graph.value_info) + list(graph.output) if v.name == out), None)
            if vi is None:
                vi = graph.value_info.add()
                vi.name = out
            vi.type.tensor_type.elem_type = known[node.input[0]][1]
            vi.type.tensor_type.ClearField("shape")
            for d in s:
                vi.type.tensor_type.shape.dim.add().dim_value = d
            added = True
        if not added:
            break
        # (a second pass: a Reshape whose shape depends on an earlier one's output shape)
        model = onnx.shape_inference.infer_shapes(model, data_prop=True)
    known = _onnx_known_shapes(model.graph, dims)
    return model, {t: r for t, r in reasons.items() if t not in known}


# ---- writing and reading back ----

def unclassified_text(doc):
    """The op types of doc without a FLOP rule (counted as element-wise), as one line, or None."""
    unc = doc.get("unclassified") or {}
    if not unc:
        return None
    kinds = sorted(unc)
    return ("%d op type%s without a FLOP rule, counted as element-wise (one FLOP an output element): %s%s" % (
        len(kinds), "" if len(kinds) == 1 else "s", ", ".join(kinds[:8]), ", ..." if len(kinds) > 8 else ""))


def warn_unclassified(doc):
    """A UserWarning naming doc's op types without a FLOP rule (Graph.from_torch, from_onnx:
    an LSTM's 31k FLOPs passed as 160 without a word)."""
    text = unclassified_text(doc)
    if text:
        import warnings
        warnings.warn("%s: %s" % (doc.get("name", "graph"), text), UserWarning, stacklevel=3)


def _descriptor_of(path):
    """The descriptor of this process path names through its links (/dev/stdout, /dev/fd/N,
    /proc/self/fd/N, /proc/PID/fd/N), or None: such a path is written to the descriptor in place,
    as the library's dp_file_atomic_open does (realpath resolved /dev/stdout to the file standard
    output was redirected to, and the rename replaced it: `>> log` lost the log, a review)."""
    cur = path
    prefixes = ("/dev/fd/", "/proc/self/fd/", "/proc/%d/fd/" % os.getpid())
    for _ in range(40):
        for pre in prefixes:
            if cur.startswith(pre) and cur[len(pre):].isdigit():
                return int(cur[len(pre):])
        try:
            link = os.readlink(cur)
        except OSError:
            return None
        if not link.startswith("/") and ":[" in link:
            return None
        cur = link if link.startswith("/") else os.path.join(os.path.dirname(cur), link)
    return None


def _write_json(doc, path):
    """Write doc to path atomically (a temporary file in the same folder, renamed over the file a
    symbolic link names), as the library's writers do: a descriptor (/dev/stdout, /dev/fd/N), a
    character device or a FIFO (/dev/null, a pipe) is written in place, never replaced (until
    2026-12-06 the rename replaced it: as root, --out /dev/full left a JSON file there); a
    directory or other special file is refused. Errors are doppler.FileError (an OSError) naming
    the file, in the library's words (a full disk said "[Errno 28] No space left on device" alone,
    and a directory was a ValueError where Graph.write of a read graph raises FileError: a
    review)."""
    from . import _lib
    from ._errors import FileError
    try:
        _write_json_at(doc, path)
    except FileError:
        raise
    except OSError as e:
        raise FileError("%s: write failed: %s" % (os.fsdecode(path), e.strerror or e), _lib.DP_EIO) from e


def _write_json_at(doc, path):
    """_write_json's work; raises OSError (FileError where it says what)."""
    from . import _lib
    from ._errors import FileError
    fdn = _descriptor_of(path)
    if fdn is not None:
        if fdn in (1, 2):
            (sys.stdout if fdn == 1 else sys.stderr).flush()
        with os.fdopen(os.dup(fdn), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        return
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise FileError("%s: cannot write: %s" % (path, e.strerror), _lib.DP_EIO) from e
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            with open(target, "w") as f:
                json.dump(doc, f, separators=(",", ":"))
                f.write("\n")
            return
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise FileError("%s: is %s: doppler writes regular files (or, in place, character devices and FIFOs)"
                        % (path, kind), _lib.DP_EIO)
    d = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".doppler-import-", suffix=".json", dir=d)
    except OSError as e:
        raise FileError("%s: cannot write: %s" % (path, e.strerror), _lib.DP_EIO) from e
    try:
        # the mode a new file gets (mkstemp's is 0600: other users could not read an import on
        # a shared file system, where graph gen's and convert's files are 0644 under umask 022)
        um = os.umask(0)
        os.umask(um)
        os.chmod(tmp, 0o666 & ~um)
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _doc_graph(doc):
    from . import _lib
    from .graph import Graph
    fd, tmp = tempfile.mkstemp(prefix="doppler-import-", suffix=".json")
    os.close(fd)
    try:
        _write_json(doc, tmp)
        try:
            g = Graph.read(tmp, format="native")
            # the import's fields beyond the library's (param_bytes, phase, memory, unclassified,
            # source) for Graph.write: they were dropped; and the graph's source, which every
            # message of the library names, is the import's, not this deleted file (a review)
            g._import_doc = doc
            if doc.get("source"):
                _lib.dp_graph_set_source(g._g(), _lib.encode(doc["source"], "import: source"))
            return g
        except Exception as e:
            # the reader names the temporary file, deleted by then: name the import's source
            # (a review)
            if tmp in str(e.args[0] if e.args else ""):
                e.args = (str(e.args[0]).replace(tmp, "the graph imported from %s" % doc.get("source", doc.get("name"))),) + e.args[1:]
            raise
    finally:
        os.unlink(tmp)


# ---- the command: python3 -m doppler.importers (doppler graph import) ----

def _parse_shape(text):
    try:
        s = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        s = ()
    if not s or any(d <= 0 for d in s):
        raise argparse.ArgumentTypeError("expected a shape such as 1x3x224x224, got '%s'" % text)
    return s


def _parse_dim(text):
    k, sep, v = text.partition("=")
    if not sep or not k or not v.isdigit() or int(v) <= 0:
        raise argparse.ArgumentTypeError("expected NAME=SIZE (a positive integer), got '%s'" % text)
    return k, int(v)


def main(argv=None):
    p = argparse.ArgumentParser(prog="doppler graph import", description=(
        "Import a model as a doppler graph (native JSON): an ONNX file (FILE.onnx), or a torchvision "
        "model by name (torchvision:resnet50; untrained weights, nothing downloaded) traced by torch.fx."))
    p.add_argument("model", help="FILE.onnx or torchvision:NAME")
    p.add_argument("--out", required=True, help="the graph file to write: FILE.json (native JSON), or - for stdout")
    p.add_argument("--name", help="the graph's name (default: the model's)")
    p.add_argument("--dim", action="append", type=_parse_dim, default=[], metavar="NAME=SIZE",
                   help="ONNX: the size of a symbolic dimension (repeatable)")
    p.add_argument("--input-shape", type=_parse_shape, default=None, metavar="AxBx...",
                   help="torchvision: the input's shape (default 1x3x224x224; 1x3x299x299 for inception_v3)")
    p.add_argument("--training", action="store_true", help="torchvision: a training step (forward, backward, update)")
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd", help="the update of --training")
    a = p.parse_args(argv)
    if a.out != "-" and not a.out.endswith(".json") and (not os.path.exists(a.out) or os.path.isfile(a.out)):
        # the native JSON format only (a .dot or .txt name got JSON under it, exit 0: a review;
        # an existing FILE.dot too: another); a device or FIFO, such as /dev/null, is written in place
        p.error("--out %s: the import writes the native JSON format: name it FILE.json (or - for stdout), "
                "and make other formats with doppler graph convert" % a.out)
    try:
        if a.model.startswith("torchvision:"):
            doc = _torchvision_doc(a.model.split(":", 1)[1], a.input_shape, a.training, a.optimizer, a.name)
        else:
            if a.training or a.input_shape:
                p.error("--training and --input-shape apply to torchvision models; an ONNX file has its own")
            doc = onnx_to_doc(a.model, dict(a.dim), a.name)
        if a.out == "-":
            json.dump(doc, sys.stdout, separators=(",", ":"))
            sys.stdout.write("\n")
        else:
            _write_json(doc, a.out)
    except (ValueError, ImportError, OSError) as e:
        print("doppler graph import: %s" % e, file=sys.stderr)
        return 1
    except Exception as e:  # torch's and torch.fx's errors (a shape the model refuses, a trace)
        for _ in range(8):  # ShapeProp's "error for node=..." wraps the model's own
            inner = e.__cause__ or e.__context__
            if inner is None:
                break
            e = inner
        text = str(e).strip()
        print("doppler graph import: %s: %s: %s" % (a.model, type(e).__name__, text.splitlines()[0] if text else ""),
              file=sys.stderr)
        return 1
    n_ops, n_edges = len(doc["ops"]), len(doc["edges"])
    print("%s: %d op%s, %d edge%s, %.6g FLOPs, parameters %.6g bytes" % (
        "(stdout)" if a.out == "-" else a.out, n_ops, "" if n_ops == 1 else "s", n_edges, "" if n_edges == 1 else "s",
        sum(o["flops"] for o in doc["ops"]), doc["memory"]["param_bytes"]), file=sys.stderr if a.out == "-" else sys.stdout)
    text = unclassified_text(doc)
    if text:
        # ops with no FLOP rule are counted as element-wise: say which, or an LSTM's 31k FLOPs
        # pass as 160 without a word
        print("doppler graph import: warning: %s" % text, file=sys.stderr)
    return 0


def _torchvision_doc(model, shape, training, optimizer, name):
    torch = _need("torch")
    tv = _need("torchvision")
    builder = getattr(tv.models, model, None)
    if builder is None or not callable(builder) or model.startswith("_"):
        raise ValueError("torchvision:%s: no such model in torchvision %s" % (model, tv.__version__))
    kw = {"weights": None}
    if model == "inception_v3":
        kw.update(aux_logits=False, init_weights=False)
    torch.manual_seed(0)
    m = builder(**kw)
    m.eval() if not training else m.train()
    shape = shape or ((1, 3, 299, 299) if model == "inception_v3" else (1, 3, 224, 224))
    import warnings
    with warnings.catch_warnings():
        # the fallback's warning is about running the traced module, which the command does not
        warnings.filterwarnings("ignore", message="trace_torch: .*cannot follow it")
        imp = trace_torch(m, (torch.randn(*shape),), training=training, name=name or model, optimizer=optimizer)
    return imp.doc


if __name__ == "__main__":
    sys.exit(main())
