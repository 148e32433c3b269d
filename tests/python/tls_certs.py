"""Certificates for the TLS tests, made with the `openssl` command at test
time (scripts/install-test-deps.sh installs it): a CA, a server certificate
(for localhost and 127.0.0.1) and a client certificate signed by it, and a
second CA the servers do not trust with a client certificate of its own
(`other/`)."""

import os
import subprocess
import tempfile

import pytest


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def issue(cwd, name, usage):
    """A key and a certificate for `name`, signed by the test CA in `cwd`."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=cwd)
    with open(os.path.join(cwd, f"{name}.ext"), "w") as f:
        f.write(f"subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage={usage}\n"
                "basicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.pem", "-extfile", f"{name}.ext", cwd=cwd)


@pytest.fixture(scope="module")
def certs():
    """A CA, a server certificate and a client certificate, as PEM files."""
    d = tempfile.mkdtemp(prefix="memstored-tls-")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=memstored test CA",
            cwd=d)
    issue(d, "server", "serverAuth")
    issue(d, "client", "clientAuth")
    # A second CA the server does not trust, with its own client.
    other = os.path.join(d, "other")
    os.mkdir(other)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=other CA", cwd=other)
    issue(other, "client", "clientAuth")
    yield d
