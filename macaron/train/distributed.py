"""The processes of a run: one, or several under torchrun (DDP: nccl on CUDA, gloo on the CPU)."""
from __future__ import annotations

import os

import torch

from .resume import TrainError


class Dist:
    def __init__(self, device: str | None):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        cuda = torch.cuda.is_available() and device != "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise TrainError("--device cuda: no CUDA device is available")
        self.device = torch.device(f"cuda:{local}" if cuda else "cpu")
        if cuda:
            torch.cuda.set_device(self.device)
            torch.backends.cuda.matmul.allow_tf32 = True  # the float32 parts (norms, loss) outside autocast
        if self.world > 1 and not torch.distributed.is_initialized():
            torch.distributed.init_process_group("nccl" if cuda else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self):
        if self.world > 1:
            torch.distributed.barrier()

    def agree(self, value):
        """Rank 0's value (a flag or a number), for every rank: wall-clock decisions differ between ranks."""
        if self.world == 1:
            return value
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        torch.distributed.broadcast(t, 0)
        return type(value)(t.item())

    def sum(self, values: list[float]) -> list[float]:
        if self.world == 1:
            return values
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        torch.distributed.all_reduce(t)
        return t.tolist()

    def synchronize(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def close(self):
        if self.world > 1 and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
