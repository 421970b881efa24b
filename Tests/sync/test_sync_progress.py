"""Sync progress and downloading before open from Python against a real
`coffer-sync serve`: db.sync.progress() counts the changeset bytes each way
(a reader downloads the bytes the writer uploaded, both end complete),
download_before_open "always"/"once"/"never" decides whether a second
client's writes are there when coffer.open returns, and an open that waits
for a service that is not there raises SyncTimeoutError."""

import pytest

import coffer

from conftest import WAIT_S, Note, Service


def open_synced(path, url, partition, **options):
    return coffer.open(str(path), schema=[Note], sync=coffer.SyncConfig(url=url, partition=partition, **options))


def note_ids(db):
    db.refresh()
    return {n.id for n in db.objects(Note)}


def test_progress_counts_the_bytes_each_way(postgres, partition, services, dbs, tmp_path):
    services.append(Service(postgres, tmp_path))
    writer = open_synced(tmp_path / "w.coffer", services[0].url, partition)
    dbs.append(writer)
    for round in range(3):
        with writer.write():
            for i in range(20):
                writer.add(Note(id=round * 100 + i, text="x" * 300))
    writer.sync.wait_for_upload(WAIT_S)
    sent = writer.sync.progress("upload")
    assert sent.is_transfer_complete and sent.progress_estimate == 1.0
    assert sent.transferred_bytes > 60 * 300

    reader = open_synced(tmp_path / "r.coffer", services[0].url, partition, download_before_open="always",
                         download_timeout=WAIT_S)
    dbs.append(reader)
    assert len(note_ids(reader)) == 60
    with pytest.raises(coffer.InvalidArgumentError, match="sideways"):
        reader.sync.progress("sideways")


def test_download_before_open_always_once_never(postgres, partition, services, dbs, tmp_path):
    services.append(Service(postgres, tmp_path))
    url = services[0].url
    writer = open_synced(tmp_path / "w.coffer", url, partition)
    dbs.append(writer)
    with writer.write():
        for i in range(10):
            writer.add(Note(id=i, text="before"))
    writer.sync.wait_for_upload(WAIT_S)

    always = open_synced(tmp_path / "a.coffer", url, partition, download_before_open="always")
    dbs.append(always)
    assert note_ids(always) == set(range(10))
    down = always.sync.progress("download")
    assert down.is_transfer_complete

    once = open_synced(tmp_path / "o.coffer", url, partition, download_before_open="once")
    assert note_ids(once) == set(range(10))
    once.close()

    never = open_synced(tmp_path / "n.coffer", url, partition)
    dbs.append(never)
    assert len(note_ids(never)) < 10, "an open with download_before_open='never' waited"

    with writer.write():
        writer.add(Note(id=99, text="later"))
    writer.sync.wait_for_upload(WAIT_S)
    again = open_synced(tmp_path / "o.coffer", url, partition, download_before_open="always")
    dbs.append(again)
    assert 99 in note_ids(again)


def test_download_before_open_with_the_service_down(partition, tmp_path):
    with pytest.raises(coffer.SyncTimeoutError, match="downloading before open"):
        open_synced(tmp_path / "d.coffer", "ws://127.0.0.1:9/sync/v1", partition, transport="builtin",
                    download_before_open="always", download_timeout=0.5)
    with pytest.raises(coffer.InvalidArgumentError, match="download_before_open"):
        coffer.SyncConfig(url="ws://127.0.0.1:9/sync/v1", partition=partition, download_before_open="sometimes")
