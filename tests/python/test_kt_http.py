"""Kyoto Tycoon's HTTP interface on memstored's `--kt-listen` port, through
an ordinary HTTP client: Python's urllib (stdlib only).

TSV-RPC is called as spex.html describes it, with the column encodings done
by the standard library (base64, quopri, urllib.parse) rather than by
memstored's code: each colenc in requests, replies decoded per their
Content-Type; then the RESTful interface (PUT/GET/HEAD/DELETE, X-Kt-Mode,
X-Kt-Xt).
"""

import base64
import binascii
import quopri
import time
import urllib.error
import urllib.parse
import urllib.request
from email.utils import formatdate, parsedate_to_datetime

import pytest

from conftest import Server, kt_port


@pytest.fixture(scope="module")
def kt():
    srv = Server("*", "--kt-listen", "127.0.0.1:0")
    yield f"http://127.0.0.1:{kt_port(srv)}"
    srv.stop()


ENCODE = {
    "B": base64.b64encode,
    # istext=False: line ends are data (=0A), so every "=\n" is a soft break.
    "Q": lambda b: binascii.b2a_qp(b, quotetabs=True, istext=False).replace(b"=\n", b""),
    "U": lambda b: urllib.parse.quote_from_bytes(b, safe="").encode(),
}
DECODE = {
    "B": base64.b64decode,
    "Q": quopri.decodestring,
    "U": lambda b: urllib.parse.unquote_to_bytes(b.decode()),
}


def fetch(req):
    """(status, headers, body) of a request, error statuses included."""
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def parse_tsv(headers, body):
    enc = None
    for attr in headers.get("Content-Type", "").split(";")[1:]:
        name, _, value = attr.strip().partition("=")
        if name == "colenc":
            enc = value
    out = {}
    for line in body.split(b"\n"):
        if b"\t" in line:
            k, v = line.split(b"\t", 1)
            out[DECODE[enc](k) if enc else k] = DECODE[enc](v) if enc else v
    return out


def rpc(base, name, records, enc=None):
    """POST /rpc/NAME with a TSV body in `enc`; (status, output map)."""
    code = ENCODE[enc] if enc else (lambda b: b)
    body = b"".join(code(k) + b"\t" + code(v) + b"\n" for k, v in records.items())
    ctype = "text/tab-separated-values" + (f"; colenc={enc}" if enc else "")
    req = urllib.request.Request(f"{base}/rpc/{name}", data=body, method="POST",
                                 headers={"Content-Type": ctype})
    status, headers, out = fetch(req)
    if enc:
        assert headers["Content-Type"].endswith(f"colenc={enc}"), headers["Content-Type"]
    return status, parse_tsv(headers, out)


@pytest.mark.parametrize("enc", [None, "B", "Q", "U"])
def test_tsv_rpc_in_each_colenc(kt, enc):
    key = b"key %s" % (enc or "plain").encode()
    value = bytes(range(256)) if enc else b"tokyo"
    assert rpc(kt, "set", {b"key": key, b"value": value}, enc) == (200, {})
    status, out = rpc(kt, "get", {b"key": key}, enc)
    assert (status, out[b"value"]) == (200, value)
    assert rpc(kt, "add", {b"key": key, b"value": b"x"}, enc)[0] == 450
    status, out = rpc(kt, "get_bulk", {b"_" + key: b"", b"_absent": b""}, enc)
    assert out[b"num"] == b"1" and out[b"_" + key] == value
    status, out = rpc(kt, "remove", {b"key": key}, enc)
    assert status == 200
    status, out = rpc(kt, "get", {b"key": key}, enc)
    assert status == 450 and b"ERROR" in out


def test_query_string_and_status_codes(kt):
    q = urllib.parse.urlencode({"key": "q k", "value": "v", "xt": "600"})
    assert fetch(f"{kt}/rpc/set?{q}")[0] == 200
    status, headers, body = fetch(f"{kt}/rpc/get?key=q%20k")
    out = parse_tsv(headers, body)
    assert status == 200 and out[b"value"] == b"v"
    assert abs(int(out[b"xt"]) - (time.time() + 600)) < 5
    status, headers, body = fetch(f"{kt}/rpc/increment?key=n&num=3")
    assert parse_tsv(headers, body)[b"num"] == b"3"
    assert fetch(f"{kt}/rpc/set?value=no-key")[0] == 400
    assert fetch(f"{kt}/rpc/no_such_procedure")[0] == 501
    status, headers, body = fetch(f"{kt}/rpc/report")
    assert status == 200 and b"serv_conn_count" in parse_tsv(headers, body)


def test_restful_interface(kt):
    url = f"{kt}/{urllib.parse.quote('rest key/1', safe='')}"
    put = urllib.request.Request(url, data=b"rest value", method="PUT")
    assert fetch(put)[0] == 201
    status, headers, body = fetch(url)
    assert (status, body, headers.get("X-Kt-Xt")) == (200, b"rest value", None)
    head = fetch(urllib.request.Request(url, method="HEAD"))
    assert (head[0], head[1]["Content-Length"]) == (200, "10")
    add = urllib.request.Request(url, data=b"x", method="PUT", headers={"X-Kt-Mode": "add"})
    assert fetch(add)[0] == 450
    expires = formatdate(time.time() + 3600, usegmt=True)
    put = urllib.request.Request(url, data=b"v2", method="PUT", headers={"X-Kt-Xt": expires})
    assert fetch(put)[0] == 201
    status, headers, body = fetch(url)
    assert parsedate_to_datetime(headers["X-Kt-Xt"]) == parsedate_to_datetime(expires)
    assert fetch(urllib.request.Request(url, method="DELETE"))[0] == 204
    assert fetch(urllib.request.Request(url, method="DELETE"))[0] == 404
    assert fetch(url)[0] == 404
