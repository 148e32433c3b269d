"""`/metrics` and `/health` on the HTTP port (`--kt-listen`), checked the way
an operator's monitoring sees them: `promtool check metrics` lints the
exposition, a real Prometheus server scrapes it, and the values agree with
memcached's `stats` on the main port."""

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from pymemcache.client.base import Client

from conftest import START_TIMEOUT, Process, Server, kt_port, stats


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    store = f"{tmp_path_factory.mktemp('prom')}/casket.tkh#num_shards=2"
    srv = Server(store, "--kt-listen", "127.0.0.1:0")
    srv.kt_port = kt_port(srv)
    yield srv
    srv.stop()


def get(url: str, accept: str = None):
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def samples(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_health(node):
    status, _, body = get(f"http://127.0.0.1:{node.kt_port}/health")
    assert status == 200
    assert body.strip() == "ok"


def test_exposition_passes_promtool_and_agrees_with_stats(node):
    c = Client(("127.0.0.1", node.port))
    for i in range(50):
        assert c.set(f"m{i}", b"v", noreply=False)
    assert c.get("m1") == b"v"
    assert c.get("absent") is None
    c.close()
    status, ctype, body = get(f"http://127.0.0.1:{node.kt_port}/metrics")
    assert status == 200
    assert ctype.startswith("text/plain; version=0.0.4"), ctype
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.fail("promtool missing: apt-get install prometheus (.ci/run does)")
    lint = subprocess.run([promtool, "check", "metrics"], input=body.encode(), capture_output=True)
    assert lint.returncode == 0, lint.stdout.decode() + lint.stderr.decode()

    m, s = samples(body), stats(node.port)
    assert m["memcached_up"] == 1
    assert m["memcached_current_items"] == float(s["curr_items"]) == 50
    assert m['memcached_commands_total{command="get",status="hit"}'] == float(s["get_hits"]) == 1
    assert m['memcached_commands_total{command="get",status="miss"}'] == float(s["get_misses"]) == 1
    assert m['memcached_commands_total{command="set",status="hit"}'] == float(s["cmd_set"]) == 50
    assert m["memcached_max_connections"] == float(s["max_connections"])
    shards = [m[f'memstored_shard_records{{db="0",shard="{i}"}}'] for i in range(2)]
    assert sum(shards) == 50 and all(n > 0 for n in shards), shards

    _, ctype, om = get(f"http://127.0.0.1:{node.kt_port}/metrics", accept="application/openmetrics-text; version=1.0.0")
    assert ctype.startswith("application/openmetrics-text"), ctype
    assert om.endswith("# EOF\n")


class Prometheus(Process):
    """A real Prometheus server scraping `target` every second, on a port the
    kernel picks (read back from its log line `Listening on`)."""

    def __init__(self, target: str):
        exe = shutil.which("prometheus")
        if exe is None:
            pytest.fail("prometheus missing: apt-get install prometheus (.ci/run does)")
        self.data = tempfile.mkdtemp(prefix="prometheus-")
        conf = os.path.join(self.data, "prometheus.yml")
        Path(conf).write_text(
            "global:\n  scrape_interval: 1s\n"
            "scrape_configs:\n  - job_name: memstored\n"
            f"    static_configs:\n      - targets: ['{target}']\n"
        )
        args = [exe, f"--config.file={conf}", f"--storage.tsdb.path={self.data}/tsdb",
                "--web.listen-address=127.0.0.1:0"]
        super().__init__("prometheus", args, stdout=subprocess.DEVNULL)
        self.port = self._wait_port()
        self._wait_ready()

    def _wait_ready(self) -> None:
        """The web port opens before the storage: /-/ready says 200 once
        queries can be answered (503 until then)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail("exited before it was ready")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=10) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as e:
                if e.code != 503:
                    raise
            time.sleep(0.05)  # Prometheus offers nothing to block on
        self.fail("never became ready")

    def _wait_port(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.fail("exited before listening")
            found = re.search(r'msg="Listening on" address=127\.0\.0\.1:(\d+)', Path(self.log_path).read_text())
            if found:
                return int(found.group(1))
            time.sleep(0.05)  # Prometheus offers nothing to block on but its log
        self.fail("never logged its port")

    def query(self, expr: str):
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=10) as r:
            reply = json.load(r)
        assert reply["status"] == "success", reply
        return reply["data"]["result"]

    def wait_value(self, expr: str, want: float) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        last = None
        while time.monotonic() < deadline:
            last = self.query(expr)
            if last and float(last[0]["value"][1]) == want:
                return
            time.sleep(0.2)  # the next scrape is up to a second away
        self.fail(f"{expr} never became {want}: last {last}")

    def stop(self):
        super().stop()
        shutil.rmtree(self.data, ignore_errors=True)


def test_a_real_prometheus_scrapes_it(node):
    prom = Prometheus(f"127.0.0.1:{node.kt_port}")
    try:
        prom.wait_value('up{job="memstored"}', 1)
        c = Client(("127.0.0.1", node.port))
        assert c.set("scraped", b"x", noreply=False)
        c.close()
        items = float(stats(node.port)["curr_items"])
        prom.wait_value("memcached_current_items", items)
        prom.wait_value('sum(memstored_shard_records{db="0"})', items)
        assert prom.query('memcached_commands_total{command="set",status="hit"}'), "counter series ingested"
    finally:
        prom.stop()
