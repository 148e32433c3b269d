import pytest

import memstored

# One name per engine: in-memory hash and ordered, file hash and ordered,
# and a sharded file hash.
ENGINES = ["*", "+", "casket.tkh", "casket.tkt", "casket.tkh#num_shards=3"]
ORDERED = {"+", "casket.tkt"}


@pytest.fixture(params=ENGINES)
def name(request, tmp_path):
    n = request.param
    return n if n in ("*", "+") else str(tmp_path / n)


@pytest.fixture
def db(name):
    d = memstored.DBM()
    assert d.Open(name, True) == memstored.Status.SUCCESS
    yield d
    if d.IsOpen():
        assert d.Close().IsOK()


def is_ordered(name):
    return any(name.endswith(o) for o in ORDERED)
