"""Place a PyTorch model and run it placed: import torchvision's ResNet-18 with torch.fx, place it
on 4 devices with HEFT and with round-robin, apply each placement to the traced module and run it;
the outputs equal those of the unplaced module run on the first device (on GPUs, where a kernel
may round otherwise on another device kind, the largest difference is printed when they do not).
Without GPUs every device is the CPU (each transfer is still a copy).

    python3 examples/place_torch_model.py [DEVICE ...]      # e.g. cuda:0 cuda:1 cuda:2 cuda:3
"""

import copy
import sys

import torch
import torchvision

import doppler

devices = sys.argv[1:] or ["cpu"] * 4
torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(8, 3, 64, 64)

g = doppler.Graph.from_torch(model, x)                 # the forward pass, one op per fx node
print("%s: %d ops, %d edges, %.4g GFLOPs, parameters %.4g MB" % (
    g.name, g.n_ops, g.n_edges, g.work.sum() / 1e9, g.torch.doc["memory"]["param_bytes"] / 1e6))
machine = doppler.Machine(devices=len(devices))
first = torch.device(devices[0])
reference = copy.deepcopy(model).to(first)(x.to(first))   # the unplaced module, on the first device
for method in ("heft", "round-robin"):
    p = doppler.place(g, method, machine=machine)
    placed = g.torch.apply_placement(p.assignment, devices)   # each node on its op's device
    out = placed(x).to(first)
    same = torch.equal(out, reference)
    print("%-11s makespan %.4g s, ops per device %s, %d transfers, outputs equal: %s%s" % (
        method, p.makespan, [int((p.assignment == d).sum()) for d in range(len(devices))],
        len(placed.doppler_moves), same, "" if same else " (largest difference %.3g)" % (out - reference).abs().max().item()))
