"""PostgreSQL sources against a real server: initdb in a temp directory, a
server on loopback started and stopped here (as the `postgres` user when
the tests run as root: initdb refuses root), tables written with psycopg and
exported to Parquet by an independent writer (pyarrow from psycopg's rows).
The recon CLI reads the server and the export; every answer is checked."""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import _recon_bin, run_cli

import psycopg  # requirements-test.txt: missing is a failure, not a skip

PASSWORD = "s3cret-admin"
USER = "recon_admin"


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        if os.environ.get("CI"):
            raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql)")
        pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql", allow_module_level=True)
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="recon-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        # initdb and postgres refuse root: run them as an unprivileged user.
        self.run_as = []
        if os.geteuid() == 0:
            user = "postgres" if _has_user("postgres") else "nobody"
            pw = pwd.getpwnam(user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self.run_as = ["runuser", "-u", user, "--"]
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.run_as:
            shutil.chown(pwfile, user=self.run_as[2])
        self._run(self.bin / "initdb", "-D", self.data, "-U", USER, "--pwfile", pwfile,
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")
        # A test CA and a server certificate for 127.0.0.1, so TLS is tested too.
        self.cert = self.root / "ca.crt"
        key = self.root / "server.key"
        server_crt = self.root / "server.crt"
        ext = self.root / "ext.cnf"
        ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
        for cmd in (
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
             "/CN=recon test CA", "-keyout", self.root / "ca.key", "-out", self.cert],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key,
             "-out", self.root / "server.csr"],
            ["x509", "-req", "-in", self.root / "server.csr", "-CA", self.cert, "-CAkey",
             self.root / "ca.key", "-CAcreateserial", "-days", "2", "-extfile", ext, "-out",
             server_crt],
        ):
            subprocess.run(["openssl", *map(str, cmd)], check=True, capture_output=True)
        key.chmod(0o600)
        if self.run_as:
            shutil.chown(key, user=self.run_as[2])
            shutil.chown(server_crt, user=self.run_as[2])
        self._run(self.bin / "pg_ctl", "-D", self.data, "-w", "-l", self.root / "log", "start", "-o",
                  f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c max_connections=40 -c TimeZone=America/New_York -c ssl=on "
                  f"-c ssl_cert_file={server_crt} -c ssl_key_file={key}")

    def _run(self, *args) -> None:
        p = subprocess.run([*self.run_as, *map(str, args)], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {p.stdout}\n{p.stderr}")

    def stop(self) -> None:
        subprocess.run([*self.run_as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m",
                        "immediate", "stop"], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, table: str | None = None, password: str | None = PASSWORD, **params) -> str:
        auth = USER if password is None else f"{USER}:{password}"
        q = dict(params)
        if table:
            q["table"] = table
        query = "&".join(f"{k}={v}" for k, v in q.items())
        return f"postgres://{auth}@127.0.0.1:{self.port}/postgres" + (f"?{query}" if query else "")

    def connect(self):
        return psycopg.connect(host="127.0.0.1", port=self.port, user=USER, password=PASSWORD,
                               dbname="postgres", autocommit=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


@pytest.fixture(scope="module")
def server():
    s = Server()
    try:
        yield s
    finally:
        s.stop()


# Every type the issue names, NULLs in each column, and the values that
# trip converters: NaN and -0.0, a 20-digit fraction in unconstrained
# numeric, a 50-digit numeric, char padding, arrays with NULL elements.
TYPES_DDL = """
DROP TABLE IF EXISTS types; DROP TYPE IF EXISTS mood;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE types (
  id int4, i2 int2, i8 int8, f4 float4, f8 float8, b bool,
  n12 numeric(12,2), nu numeric, n50 numeric(50,10),
  t text, vc varchar(10), ch char(5), by bytea,
  d date, tm time, ts timestamp, tz timestamptz,
  u uuid, j json, jb jsonb, ia int4[], ta text[], m mood
);
"""


def _type_rows():
    tz = dt.timezone(dt.timedelta(hours=5, minutes=30))
    rows = [
        (1, 1, 1 << 40, 1.5, 0.1, True, decimal.Decimal("1234567890.12"),
         decimal.Decimal("0.33333333333333333333"), decimal.Decimal("1" * 40 + "." + "0123456789"),
         "héllo", "short", "ab", b"\x00\xffbin", dt.date(1969, 12, 31), dt.time(23, 59, 59, 999999),
         dt.datetime(2024, 2, 29, 12, 0, 0, 1), dt.datetime(2024, 3, 10, 2, 30, tzinfo=tz),
         uuid.UUID("12345678-9abc-def0-0123-456789abcdef"), '{"b": 1, "a": [1, 2]}',
         '{"b": 1, "a": [1, 2]}', [1, None, 3], ["x", None], "happy"),
        (2, -32768, -(1 << 63), float("nan"), -0.0, False, decimal.Decimal("-0.01"),
         decimal.Decimal("-123456789012345.5"), decimal.Decimal("-0.0000000001"),
         "", "", "abcde", b"", dt.date(2262, 1, 1), dt.time(0, 0), dt.datetime(1900, 1, 1),
         dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), uuid.UUID(int=0), "[]", "{}", [], [],
         "sad"),
        (3,) + (None,) * 22,
    ]
    return rows


def _export_types(conn, path: Path) -> None:
    """The table as Parquet, written by pyarrow from psycopg's rows: json,
    jsonb and uuid through their text, everything else as psycopg gives it."""
    cur = conn.execute(
        "SELECT id, i2, i8, f4, f8, b, n12, nu, n50, t, vc, ch, by, d, tm, ts, tz, u::text, "
        "j::text, jb::text, ia, ta, m::text FROM types")
    rows = cur.fetchall()
    schema = pa.schema([
        ("id", pa.int32()), ("i2", pa.int16()), ("i8", pa.int64()), ("f4", pa.float32()),
        ("f8", pa.float64()), ("b", pa.bool_()), ("n12", pa.decimal128(12, 2)),
        ("nu", pa.decimal128(38, 20)), ("n50", pa.decimal256(50, 10)), ("t", pa.string()),
        ("vc", pa.string()), ("ch", pa.string()), ("by", pa.binary()), ("d", pa.date32()),
        ("tm", pa.time64("us")), ("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")),
        ("u", pa.string()), ("j", pa.string()), ("jb", pa.string()),
        ("ia", pa.list_(pa.int32())), ("ta", pa.list_(pa.string())), ("m", pa.string()),
    ])
    cols = list(zip(*rows))
    pq.write_table(pa.Table.from_arrays(
        [pa.array(list(c), type=f.type) for c, f in zip(cols, schema)], schema=schema), path)


@pytest.fixture(scope="module")
def types_table(server, tmp_path_factory):
    with server.connect() as conn:
        conn.execute(TYPES_DDL)
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO types VALUES (" + ", ".join(["%s"] * 23) + ")", _type_rows())
        path = tmp_path_factory.mktemp("pg") / "types.parquet"
        _export_types(conn, path)
    return path


def test_every_type_matches_its_independent_export(server, types_table):
    for conns in ("1", "4"):
        p = run_cli("diff", server.url("public.types"), str(types_table), "--json",
                    "--connections", conns)
        assert p.returncode == 0, p.stderr + p.stdout
        report = json.loads(p.stdout)
        assert report["exact_match"] is True
        src = report["inputs"]["source"]
        assert src["format"] == "postgres"
        assert src["rows"] == 3
        db = src["database"]
        assert db["server_version"].split()[0][:2].isdigit()
        assert db["query"].startswith('SELECT "id", "i2"')
        assert "s3cret" not in p.stdout + p.stderr


def test_the_types_recon_reads_are_the_exact_arrow_types(server, types_table):
    p = run_cli("schema", server.url("public.types"), str(types_table), "--json")
    assert p.returncode == 0, p.stderr
    text = p.stdout
    # unconstrained numeric: the scale its values need (20 digits after the
    # point, 15 before)
    assert "decimal128(35, 20)" in text.lower() or "Decimal128(35, 20)" in text, text


@pytest.fixture(scope="module")
def orders(server, tmp_path_factory):
    """60,000 rows (several hundred pages: four ctid slices), with
    duplicates and NULLs, and its Parquet export."""
    with server.connect() as conn:
        conn.execute("""
            DROP TABLE IF EXISTS orders;
            CREATE TABLE orders AS
            SELECT (g % 50000)::int8 AS id,
                   ((g * 7 % 100000)::numeric / 100)::numeric(14,4) AS amount,
                   timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second' AS at,
                   CASE WHEN g % 97 = 0 THEN NULL ELSE 'note ' || g END AS note,
                   repeat('x', 40) AS pad
            FROM generate_series(1, 60000) g;
        """)
        path = tmp_path_factory.mktemp("orders") / "orders.parquet"
        rows = conn.execute("SELECT id, amount, at, note, pad FROM orders").fetchall()
    schema = pa.schema([("id", pa.int64()), ("amount", pa.decimal128(14, 4)),
                        ("at", pa.timestamp("us", tz="UTC")), ("note", pa.string()),
                        ("pad", pa.string())])
    cols = list(zip(*rows))
    table = pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(cols, schema)],
                                 schema=schema)
    pq.write_table(table, path)
    return path, table


def test_a_table_matches_its_export_with_parallel_slices(server, orders):
    path, _ = orders
    p = run_cli("diff", server.url("public.orders"), str(path), "--json", "--connections", "4")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    db = report["inputs"]["source"]["database"]
    assert db["connections"] == 4
    assert db["snapshot"]
    assert report["inputs"]["source"]["rows"] == 60000


def test_drift_is_found_with_its_evidence(server, orders, tmp_path):
    _, table = orders
    rows = table.to_pylist()
    # a changed NUMERIC digit, a timestamptz one microsecond off, a
    # duplicated row, a NULL turned into ''
    rows[10]["amount"] += decimal.Decimal("0.0001")
    rows[20]["at"] += dt.timedelta(microseconds=1)
    rows.append(dict(rows[30]))
    null_row = next(i for i, r in enumerate(rows) if r["note"] is None)
    rows[null_row]["note"] = ""
    drifted = tmp_path / "drifted.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), drifted)
    for conns in ("1", "3"):
        out = tmp_path / f"out{conns}"
        p = run_cli("diff", server.url("public.orders"), str(drifted), "--json", "-o", str(out),
                    "--connections", conns)
        assert p.returncode == 1, p.stderr
        report = json.loads(p.stdout)
        assert report["source_only_rows"] == 3, report
        assert report["target_only_rows"] == 4, report
        src_only = pq.read_table(out / "source_only.parquet").to_pylist()
        ids = sorted(r["id"] for r in src_only)
        assert ids == sorted([rows[10]["id"], rows[20]["id"], rows[null_row]["id"]])
        assert any(r["note"] is None for r in src_only)
        tgt_only = pq.read_table(out / "target_only.parquet").to_pylist()
        assert any(r["note"] == "" for r in tgt_only)


def test_a_query_source(server, orders, tmp_path):
    _, table = orders
    part = table.filter(pa.compute.less(table["id"], 100)).select(["id", "amount"])
    path = tmp_path / "part.parquet"
    pq.write_table(part, path)
    p = run_cli("diff", server.url(), str(path), "--json", "--source-query",
                "SELECT id, amount FROM orders WHERE id < 100;")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["inputs"]["source"]["database"]["query"].startswith("SELECT id, amount")
    assert report["inputs"]["source"]["rows"] == part.num_rows


def _wait_for_lock_wait(conn, app="recon", timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        n = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                         "AND wait_event_type = 'Lock'", (app,)).fetchone()[0]
        if n:
            return
        time.sleep(0.05)
    raise AssertionError("recon never waited on the table's lock")


def test_rows_committed_during_the_read_are_not_seen(server, orders, tmp_path):
    path, _ = orders
    with server.connect() as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS snap AS SELECT * FROM orders")
        conn.autocommit = False
        # Hold the table so recon has its snapshot but cannot read yet.
        conn.execute("LOCK TABLE snap IN ACCESS EXCLUSIVE MODE")
        proc = subprocess.Popen(
            [_recon_bin(), "diff", server.url("public.snap"), str(path),
             "--json", "--connections", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        with server.connect() as watcher:
            _wait_for_lock_wait(watcher)
        conn.execute("INSERT INTO snap SELECT * FROM orders LIMIT 5")
        conn.commit()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["inputs"]["source"]["rows"] == 60000
    # The rows were there for the next run.
    p = run_cli("diff", server.url("public.snap"), str(path), "--json")
    assert p.returncode == 1
    assert json.loads(p.stdout)["source_only_rows"] == 5
    with server.connect() as conn:
        conn.execute("DROP TABLE snap")


def test_a_dropped_connection_is_an_error_and_leaves_nothing(server, orders, tmp_path):
    path, _ = orders
    temp = tmp_path / "temp"
    temp.mkdir()
    with server.connect() as conn:
        conn.autocommit = False
        conn.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
        proc = subprocess.Popen(
            [_recon_bin(), "diff", server.url("public.orders"), str(path),
             "--temp-dir", str(temp), "-o", str(tmp_path / "out")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with server.connect() as admin:
            _wait_for_lock_wait(admin)
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE application_name = 'recon'")
        out, err = proc.communicate(timeout=60)
        conn.rollback()
    assert proc.returncode == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # The server's FATAL message, or the closed socket if it came first.
    assert "postgres://" in lines[0], err
    assert "closed the connection" in lines[0] or "terminating connection" in lines[0], err
    assert not any(temp.iterdir()), list(temp.iterdir())
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", ["password", "table", "type", "nan"])
def test_errors_are_one_line_naming_the_source(server, orders, case, tmp_path):
    path, _ = orders
    if case == "password":
        url = server.url("public.orders", password="wrong-pw")
        want = "password authentication failed"
    elif case == "table":
        url = server.url("public.no_such_table")
        want = "no_such_table does not exist"
    elif case == "type":
        with server.connect() as conn:
            conn.execute("DROP TABLE IF EXISTS iv; CREATE TABLE iv (id int, span interval);"
                         "INSERT INTO iv VALUES (1, '1 day')")
        url = server.url("public.iv")
        want = "column span: type interval"
    else:
        with server.connect() as conn:
            conn.execute("DROP TABLE IF EXISTS nn; CREATE TABLE nn (id int, x numeric);"
                         "INSERT INTO nn VALUES (1, 1.5), (2, 'NaN')")
        url = server.url("public.nn")
        want = "column x: NaN"
    p = run_cli("diff", url, str(path))
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert want in lines[0], lines[0]
    assert "wrong-pw" not in p.stderr and PASSWORD not in p.stderr


def test_passwords_come_from_the_environment_and_pgpass(server, orders, tmp_path):
    path, _ = orders
    url = server.url("public.orders", password=None)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{server.port}:postgres:{USER}:{PASSWORD}\n")
    pgpass.chmod(0o600)
    for extra in ({"PGPASSWORD": PASSWORD}, {"PGPASSFILE": str(pgpass)}):
        p = subprocess.run([_recon_bin(), "diff", url, str(path)],
                           capture_output=True, text=True, env={**env, **extra})
        assert p.returncode == 0, (extra.keys(), p.stderr)
    p = subprocess.run([_recon_bin(), "diff", url, str(path)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 2


def test_tls_follows_sslmode(server, orders, tmp_path):
    path, _ = orders
    cases = [
        ({"sslmode": "disable"}, 0),
        ({"sslmode": "require"}, 0),
        ({"sslmode": "verify-full", "sslrootcert": str(server.cert)}, 0),
        # the system's roots do not know a self-signed certificate
        ({"sslmode": "verify-full"}, 2),
    ]
    for params, code in cases:
        p = run_cli("diff", server.url("public.orders", **params), str(path))
        assert p.returncode == code, (params, p.stderr)
        if code == 2:
            assert len(p.stderr.strip().splitlines()) == 1, p.stderr
            assert "certificate" in p.stderr.lower(), p.stderr
    # The connections really were encrypted: the server says so while one reads.
    q = ("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
         "WHERE a.application_name = 'recon' AND s.ssl")
    with server.connect() as conn:
        conn.autocommit = False
        conn.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")
        proc = subprocess.Popen(
            [_recon_bin(), "diff",
             server.url("public.orders", sslmode="require"), str(path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with server.connect() as watcher:
            _wait_for_lock_wait(watcher)
            encrypted = watcher.execute(q).fetchone()[0]
        conn.rollback()
        proc.communicate(timeout=120)
    assert encrypted >= 1
    assert proc.returncode == 0


def test_python_takes_the_same_sources(server, orders, tmp_path):
    import recon

    path, table = orders
    d = recon.diff(server.url("public.orders"), str(path), connections=2)
    assert d.exact_match
    assert d.report["inputs"]["source"]["database"]["connections"] == 2
    part = table.filter(pa.compute.less(table["id"], 10)).select(["id", "note"])
    d = recon.diff(server.url(), part, source_query="SELECT id, note FROM orders WHERE id < 10")
    assert d.exact_match, d
    with pytest.raises(recon.InputError, match="does not exist"):
        recon.diff(server.url("public.nope"), part)
    # A fingerprint of the table equals the CLI's of its export.
    fp = recon.fingerprint(server.url("public.orders"))
    assert fp.rows == 60000
    assert recon.compare_fingerprints(fp, recon.fingerprint(str(path))).fingerprints_match
