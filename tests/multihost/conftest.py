"""Emulated hosts for multi-host tests: scripts/emulate_hosts.sh makes each host a network namespace with its own
IPC and UTS namespace (UCX then uses TCP between hosts and shared memory within one), and mpiexec launches across
them with hydra's ssh launcher pointed at that script. Needs root; skipped with the reason otherwise. Every job
has a time limit, and the namespaces are removed after each test, even when it fails."""

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ROOT / "scripts" / "emulate_hosts.sh"
PYTHON = "/usr/bin/python3"
PREFIX = "fedavgt"
CONTROL = "10.77.0.1"
JOB_TIMEOUT = 120

_e2e = importlib.util.spec_from_file_location("e2e_conftest", ROOT / "tests" / "e2e" / "conftest.py")
e2e = importlib.util.module_from_spec(_e2e)
_e2e.loader.exec_module(e2e)
APP = e2e.APP


def _why_not():
    if os.geteuid() != 0:
        return "emulating hosts needs root (ip netns, unshare)"
    probe = subprocess.run(["ip", "netns", "add", f"{PREFIX}-probe"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot create network namespaces here: {probe.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", f"{PREFIX}-probe"], capture_output=True)
    return None


class Hosts:
    def __init__(self, n):
        self.names = [f"{PREFIX}-h{i}" for i in range(n)]

    def bytes(self):
        """{host: (bytes sent, bytes received)} by each host's network interface."""
        out = subprocess.run(["bash", str(HOSTS), "bytes", PREFIX], capture_output=True, text=True, check=True)
        return {f[0]: (int(f[1]), int(f[2])) for f in (line.split() for line in out.stdout.splitlines())}

    def command(self, layout, args, supervise=None):
        """The command that runs fedavg_mpi over `layout` ([(host index, ranks)]); `supervise`:
        scripts/supervise.py's options."""
        hosts = ",".join(f"{self.names[h]}:{k}" for h, k in layout)
        cmd = ["bash", str(HOSTS), "ctl", PREFIX, "mpiexec", "-launcher", "ssh", "-launcher-exec", str(HOSTS),
               "-localhost", CONTROL, "-hosts", hosts, "-n", str(sum(k for _, k in layout)), str(APP),
               *map(str, args)]
        if supervise is not None:
            cmd = [PYTHON, str(ROOT / "scripts" / "supervise.py"), *supervise, "--", *cmd]
        return cmd

    def mpiexec(self, layout, args, timeout=JOB_TIMEOUT, supervise=None):
        """Runs fedavg_mpi over `layout` ([(host index, ranks)]) to its end."""
        env = {**os.environ, "MPIEXEC_TIMEOUT": str(timeout - 10)}
        return subprocess.run(self.command(layout, args, supervise), capture_output=True, text=True,
                              timeout=timeout, env=env)

    def cut(self, host):
        """Takes host `host`'s network link down for good, as a failed switch port would."""
        subprocess.run(["ip", "-n", self.names[host], "link", "set", "eth0", "down"], check=True, timeout=10)

    def slow(self, host, rate):
        """Caps what host `host` sends at `rate` (tc's units: 1mbit), as a slow or congested link would."""
        subprocess.run(["ip", "netns", "exec", self.names[host], "tc", "qdisc", "add", "dev", "eth0", "root", "tbf",
                        "rate", rate, "burst", "32kb", "latency", "50ms"], check=True, timeout=10)

    def processes(self, host):
        """The processes still running in host `host`'s namespaces."""
        out = subprocess.run(["ip", "netns", "pids", self.names[host]], capture_output=True, text=True, timeout=10)
        return out.stdout.split()


@pytest.fixture
def hosts(request):
    """hosts(n) -> Hosts, brought up for this test and torn down after it."""
    why = _why_not()
    if why:
        pytest.skip(why)
    made = []

    def up(n):
        subprocess.run(["bash", str(HOSTS), "up", str(n), PREFIX], check=True, capture_output=True, timeout=60)
        made.append(n)
        return Hosts(n)

    yield up
    if made:
        subprocess.run(["bash", str(HOSTS), "down", PREFIX], capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def toy(tmp_path_factory):
    """A toy corpus and its config (python/prepare.py), as in the single-host end-to-end tests."""
    return e2e.prepare_toy(tmp_path_factory.mktemp("toy"))
