"""Tables in an S3-compatible object store: a real moto server (moto[server]
from PyPI, no Docker) started on loopback by the fixture and stopped after.
Each answer is checked against the same files read locally."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from conftest import REPO, _recon_bin

import boto3  # requirements-test.txt (with moto): missing is a failure, not a skip

BUCKET = "recon-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Moto:
    """A moto S3 server on loopback. With `auth`, it checks signatures
    against IAM keys it hands out (INITIAL_NO_AUTH_ACTION_COUNT lets the
    fixture create them)."""

    def __init__(self, auth: bool = False):
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ)
        if auth:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
        exe = Path(sys.executable).with_name("moto_server")
        self.proc = subprocess.Popen(
            [str(exe), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError("moto_server did not start")
        self.key_id, self.secret = "testing", "testing"
        if auth:
            iam = boto3.client("iam", endpoint_url=self.endpoint, region_name="us-east-1",
                               aws_access_key_id="x", aws_secret_access_key="y")
            iam.create_user(UserName="recon")
            iam.put_user_policy(UserName="recon", PolicyName="all", PolicyDocument=json.dumps({
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
            key = iam.create_access_key(UserName="recon")["AccessKey"]
            self.key_id, self.secret = key["AccessKeyId"], key["SecretAccessKey"]
        self.s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                               aws_access_key_id=self.key_id, aws_secret_access_key=self.secret)
        self.s3.create_bucket(Bucket=BUCKET)

    def upload(self, local: Path, prefix: str) -> str:
        local = Path(local)
        files = [local] if local.is_file() else sorted(p for p in local.rglob("*") if p.is_file())
        for p in files:
            rel = p.name if local.is_file() else p.relative_to(local).as_posix()
            self.s3.upload_file(str(p), BUCKET, f"{prefix}/{rel}")
        return f"s3://{BUCKET}/{prefix}"

    def env(self, **extra) -> dict:
        env = dict(os.environ)
        env.update(AWS_ACCESS_KEY_ID=self.key_id, AWS_SECRET_ACCESS_KEY=self.secret,
                   AWS_REGION="us-east-1")
        env.update(extra)
        return env

    def flags(self):
        return ["--storage-option", f"aws_endpoint={self.endpoint}",
                "--storage-option", "aws_allow_http=true"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def moto():
    m = Moto()
    yield m
    m.stop()


def _diff(moto, source, target, *flags, env=None):
    p = subprocess.run([_recon_bin(), "diff", str(source), str(target), "--json", *flags,
                        *moto.flags()], capture_output=True, text=True, env=env or moto.env())
    return p


def _answer(report):
    """What must not depend on where the files are read from."""
    return (report["exact_match"], report["source_rows"], report["target_rows"],
            report["source_only_rows"], report["target_only_rows"])


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
        with open(d / f"{side}.csv", "rb") as f, __import__("gzip").open(d / f"{side}.csv.gz", "wb") as g:
            shutil.copyfileobj(f, g)
        with open(d / f"{side}.ndjson", "w") as f:
            for row in t.to_pylist():
                f.write(json.dumps(row) + "\n")
    return d


@pytest.mark.parametrize("ext", ["parquet", "arrow", "csv", "csv.gz", "ndjson"])
def test_each_format_gives_the_local_answer(moto, formats, ext):
    url = moto.upload(formats, f"formats-{ext.replace('.', '-')}")
    local = _diff(moto, formats / f"source.{ext}", formats / f"target.{ext}")
    remote = _diff(moto, f"{url}/source.{ext}", f"{url}/target.{ext}")
    assert local.returncode == 1, local.stderr
    assert remote.returncode == 1, remote.stderr
    lr, rr = json.loads(local.stdout), json.loads(remote.stdout)
    assert _answer(rr) == _answer(lr)
    assert rr["source_only_rows"] == 1 and rr["target_only_rows"] == 1
    fetched = rr["inputs"]["source"]["fetched"]
    assert fetched["bytes"] > 0 and fetched["requests"] > 0


def test_folders_and_globs_give_the_local_answer(moto, tmp_path):
    # A Hive-partitioned folder on each side; one row differs in one partition.
    for side, bump in (("old", 0), ("new", 1)):
        for day in ("2024-01-01", "2024-01-02"):
            p = tmp_path / side / f"day={day}"
            p.mkdir(parents=True)
            pq.write_table(pa.table({"id": [1, 2, 3], "v": [10, 20, 30 + (bump if day.endswith("2") else 0)]}),
                           p / "part-0.parquet")
        (tmp_path / side / "_SUCCESS").write_text("")
    old = moto.upload(tmp_path / "old", "lake/old")
    new = moto.upload(tmp_path / "new", "lake/new")
    local = json.loads(_diff(moto, tmp_path / "old", tmp_path / "new").stdout)
    remote = _diff(moto, old + "/", new + "/")
    assert remote.returncode == 1, remote.stderr
    assert _answer(json.loads(remote.stdout)) == _answer(local)
    assert json.loads(remote.stdout)["inputs"]["source"]["files"] == 2
    glob = _diff(moto, f"{old}/day=*/*.parquet", f"{new}/day=*/*.parquet")
    assert glob.returncode == 1, glob.stderr
    assert _answer(json.loads(glob.stdout)) == _answer(local)
    one_day = _diff(moto, f"{old}/day=2024-01-01/*.parquet", f"{new}/day=2024-01-01/*.parquet")
    assert one_day.returncode == 0, one_day.stderr


def test_delta_tables_read_in_place_with_pinned_versions(moto):
    base = REPO / "testdata" / "delta"
    for name in ("orders", "table-with-dv-small"):
        url = moto.upload(base / name, f"delta/{name}")
        for at in ("", "@0"):
            if name != "orders" and at:
                continue
            p = _diff(moto, f"delta:{url}{at}", f"delta:{base / name}{at}")
            assert p.returncode == 0, p.stderr
            r = json.loads(p.stdout)
            assert r["exact_match"] is True
            assert r["inputs"]["source"]["fetched"]["bytes"] > 0
    # The folder itself is refused, naming the table to read instead.
    p = _diff(moto, f"s3://{BUCKET}/delta/orders", base / "orders")
    assert p.returncode == 2
    assert "delta:s3://recon-test/delta/orders" in p.stderr


def test_iceberg_tables_read_in_place_with_pinned_snapshots(moto, tmp_path):
    base = REPO / "testdata" / "iceberg"
    fixtures = json.loads((base / "fixtures.json").read_text())
    for name in ("orders", "orders_posdel", "orders_promoted", "impala_orc_complex", "impala_orc_posdel"):
        url = moto.upload(base / name, f"iceberg/{name}")
        p = _diff(moto, f"iceberg:{url}", f"iceberg:{base / name}")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["exact_match"] is True
    # Every snapshot of `orders`, pinned, against the same snapshot read locally.
    snapshots = [m["current_snapshot_id"] for m in fixtures["orders"]["metadata_files"]
                 if m["current_snapshot_id"] is not None]
    assert len(snapshots) >= 2
    for sid in snapshots:
        p = _diff(moto, f"iceberg:s3://{BUCKET}/iceberg/orders@{sid}", f"iceberg:{base / 'orders'}@{sid}")
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert str(sid) in r["inputs"]["source"]["snapshot"]
    # Different snapshots differ, read remotely as locally.
    first, last = snapshots[0], snapshots[2]  # one schema, different rows
    local = _diff(moto, f"iceberg:{base / 'orders'}@{first}", f"iceberg:{base / 'orders'}@{last}")
    remote = _diff(moto, f"iceberg:s3://{BUCKET}/iceberg/orders@{first}",
                   f"iceberg:s3://{BUCKET}/iceberg/orders@{last}")
    assert local.returncode == 1, local.stderr
    assert remote.returncode == 1, remote.stderr
    assert _answer(json.loads(remote.stdout)) == _answer(json.loads(local.stdout))
    # ORC stripes and ORC position deletes read by ranges, and the evidence
    # rows fetched back from them by position, as locally.
    orc = [s["snapshot_id"] for s in fixtures["impala_orc_posdel"]["snapshots"]]
    answers = []
    for where in (f"s3://{BUCKET}/iceberg/impala_orc_posdel", base / "impala_orc_posdel"):
        out = tmp_path / f"orc-evidence-{len(answers)}"
        p = _diff(moto, f"iceberg:{where}@{orc[0]}", f"iceberg:{where}@{orc[1]}", "-o", str(out))
        assert p.returncode == 1, p.stderr
        ids = sorted(pq.read_table(out / "source_only.parquet").column("id").to_pylist())
        answers.append((_answer(json.loads(p.stdout)), ids))
    assert answers[0] == answers[1]
    assert answers[0][1] == list(range(1, 20, 2))


def test_a_targeted_second_pass_fetches_only_the_pages_it_reads(moto, tmp_path):
    n = 2_000_000
    ids = pa.array(range(n), pa.int64())
    src = pa.table({"id": ids, "v": pa.array([i * 7 for i in range(n)], pa.int64())})
    v = src.column("v").to_pylist()
    v[1_234_567] += 1
    tgt = pa.table({"id": ids, "v": pa.array(v, pa.int64())})
    for side, t in (("source", src), ("target", tgt)):
        pq.write_table(t, tmp_path / f"{side}.parquet", row_group_size=1_000_000,
                       data_page_size=64 << 10, write_page_index=True, use_dictionary=False)
    url = moto.upload(tmp_path / "source.parquet", "big")
    url_t = moto.upload(tmp_path / "target.parquet", "big")
    p = _diff(moto, f"{url}/source.parquet", f"{url_t}/target.parquet", "--passes", "2",
              "-o", str(tmp_path / "out"))
    assert p.returncode == 1, p.stderr
    r = json.loads(p.stdout)
    size = (tmp_path / "source.parquet").stat().st_size
    for side in ("source", "target"):
        f = r["inputs"][side]["fetched"]
        print(side, f, "file", size)
        assert f["pass1_bytes"] >= size * 0.9  # pass 1 reads the whole file
        assert f["pass2_bytes"] is not None and f["pass2_bytes"] < size / 20
        assert f["evidence_bytes"] < size / 20
    assert r["source_only_rows"] == 1 and r["target_only_rows"] == 1


def test_a_row_group_larger_than_the_prefetch_budget_is_read_in_windows(moto, tmp_path):
    # One 48 MB row group of incompressible values: more than a read may
    # hold, so each column chunk is read through a moving window.
    import random
    rnd = random.Random(7)
    n = 3_000_000
    t = pa.table({"a": pa.array([rnd.getrandbits(63) for _ in range(n)], pa.int64()),
                  "b": pa.array([rnd.getrandbits(63) for _ in range(n)], pa.int64())})
    pq.write_table(t, tmp_path / "wide.parquet", row_group_size=n, compression="none",
                   use_dictionary=False)
    size = (tmp_path / "wide.parquet").stat().st_size
    assert size > 40 << 20
    url = moto.upload(tmp_path / "wide.parquet", "wide")
    # 128 MiB over 2 threads gives each read an 8 MiB prefetch budget.
    p = _diff(moto, f"{url}/wide.parquet", tmp_path / "wide.parquet", "--passes", "1",
              "--memory-limit", "128MiB", "-j", "2")
    assert p.returncode == 0, p.stderr
    f = json.loads(p.stdout)["inputs"]["source"]["fetched"]
    # Every byte once (the footer aside), in windows: no chunk fetched twice.
    assert size * 0.99 <= f["bytes"] <= size * 1.01, f
    assert f["requests"] > 4, f


def test_missing_objects_buckets_and_bad_options_are_one_line_errors(moto, formats, tmp_path):
    local = formats / "source.parquet"
    cases = {
        f"s3://{BUCKET}/no/such.parquet": "not found",
        "s3://recon-no-such-bucket/x.parquet": "no such bucket",
    }
    for url, why in cases.items():
        out = tmp_path / "out"
        p = _diff(moto, url, local, "-o", str(out))
        assert p.returncode == 2, p.stderr
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and url in lines[0] and why in lines[0], p.stderr
        assert not out.exists()
    p = _diff(moto, f"s3://{BUCKET}/x.parquet", local, "--storage-option", "aws_endpoitn=x")
    assert p.returncode == 2 and "aws_endpoitn" in p.stderr


def test_wrong_credentials_are_refused_without_printing_them(tmp_path, formats):
    m = Moto(auth=True)
    try:
        url = m.upload(formats / "source.parquet", "auth")
        good = _diff(m, f"{url}/source.parquet", formats / "source.parquet")
        assert good.returncode == 0, good.stderr
        secret = "wrongSecretValue1234"
        bad = _diff(m, f"{url}/source.parquet", formats / "source.parquet",
                    env=m.env(AWS_ACCESS_KEY_ID="AKIAWRONGKEY", AWS_SECRET_ACCESS_KEY=secret))
        assert bad.returncode == 2
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert "s3://recon-test/auth/source.parquet" in bad.stderr
        assert ("denied" in bad.stderr) or ("authenticated" in bad.stderr), bad.stderr
        assert secret not in bad.stderr and m.secret not in bad.stderr
    finally:
        m.stop()


def test_a_server_stopped_mid_run_is_an_error_that_leaves_nothing(tmp_path):
    m = Moto()
    try:
        n = 3_000_000
        t = pa.table({"id": pa.array(range(n), pa.int64()),
                      "s": pa.array([f"value-{i}" for i in range(n)])})
        pq.write_table(t, tmp_path / "a.parquet", row_group_size=100_000)
        url = m.upload(tmp_path / "a.parquet", "stop")
        temp = tmp_path / "tmp"
        temp.mkdir()
        out = tmp_path / "out"
        proc = subprocess.Popen(
            [_recon_bin(), "diff", f"{url}/a.parquet", f"{url}/a.parquet", "-j", "1",
             "--temp-dir", str(temp), "-o", str(out), *m.flags()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=m.env())
        # Stop the server once recon has opened the files and is reading.
        time.sleep(1.0)
        assert proc.poll() is None, "the run ended before the server was stopped"
        m.stop()
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, err
        assert len(err.strip().splitlines()) == 1, err
        assert f"{url}/a.parquet" in err
        assert list(temp.iterdir()) == []
        assert not out.exists()
    finally:
        m.stop()


def test_python_takes_urls_and_storage_options(moto, formats):
    import recon
    url = moto.upload(formats, "python")
    os.environ.update(AWS_ACCESS_KEY_ID=moto.key_id, AWS_SECRET_ACCESS_KEY=moto.secret,
                      AWS_REGION="us-east-1")
    d = recon.diff(f"{url}/source.parquet", f"{url}/target.parquet",
                   storage_options={"aws_endpoint": moto.endpoint, "aws_allow_http": True})
    assert not d.exact_match
    assert d.source_only_rows == 1 and d.target_only_rows == 1


def test_an_object_replaced_mid_run_is_an_error_not_a_mixed_answer(tmp_path):
    # Deterministic, not a race: the target is a FIFO, which recon spools
    # after it has opened the source object (and pinned its ETag). Opening
    # the FIFO to write returns once recon holds it open to read; only then
    # is the object replaced, and only then is the target written.
    m = Moto()
    try:
        n = 200_000
        t = pa.table({"id": pa.array(range(n), pa.int64()),
                      "s": pa.array([f"value-{i}" for i in range(n)])})
        pq.write_table(t, tmp_path / "a.parquet", row_group_size=50_000)
        pq.write_table(t.slice(1), tmp_path / "b.parquet", row_group_size=50_000)
        url = m.upload(tmp_path / "a.parquet", "replace")
        temp = tmp_path / "tmp"
        temp.mkdir()
        out = tmp_path / "out"
        fifo = tmp_path / "target.parquet"
        os.mkfifo(fifo)
        proc = subprocess.Popen(
            [_recon_bin(), "diff", f"{url}/a.parquet", fifo, "-j", "1",
             "--temp-dir", str(temp), "-o", str(out), *m.flags()],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=m.env())
        with open(fifo, "wb") as w:  # returns once recon reads the FIFO
            m.s3.upload_file(str(tmp_path / "b.parquet"), BUCKET, "replace/a.parquet")
            w.write((tmp_path / "a.parquet").read_bytes())
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, err
        assert len(err.strip().splitlines()) == 1, err
        assert f"{url}/a.parquet" in err and "changed during the run" in err, err
        assert list(temp.iterdir()) == []
        assert not out.exists()
    finally:
        m.stop()


def test_two_machines_name_the_differing_rows_with_one_table_in_the_object_store(moto, tmp_path):
    # Machine A holds the source locally; machine B's target is only in the
    # object store. They exchange fingerprints with sketches, then each
    # extracts its differing rows; the extracts diff like the tables.
    import recon
    n = 30_000
    ids = [i % 9_000 for i in range(n)]
    vals = [f"v{i % 50}" for i in range(n)]
    src = pa.table({"id": pa.array(ids, pa.int64()), "v": vals})
    changed = [v + "!" if i % 1_009 == 0 else v for i, v in enumerate(vals)]
    tgt = pa.table({"id": pa.array(ids[:-5] + [ids[10]] * 12, pa.int64()),
                    "v": changed[:-5] + [changed[10]] * 12})
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pq.write_table(src, a / "orders.parquet", row_group_size=7_000)
    pq.write_table(tgt, tmp_path / "orders.parquet", row_group_size=7_000)
    url = moto.upload(tmp_path / "orders.parquet", "machine-b") + "/orders.parquet"
    os.environ.update(AWS_ACCESS_KEY_ID=moto.key_id, AWS_SECRET_ACCESS_KEY=moto.secret,
                      AWS_REGION="us-east-1")
    store = {"aws_endpoint": moto.endpoint, "aws_allow_http": True}
    fa = recon.fingerprint(a / "orders.parquet", sketch=300)
    assert fa.has_sketch
    fa.save(a / "orders.fp.json")
    assert (a / "orders.fp.sketch").is_file()
    recon.fingerprint(url, sketch=300, storage_options=store).save(b / "orders.fp.json")
    cmp = recon.compare_fingerprints(a / "orders.fp.json", b / "orders.fp.json")
    assert not cmp.fingerprints_match
    digests = cmp.digests
    assert 0 < len(digests) < 100
    assert cmp.to_dict()["sketch"]["decoded"] is True
    cmp.save_digests(tmp_path / "digests.json")
    xa = recon.extract(a / "orders.parquet", tmp_path / "digests.json", a / "orders.fp.json",
                       a / "x.parquet")
    xb = recon.extract(url, cmp, recon.Fingerprint.load(b / "orders.fp.json"), b / "x.parquet",
                       storage_options=store)
    assert (xa["side"], xb["side"]) == ("source", "target")
    direct = recon.diff(a / "orders.parquet", url, storage_options=store)
    small = recon.diff(a / "x.parquet", b / "x.parquet")
    assert not direct.exact_match
    assert (small.source_only_rows, small.target_only_rows) == \
        (direct.source_only_rows, direct.target_only_rows)
    assert sum(c for _, c in digests if c > 0) == direct.source_only_rows
    assert -sum(c for _, c in digests if c < 0) == direct.target_only_rows
    rows = lambda t: sorted(zip(t.column("id").to_pylist(), t.column("v").to_pylist()))
    assert rows(small.source_only()) == rows(direct.source_only())
    assert rows(small.target_only()) == rows(direct.target_only())
    # Fingerprints without sketches cannot name rows, and say so.
    plain = recon.compare_fingerprints(recon.fingerprint(a / "orders.parquet"), b / "orders.fp.json")
    with pytest.raises(recon.UsageError, match="sketch"):
        plain.digests
