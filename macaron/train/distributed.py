"""The processes of a run: one, or several under torchrun (DDP: nccl on CUDA, gloo on the CPU)."""
from __future__ import annotations

import datetime as dt
import os

import torch

from ..sources.milestones import param_checksum
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

    def log(self, msg: str):
        """A line of the run's log with the time, printed by the main process only."""
        if self.main:
            print(f"[{dt.datetime.now():%H:%M:%S}] {msg}", flush=True)

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

    def check_replicas(self, models: dict, step: int) -> dict[str, str]:
        """Each of `models` ({name: module}): its weights' SHA-256, the same on every rank, or TrainError. DDP
        keeps the copies equal by averaging the gradients; a parameter outside that, or an update that depends
        on the rank, would make them drift apart unseen, since only rank 0 saves. Every rank learns every
        rank's digest, so all of them raise together."""
        digests = {name: param_checksum(model) for name, model in models.items()}
        if self.world == 1:
            return digests
        for name, digest in digests.items():
            mine = torch.tensor(list(bytes.fromhex(digest)), dtype=torch.int64, device=self.device)
            every = [torch.empty_like(mine) for _ in range(self.world)]
            torch.distributed.all_gather(every, mine)
            apart = [r for r, theirs in enumerate(every) if not torch.equal(theirs, every[0])]
            if apart:
                raise TrainError(f"{name}: at step {step:,} the parameters of rank(s) {apart} differ from rank 0's; "
                                 f"the {self.world} processes no longer train one model (nothing saved at this step)")
        return digests

    def synchronize(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def close(self):
        if self.world > 1 and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
