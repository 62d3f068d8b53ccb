"""Place a PyTorch model and run it placed: import torchvision's ResNet-18 with torch.fx, place it
on 4 devices with HEFT and with round-robin, apply each placement to the traced module and run it;
the outputs equal the unplaced module's. Without GPUs every device is the CPU (each transfer is
still a copy).

    python3 examples/place_torch_model.py [DEVICE ...]      # e.g. cuda:0 cuda:1 cuda:2 cuda:3
"""

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
reference = model(x)
for method in ("heft", "round-robin"):
    p = doppler.place(g, method, machine=machine)
    placed = g.torch.apply_placement(p.assignment, devices)   # each node on its op's device
    out = placed(x).to(reference.device)
    print("%-11s makespan %.4g s, ops per device %s, %d transfers, outputs equal: %s" % (
        method, p.makespan, [int((p.assignment == d).sum()) for d in range(len(devices))],
        len(placed.doppler_moves), torch.equal(out, reference)))
