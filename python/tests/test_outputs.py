"""The package's writers (Diff.to_json/to_html/to_junit, Fingerprint.save)
write a destination that is not a regular file in place: a FIFO's reader
gets the whole text and a device stays a device (a rename would replace
either with a regular file). A regular file is still replaced whole."""

from __future__ import annotations

import os
import stat
import threading

import pytest

import recon
from conftest import source_table, target_table

WRITERS = {
    "to_json": (lambda d, fp, p: d.to_json(p), "{"),
    "to_html": (lambda d, fp, p: d.to_html(p), "<!"),
    "to_junit": (lambda d, fp, p: d.to_junit(p), "<?xml"),
    "Fingerprint.save": (lambda d, fp, p: fp.save(p), "{"),
}


@pytest.fixture(scope="module")
def results():
    return recon.diff(source_table(), target_table()), recon.fingerprint(source_table())


@pytest.mark.parametrize("name", WRITERS)
def test_a_fifo_is_written_in_place_for_its_reader(tmp_path, results, name):
    write, starts = WRITERS[name]
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    keep = tmp_path / "keep.fifo"
    os.link(fifo, keep)  # to release a reader if the FIFO were replaced
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    write(*results, fifo)
    reader.join(timeout=5)
    if reader.is_alive():
        os.close(os.open(keep, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), f"{name} replaced the FIFO"
    assert got and got[0].startswith(starts), got


@pytest.mark.parametrize("name", WRITERS)
def test_a_device_node_stays_a_device(tmp_path, results, name):
    if os.geteuid() != 0:
        pytest.skip("mknod needs root (CI runs as root)")
    write, _ = WRITERS[name]
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    write(*results, null)
    assert stat.S_ISCHR(os.lstat(null).st_mode), f"{name} replaced the device"


def test_a_regular_file_is_replaced_whole_through_its_symlink(tmp_path, results):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    results[0].to_json(link)
    assert link.is_symlink() and real.read_text().startswith("{")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]
