"""The content registry: entries by key, the registry a sync tool diffs against, and the
whole-folder sync (including the content guide's curl example, run against a live server)."""

import hashlib
import json
import shutil
import subprocess

import pytest

from tests.live import LiveServer
from tests.ops.test_readme import readme_block


def checksum(data: dict) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def entry(key, data=None, **fields):
    return {"key": key, "type": "page", "data": data or {"title": key}, **fields}


def registry(client) -> dict:
    response = client.get("/content/registry")
    assert response.status_code == 200, response.json
    return {item["key"]: item for item in response.json["items"]}


def test_put_creates_then_replaces(app, owner_client, clock):
    data = {"title": "Über uns", "blocks": [1, 2.5, None]}
    created = owner_client.put("/content/about", json={"type": "page", "data": data})
    assert created.status_code == 201, created.json
    assert created.json["checksum"] == checksum(data)
    assert created.json["published"] is False
    assert created.json["data"] == data

    clock.advance(5)
    replaced = owner_client.put(
        "/content/about", json={"type": "page", "data": {"title": "About"}, "published": True}
    )
    assert replaced.status_code == 200
    assert replaced.json["created_at"] == created.json["created_at"]
    assert replaced.json["updated_at"] > created.json["updated_at"]
    assert app.test_client().get("/content/about").json == replaced.json


def test_a_draft_is_hidden_from_the_public(app, owner_client, customer_client, make_key):
    owner_client.put("/content/draft", json={"type": "page", "data": {"x": 1}})
    for public in (app.test_client(), customer_client, make_key("write:content")):
        assert public.get("/content/draft").status_code == 404
    assert make_key("read:content").get("/content/draft").status_code == 200
    assert owner_client.get("/content/draft").status_code == 200
    assert app.test_client().get("/content/missing").status_code == 404


def test_registry_has_no_data_and_is_readable_with_either_content_scope(owner_client, make_key):
    owner_client.put("/content/b", json={"type": "block", "data": {"x": 1}, "published": True})
    owner_client.put("/content/a", json={"type": "page", "data": {"y": 2}})
    for reader in (owner_client, make_key("read:content"), make_key("write:content")):
        items = reader.get("/content/registry").json["items"]
        assert [i["key"] for i in items] == ["a", "b"]
        assert set(items[0]) == {"key", "type", "published", "checksum", "updated_at"}
    assert make_key("read:product").get("/content/registry").status_code == 403
    filtered = owner_client.get("/content/registry?type=block&published=true").json
    assert [i["key"] for i in filtered["items"]] == ["b"]


@pytest.mark.parametrize(
    ("key", "body", "field"),
    [
        ("ok", {"type": "page", "data": {"x": "y" * (256 * 1024)}}, "data"),
        ("ok", {"type": "page", "data": ["not", "an", "object"]}, "data"),
        ("ok", {"type": "page"}, "data"),
        ("ok", {"type": "Page!", "data": {}}, "type"),
        ("ok", {"type": "page", "data": {}, "published": "maybe"}, "published"),
        ("Not-A-Slug", {"type": "page", "data": {}}, "key"),
    ],
)
def test_bad_entries_are_400_naming_the_field(owner_client, key, body, field):
    response = owner_client.put(f"/content/{key}", json=body)
    assert response.status_code == 400, response.json
    assert response.json["message"].startswith(f"{field}:")
    assert registry(owner_client) == {}


def test_the_registry_and_sync_paths_are_not_entry_keys(owner_client):
    for path in ("/content/sync", "/content/registry"):
        response = owner_client.put(path, json={"type": "page", "data": {}})
        assert response.status_code == 405
        assert "PUT" not in response.headers["Allow"]
    response = owner_client.post("/content/sync", json={"entries": [entry("registry")]})
    assert response.status_code == 400
    assert response.json["message"].startswith("entries.0.key:")


def test_delete(owner_client):
    owner_client.put("/content/gone", json={"type": "page", "data": {}})
    assert owner_client.delete("/content/gone").status_code == 204
    assert owner_client.delete("/content/gone").status_code == 404
    assert registry(owner_client) == {}


def test_sync_writes_only_what_changed(owner_client, make_key, clock):
    sync = make_key("write:content")
    first = sync.post(
        "/content/sync",
        json={"entries": [entry("a"), entry("b"), entry("c", published=True)]},
    )
    assert first.status_code == 200, first.json
    assert first.json["created"] == 3 and first.json["unchanged"] == 0
    before = registry(owner_client)

    clock.advance(10)
    second = sync.post(
        "/content/sync",
        json={
            "entries": [
                entry("a"),  # same
                entry("b", {"title": "changed"}),  # new data
                entry("c", published=False),  # same data, unpublished
                entry("d"),  # new
            ]
        },
    )
    assert second.json == {
        "created": 1,
        "updated": 2,
        "deleted": 0,
        "unchanged": 1,
        "dry_run": False,
        "keys": {"created": ["d"], "updated": ["b", "c"], "deleted": []},
    }
    after = registry(owner_client)
    assert after["a"] == before["a"]  # untouched, updated_at included
    assert after["b"]["checksum"] == checksum({"title": "changed"})
    assert after["c"]["published"] is False


def test_prune_and_dry_run(owner_client, make_key):
    sync = make_key("write:content")
    sync.post("/content/sync", json={"entries": [entry("a"), entry("b"), entry("c")]})
    body = {"entries": [entry("a", {"new": 1})], "prune": True, "dry_run": True}
    dry = sync.post("/content/sync", json=body).json
    assert (dry["updated"], dry["deleted"], dry["dry_run"]) == (1, 2, True)
    assert dry["keys"]["deleted"] == ["b", "c"]
    assert set(registry(owner_client)) == {"a", "b", "c"}

    real = sync.post("/content/sync", json={**body, "dry_run": False}).json
    assert (real["updated"], real["deleted"]) == (1, 2)
    assert set(registry(owner_client)) == {"a"}


def test_an_empty_set_with_prune_is_refused_unless_confirmed(owner_client, make_key):
    """A sync script run where its folder is empty sends no entries with prune: that is a 400
    that writes nothing, dry run or not, until ``allow_empty`` confirms it."""
    sync = make_key("write:content")
    sync.post("/content/sync", json={"entries": [entry("a"), entry("b")]})
    for dry_run in (True, False):
        refused = sync.post(
            "/content/sync", json={"entries": [], "prune": True, "dry_run": dry_run}
        )
        assert refused.status_code == 400
        assert refused.json["message"] == (
            "entries: empty with prune: true would delete every entry; send"
            ' "allow_empty": true to mean it.'
        )
    assert set(registry(owner_client)) == {"a", "b"}
    kept = sync.post("/content/sync", json={"entries": []})  # no prune: nothing to delete
    assert kept.status_code == 200 and kept.json["deleted"] == 0
    body = {"entries": [], "prune": True, "allow_empty": True}
    dry = sync.post("/content/sync", json={**body, "dry_run": True}).json
    assert dry["keys"]["deleted"] == ["a", "b"] and set(registry(owner_client)) == {"a", "b"}
    emptied = sync.post("/content/sync", json=body)
    assert emptied.status_code == 200 and emptied.json["deleted"] == 2
    assert registry(owner_client) == {}


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (entry("x", {"big": "y" * (256 * 1024)}), "entries.1.data"),
        ({"key": "x", "data": {}}, "entries.1.type"),
        (entry("Bad Key"), "entries.1.key"),
        (entry("a"), "entries"),  # a repeated key
    ],
)
def test_one_invalid_entry_writes_nothing(owner_client, bad, field):
    response = owner_client.post(
        "/content/sync", json={"entries": [entry("a"), bad, entry("z")], "prune": True}
    )
    assert response.status_code == 400
    assert response.json["message"].startswith(f"{field}:"), response.json
    assert registry(owner_client) == {}


def test_sync_needs_create_and_delete_rights_for_what_it_creates_and_prunes(
    owner_client, make_admin
):
    owner_client.put("/content/old", json={"type": "page", "data": {}})
    owner_client.post("/roles", json={"name": "updater", "permissions": ["content.update"]})
    editor = make_admin("updater")
    created = editor.post("/content/sync", json={"entries": [entry("new")]})
    assert created.status_code == 403 and "content.create" in created.json["message"]
    pruned = editor.post("/content/sync", json={"entries": [], "prune": True, "allow_empty": True})
    assert pruned.status_code == 403 and "content.delete" in pruned.json["message"]
    assert set(registry(owner_client)) == {"old"}
    updated = editor.post("/content/sync", json={"entries": [entry("old")]})
    assert updated.status_code == 200 and updated.json["updated"] == 1


def test_a_sync_may_be_larger_than_other_requests(app, owner_client):
    big = [entry(f"page-{n}", {"body": "x" * (200 * 1024)}) for n in range(8)]  # ~1.6 MB
    response = owner_client.post("/content/sync", json={"entries": big})
    assert response.status_code == 200, response.json
    assert response.json["created"] == 8
    anonymous = app.test_client().post("/content/sync", json={"entries": big})
    assert anonymous.status_code == 401
    too_big = owner_client.put("/content/x", json={"type": "page", "data": {"a": "x" * 2**20}})
    assert too_big.status_code == 413


@pytest.mark.live
@pytest.mark.skipif(shutil.which("curl") is None, reason="the guide's example needs curl")
def test_the_guide_example_dry_runs_then_syncs_a_folder(
    tmp_path, database_url, make_key, owner_client
):
    key = make_key("write:content")
    folder = tmp_path / "content"
    folder.mkdir()
    files = {
        "about": {"key": "about", "type": "page", "published": True, "data": {"title": "Us"}},
        "banner": {"key": "banner", "type": "banner", "data": {"text": "Sale — 20 %"}},
    }
    for name, body in files.items():
        (folder / f"{name}.json").write_text(json.dumps(body, indent=2, ensure_ascii=False))
    owner_client.put("/content/stale", json={"type": "page", "data": {}})

    server = LiveServer({"DATABASE_URL": database_url, "SHOP_RATELIMIT_ENABLED": "0"})
    answers = []
    try:
        for dry_run in (None, "false", "false"):  # as pasted, then applied, then again
            env = {"PATH": "/usr/bin:/bin", "SHOP_URL": server.url, "SHOP_KEY": key.secret}
            if dry_run:
                env["DRY_RUN"] = dry_run
            result = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", readme_block("content-sync")],
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert result.returncode == 0, result.stderr + result.stdout
            answers.append(json.loads(result.stdout))
            if dry_run is None:
                assert set(registry(owner_client)) == {"stale"}  # the dry run wrote nothing
        # Run where content/ is empty, even with DRY_RUN=false, it stops and sends nothing.
        empty = tmp_path / "elsewhere"
        (empty / "content").mkdir(parents=True)
        env = {"PATH": "/usr/bin:/bin", "SHOP_URL": server.url, "SHOP_KEY": key.secret}
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", readme_block("content-sync")],
            cwd=empty,
            env={**env, "DRY_RUN": "false"},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert result.returncode != 0 and "No content/*.json in" in result.stderr
        assert set(registry(owner_client)) == {"about", "banner"}
    finally:
        server.stop()
    counts = [(a["dry_run"], a["created"], a["deleted"], a["unchanged"]) for a in answers]
    assert counts == [(True, 2, 1, 0), (False, 2, 1, 0), (False, 0, 0, 2)]
    entries = registry(owner_client)
    assert set(entries) == {"about", "banner"}
    assert entries["banner"]["checksum"] == checksum(files["banner"]["data"])


def test_json_booleans_must_be_true_or_false(owner_client):
    response = owner_client.post("/content/sync", json={"entries": [], "dry_run": 0})
    assert response.status_code == 400 and response.json["message"].startswith("dry_run:")
    response = owner_client.put("/content/x", json={"type": "page", "data": {}, "published": 1})
    assert response.status_code == 400 and response.json["message"].startswith("published:")
