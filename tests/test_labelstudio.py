"""Label Studio integration against a real Label Studio server on 127.0.0.1."""
from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import invoke, synthetic_queue
from support.labelstudio_server import LabelStudioServer, free_port
from workbench.annotation.store import load_all, read_events

N_ITEMS = 50
pytestmark = pytest.mark.timeout(2400)  # the first run installs Label Studio (minutes)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = LabelStudioServer(tmp_path_factory.mktemp("label-studio")).start()
    yield srv
    srv.stop()


@pytest.fixture
def project(tmp_path, server, monkeypatch):
    synthetic_queue(tmp_path / ".workbench", N_ITEMS)
    # This project has only the queue (no filter output): the pipeline uses it as it is.
    (tmp_path / "workbench.toml").write_text(f'[labelstudio]\nurl = "{server.url}"\npage_size = 7\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token)
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    return tmp_path


def sdk(url, token):
    from label_studio_sdk import LabelStudio
    return LabelStudio(base_url=url, api_key=token)


def annotate(client, task_id, category, user_id, note=None, cancelled=False):
    from workbench.labelstudio.scheme import result_for
    return client.annotations.create(id=task_id, completed_by=user_id, result=result_for(category, note),
                                     was_cancelled=cancelled)


def labels_on_disk(folder: Path) -> dict[str, dict[str, str]]:
    states, warnings = load_all(folder)
    assert warnings == []
    return {a: {i: (f"{s.label}-{s.stance}" if s.label == "valid" else s.label) for i, s in items.items() if s.label}
            for a, items in states.items()}


class KillingProxy:
    """Forwards HTTP to Label Studio and kills the server when the n-th request arrives."""

    def __init__(self, target: LabelStudioServer, kill_at: int):
        self.target, self.kill_at, self.count = target, kill_at, 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _forward(self):
                proxy.count += 1
                if proxy.count == proxy.kill_at:
                    proxy.target.kill()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", proxy.target.port, timeout=30)
                    conn.request(self.command, self.path, body=body or None,
                                 headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
                    resp = conn.getresponse()
                    data = resp.read()
                except OSError:
                    self.close_connection = True
                    return  # the server is gone: hang up without an answer
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_round_trip_two_users_idempotent_push_and_pull_edit_and_crash(project, server, runner, tmp_path_factory):
    title = "round-trip"
    first = invoke(runner, "labelstudio", "push", "--project", title)
    assert first.exit_code == 0, first.output
    assert "imported 50 new task(s)" in first.output
    client = sdk(server.url, server.token)
    proj = next(p for p in client.projects.list() if p.title == title)
    tasks = list(client.tasks.list(project=proj.id, fields="all", page_size=100))
    assert len(tasks) == N_ITEMS and len({t.data["hypothesis_id"] for t in tasks}) == N_ITEMS
    assert "valid-pro" in client.projects.get(id=proj.id).label_config

    bob = client.users.create(username="bob", email="bob@example.com", password="bob-pass-123")
    admin = client.users.whoami()
    cats = ["valid-pro", "valid-anti", "invalid", "incoherent"]
    expected: dict[str, dict[str, str]] = {"admin@example.com": {}, "bob@example.com": {}}
    for k, task in enumerate(tasks):
        item = task.data["hypothesis_id"]
        annotate(client, task.id, cats[k % 4], admin.id, note="check" if k == 3 else None)
        expected["admin@example.com"][item] = cats[k % 4]
        if k % 2 == 0:
            annotate(client, task.id, cats[(k + 1) % 4], bob.id)
            expected["bob@example.com"][item] = cats[(k + 1) % 4]
    skipped = tasks[1]
    annotate(client, skipped.id, None, bob.id, cancelled=True)  # a skip is not a label

    pulled = invoke(runner, "labelstudio", "pull", "--project", title)
    assert pulled.exit_code == 0, pulled.output
    folder = project / "annotations"
    assert labels_on_disk(folder) == expected
    events, _ = read_events(folder / "admin@example.com.jsonl")
    assert all(e["source"] == "labelstudio" for e in events)
    assert any(e["type"] == "note" and e["note"] == "check" for e in events)

    again = invoke(runner, "labelstudio", "push", "--project", title)
    assert "imported 0 new task(s), 50 already there" in again.output
    assert len(list(client.tasks.list(project=proj.id, page_size=100))) == N_ITEMS
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert "0 new label(s)" in invoke(runner, "labelstudio", "pull", "--project", title).output
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before

    # An annotation edited in Label Studio updates the label: latest wins.
    target = tasks[0]
    annotation = client.annotations.list(id=target.id)[0]
    from workbench.labelstudio.scheme import result_for
    client.annotations.update(id=annotation.id, result=result_for("incoherent", None))
    edited_by = "admin@example.com" if annotation.completed_by == admin.id else "bob@example.com"
    expected[edited_by][target.data["hypothesis_id"]] = "incoherent"
    out = invoke(runner, "labelstudio", "pull", "--project", title)
    assert "1 new label(s)" in out.output
    assert labels_on_disk(folder) == expected

    status = invoke(runner, "labelstudio", "status", "--project", title)
    assert "50/50 tasks labelled" in status.output and "bob@example.com: 25" in status.output

    # Kill the server in the middle of a pull: nothing is written; after a restart, pulling
    # again loses and duplicates nothing.
    more = {}
    for task in tasks[10:20]:
        annotate(client, task.id, "invalid", bob.id)
        more[task.data["hypothesis_id"]] = "invalid"
    proxy = KillingProxy(server, kill_at=12)
    try:
        (project / "workbench.toml").write_text(f'[labelstudio]\nurl = "{proxy.url}"\npage_size = 7\n')
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        crashed = invoke(runner, "labelstudio", "pull", "--project", title)
        assert crashed.exit_code == 2 and "cannot reach Label Studio" in str(crashed.exception)
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    finally:
        proxy.close()
    server.start()
    (project / "workbench.toml").write_text(f'[labelstudio]\nurl = "{server.url}"\npage_size = 7\n')
    resumed = invoke(runner, "labelstudio", "pull", "--project", title)
    assert resumed.exit_code == 0, resumed.output
    expected["bob@example.com"].update(more)
    assert labels_on_disk(folder) == expected
    for f in folder.glob("*.jsonl"):
        ids = [e["id"] for e in read_events(f)[0]]
        assert len(ids) == len(set(ids))


def test_errors_are_clear_and_write_nothing(project, server, runner, monkeypatch):
    folder = project / "annotations"
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "not-the-key")
    wrong = invoke(runner, "labelstudio", "pull", "--project", "anything")
    assert wrong.exit_code == 2 and "refused the API key (401)" in str(wrong.exception)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token)
    missing = invoke(runner, "labelstudio", "pull", "--project", "no-such-project")
    assert missing.exit_code == 2 and "no project named 'no-such-project'" in str(missing.exception)
    client = sdk(server.url, server.token)
    client.projects.create(title="other-scheme", label_config='<View><Text name="text" value="$text"/>'
                           '<Choices name="sentiment" toName="text"><Choice value="positive"/></Choices></View>')
    mismatch = invoke(runner, "labelstudio", "pull", "--project", "other-scheme")
    assert mismatch.exit_code == 2 and "does not match workbench's label scheme" in str(mismatch.exception)
    assert invoke(runner, "labelstudio", "push", "--project", "other-scheme").exit_code == 2
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{free_port()}")
    down = invoke(runner, "labelstudio", "status", "--project", "x")
    assert down.exit_code == 2 and "cannot reach Label Studio" in str(down.exception)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY")
    nokey = invoke(runner, "labelstudio", "push", "--project", "x")
    assert nokey.exit_code == 2 and "LABEL_STUDIO_API_KEY" in str(nokey.exception)
    assert not folder.exists() or not any(folder.iterdir())


def test_push_sends_preannotations(project, server, runner):
    from workbench.annotation.store import LabelStore
    from workbench.labelstudio.scheme import parse_result

    store = LabelStore(project / "annotations", "carol")
    store.label("item000000", "valid", "anti")
    store.close()
    assert invoke(runner, "labelstudio", "push", "--project", "with-labels", "--preannotate", "labels").exit_code == 0
    assert invoke(runner, "labelstudio", "push", "--project", "with-fluency", "--preannotate", "fluency").exit_code == 0
    client = sdk(server.url, server.token)
    by_title = {p.title: p.id for p in client.projects.list()}
    labelled = {t.data["hypothesis_id"]: t for t in client.tasks.list(project=by_title["with-labels"], fields="all", page_size=100)}
    predictions = list(client.predictions.list(task=labelled["item000000"].id))
    assert [parse_result(p.result)[0] for p in predictions] == ["valid-anti"]
    assert list(client.predictions.list(task=labelled["item000001"].id)) == []
    fluent = next(t for t in client.tasks.list(project=by_title["with-fluency"], fields="all", page_size=100)
                  if t.data["hypothesis_id"] == "item000005")
    scores = [p.score for p in client.predictions.list(task=fluent.id)]
    assert scores == [pytest.approx(-5.0)]  # the synthetic queue's fluency of item 5


def test_an_intrinsic_kind_round_trips_with_its_own_scheme(tmp_path, server, runner, monkeypatch):
    """A SOFA project: the project is created with the kind's choices, tasks carry the
    statement and its details, and labels pulled back release the statement's probes."""
    import json

    from workbench.kinds.sofa.example import write_example_project

    project = write_example_project(tmp_path / "sofa")
    with open(project / "workbench.toml", "a") as f:
        f.write(f'\n[labelstudio]\nurl = "{server.url}"\n')
    monkeypatch.chdir(project)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token)
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    assert invoke(runner, "run").exit_code == 0
    result = invoke(runner, "labelstudio", "push", "--project", "sofa-statements")
    assert result.exit_code == 0, result.output
    client = sdk(server.url, server.token)
    pid = next(p.id for p in client.projects.list() if p.title == "sofa-statements")
    config = client.projects.get(id=pid).label_config
    assert all(f'value="{c}"' in config for c in ("valid", "invalid", "incoherent")) and "valid-pro" not in config
    tasks = list(client.tasks.list(project=pid, fields="all", page_size=100))
    assert len(tasks) == 7
    lazy = next(t for t in tasks if t.data["hypothesis"] == "are lazy at work")
    assert "category: work" in lazy.data["context"] and "probe: retail workers are lazy at work" in lazy.data["context"]
    me = client.users.whoami()
    for t in tasks:
        annotate(client, t.id, "valid" if t.id == lazy.id else "invalid", me.id)
    result = invoke(runner, "labelstudio", "pull", "--project", "sofa-statements")
    assert result.exit_code == 0, result.output
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    probes = (project / "exports" / "sofa-example" / "1.0.0" / "data" / "probes.csv").read_text().splitlines()
    assert len(probes) == 1 + 3 and all("are lazy at work" in line for line in probes[1:])
    assert json.loads((project / "exports" / "sofa-example" / "1.0.0" / "manifest.json").read_text())["samples"] == 3
