"""Hosts for multi-host tests and benchmarks, made of network namespaces.

Each host is a network namespace with its own loopback, one veth link
(eth0, 10.231.0.<i+1>/24) to a bridge in a further namespace, and its own
host name (a UTS namespace entered
with every command). Nothing is added to the machine's own network
namespace. mpirun runs in host 0 and starts its daemons on the others
through a launch agent that enters a host's namespaces where it would
ssh; MPI's traffic then crosses the links over TCP, as between machines.
The file system is shared, as NFS would share it.

Needs root (CI runs as root) and iproute2's `ip`; a machine where
namespaces cannot be made fails with the reason.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

SUBNET = "10.231.0.0/24"
PREFIX = "fnnmh"


class NetnsError(Exception):
    pass


def _ip(*args, check=True):
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def _remove_namespace(name):
    pids = _ip("netns", "pids", name, check=False).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    _ip("netns", "del", name, check=False)


def remove_stale_namespaces():
    """Namespaces a killed run left (their name holds its pid)."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        m = re.match(rf"({PREFIX}(\d+)-\w+)", line)
        if m and not Path(f"/proc/{m.group(2)}").exists():
            _remove_namespace(m.group(1))


class NetnsHosts:
    """`with NetnsHosts(3) as hosts:` makes the hosts; leaving removes them
    with every process still inside."""

    def __init__(self, count):
        self.count = count
        self.tag = f"{PREFIX}{os.getpid()}"
        self.switch = f"{self.tag}-sw"
        self.names = [f"{self.tag}-h{i}" for i in range(count)]
        self.addresses = [f"10.231.0.{i + 1}" for i in range(count)]
        self.dir = None

    def __enter__(self):
        if shutil.which("ip") is None:
            raise NetnsError("iproute2's ip is missing (apt-get install iproute2)")
        if os.geteuid() != 0:
            raise NetnsError("network namespaces need root")
        remove_stale_namespaces()
        try:
            self._create()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _create(self):
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "set", "lo", "up")
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, (name, address) in enumerate(zip(self.names, self.addresses)):
            _ip("netns", "add", name)
            _ip("link", "add", "eth0", "netns", name, "type", "veth", "peer", "name",
                f"port{i}", "netns", self.switch)
            _ip("-n", self.switch, "link", "set", f"port{i}", "master", "br0", "up")
            _ip("-n", name, "link", "set", "lo", "up")
            _ip("-n", name, "addr", "add", f"{address}/24", "dev", "eth0")
            _ip("-n", name, "link", "set", "eth0", "up")
        self.dir = Path(tempfile.mkdtemp(prefix=f"{self.tag}-"))
        (self.dir / "hostfile").write_text(
            "".join(f"{address} slots=1\n" for address in self.addresses))
        cases = "".join(f"  {address}) ns={name} ;;\n"
                        for name, address in zip(self.names, self.addresses))
        agent = self.dir / "launch-agent"
        agent.write_text(f"""#!/bin/sh
# mpirun's launch agent in place of ssh: AGENT HOST COMMAND...
host=$1; shift
case $host in
{cases}  *) echo "launch-agent: unknown host $host" >&2; exit 1 ;;
esac
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $ns; $*"
""")
        agent.chmod(0o755)

    def __exit__(self, *exc):
        for name in [*self.names, self.switch]:
            _remove_namespace(name)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def on_host(self, index, cmd):
        """cmd run on host `index`, under that host's name."""
        name = self.names[index]
        return ["ip", "netns", "exec", name, "unshare", "--uts", "/bin/sh", "-c",
                f'hostname {name}; exec "$@"', "sh", *map(str, cmd)]

    def mpirun(self, mpirun, flags, np_, cmd):
        """mpirun started on host 0 over all hosts, one rank per host."""
        return self.on_host(0, [
            mpirun, *flags, "--hostfile", self.dir / "hostfile", "-np", np_,
            "--mca", "plm_rsh_agent", self.dir / "launch-agent",
            "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", SUBNET,
            "--mca", "oob_tcp_if_include", SUBNET, *cmd])

    def link_bytes(self):
        """Bytes received and sent on each host's link so far."""
        counts = []
        for name in self.names:
            link = json.loads(_ip("-j", "-s", "-n", name, "link", "show", "dev",
                                  "eth0").stdout)[0]
            stats = link.get("stats64", link.get("stats"))
            counts.append((stats["rx"]["bytes"], stats["tx"]["bytes"]))
        return counts
