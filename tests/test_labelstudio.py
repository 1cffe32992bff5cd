"""Label Studio integration against a real Label Studio server on 127.0.0.1."""

from __future__ import annotations

import http.client
import math
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

    return client.annotations.create(
        id=task_id, completed_by=user_id, result=result_for(category, note), was_cancelled=cancelled
    )


def labels_on_disk(folder: Path) -> dict[str, dict[str, str]]:
    states, warnings = load_all(folder)
    assert warnings == []
    return {
        a: {i: (f"{s.label}-{s.stance}" if s.label == "valid" else s.label) for i, s in items.items() if s.label}
        for a, items in states.items()
    }


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
                    conn.request(
                        self.command,
                        self.path,
                        body=body or None,
                        headers={k: v for k, v in self.headers.items() if k.lower() != "host"},
                    )
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
    first = invoke(runner, "labelstudio", "push", "--project", title, "--create")
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
    again_pulled = invoke(runner, "labelstudio", "pull", "--project", title).output
    assert "0 new label(s), 0 undone" in again_pulled and " ," not in again_pulled  # no stray space before a comma
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
    assert "50/50 queue items labelled" in status.output and "bob@example.com: 25" in status.output

    # Kill the server in the middle of a pull (at the request reading the tasks): nothing is
    # written; after a restart, pulling again loses and duplicates nothing.
    more = {}
    for task in tasks[10:20]:
        annotate(client, task.id, "invalid", bob.id)
        more[task.data["hypothesis_id"]] = "invalid"
    proxy = KillingProxy(server, kill_at=5)
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
    client.projects.create(
        title="other-scheme",
        label_config='<View><Text name="text" value="$text"/>'
        '<Choices name="sentiment" toName="text"><Choice value="positive"/></Choices></View>',
    )
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
    assert (
        invoke(
            runner, "labelstudio", "push", "--project", "with-labels", "--preannotate", "labels", "--create"
        ).exit_code
        == 0
    )
    assert (
        invoke(
            runner, "labelstudio", "push", "--project", "with-fluency", "--preannotate", "fluency", "--create"
        ).exit_code
        == 0
    )
    client = sdk(server.url, server.token)
    by_title = {p.title: p.id for p in client.projects.list()}
    labelled = {
        t.data["hypothesis_id"]: t
        for t in client.tasks.list(project=by_title["with-labels"], fields="all", page_size=100)
    }
    predictions = list(client.predictions.list(task=labelled["item000000"].id))
    assert [parse_result(p.result)[0] for p in predictions] == [["valid-anti"]]
    assert list(client.predictions.list(task=labelled["item000001"].id)) == []
    fluent = next(
        t
        for t in client.tasks.list(project=by_title["with-fluency"], fields="all", page_size=100)
        if t.data["hypothesis_id"] == "item000005"
    )
    scores = [p.score for p in client.predictions.list(task=fluent.id)]
    assert scores == [pytest.approx(math.exp(-5.0), abs=1e-4)]  # exp of the synthetic queue's fluency of item 5


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
    result = invoke(runner, "labelstudio", "push", "--project", "sofa-statements", "--create")
    assert result.exit_code == 0, result.output
    client = sdk(server.url, server.token)
    pid = next(p.id for p in client.projects.list() if p.title == "sofa-statements")
    config = client.projects.get(id=pid).label_config
    assert all(f'value="{c}"' in config for c in ("valid", "invalid", "incoherent")) and "valid-pro" not in config
    tasks = list(client.tasks.list(project=pid, fields="all", page_size=100))
    assert len(tasks) == 7
    lazy = next(t for t in tasks if t.data["statement"] == "are lazy at work")
    assert lazy.data["where"].startswith("work / ") and lazy.data["example_probe"] == "retail workers are lazy at work"
    me = client.users.whoami()
    for t in tasks:
        annotate(client, t.id, "valid" if t.id == lazy.id else "invalid", me.id)
    result = invoke(runner, "labelstudio", "pull", "--project", "sofa-statements")
    assert result.exit_code == 0, result.output
    assert invoke(runner, "build", "--version", "1.0.0").exit_code == 0
    probes = (project / "exports" / "sofa-example" / "1.0.0" / "data" / "probes.csv").read_text().splitlines()
    assert len(probes) == 1 + 3 and all("are lazy at work" in line for line in probes[1:])
    assert json.loads((project / "exports" / "sofa-example" / "1.0.0" / "manifest.json").read_text())["samples"] == 3


# -- Label Studio for real teams (issue 20) ---------------------------------------------------
def project_id(client, title):
    return next(p.id for p in client.projects.list() if p.title == title)


def tasks_by_item(client, pid):
    return {t.data["hypothesis_id"]: t for t in client.tasks.list(project=pid, fields="all", page_size=100)}


def user(client, name):
    email = f"{name}@example.com"
    found = [u for u in client.users.list() if u.email == email]
    return found[0] if found else client.users.create(username=name, email=email, password=f"{name}-pass-123")


def configure(project, server_url, extra=""):
    (project / "workbench.toml").write_text(f'[labelstudio]\nurl = "{server_url}"\npage_size = 7\n{extra}')


def test_overlap_follows_the_policy_and_status_reports_short_tasks(project, server, runner):
    configure(project, server.url, '\n[annotation]\npolicy = "majority"\n')
    typo = invoke(runner, "labelstudio", "push", "--project", "overlap-typo")
    assert typo.exit_code == 2 and "pass --create" in str(typo.exception)
    client = sdk(server.url, server.token)
    assert "overlap-typo" not in {p.title for p in client.projects.list()}

    pushed = invoke(runner, "labelstudio", "push", "--project", "overlap", "--create")
    assert pushed.exit_code == 0, pushed.output
    assert "overlap: 2 annotator(s) per task" in pushed.output
    pid = project_id(client, "overlap")
    assert client.projects.get(id=pid).maximum_annotations == 2
    tasks = tasks_by_item(client, pid)
    dora, admin = user(client, "dora"), client.users.whoami()
    for item in ("item000000", "item000001"):
        annotate(client, tasks[item].id, "invalid", admin.id)
    annotate(client, tasks["item000000"].id, "invalid", dora.id)
    annotate(client, tasks["item000002"].id, None, dora.id, cancelled=True)
    status = invoke(runner, "labelstudio", "status", "--project", "overlap")
    assert status.exit_code == 0, status.output
    assert "2/50 queue items labelled; 49 task(s) short of 2 annotator(s); 1 skipped" in status.output

    configure(project, server.url, "\n[annotation]\nvalidators = 5\n")
    again = invoke(runner, "labelstudio", "push", "--project", "overlap")
    assert "overlap: 5 annotator(s) per task ([annotation] validators = 5, was 2)" in again.output
    assert client.projects.get(id=pid).maximum_annotations == 5


def test_a_deleted_annotation_is_undone_on_pull(project, server, runner):
    assert invoke(runner, "labelstudio", "push", "--project", "deletions", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    tasks = tasks_by_item(client, project_id(client, "deletions"))
    admin = client.users.whoami()
    kept = annotate(client, tasks["item000000"].id, "invalid", admin.id)
    gone = annotate(client, tasks["item000001"].id, "valid-pro", admin.id, note="hmm")
    assert invoke(runner, "labelstudio", "pull", "--project", "deletions").exit_code == 0
    folder = project / "annotations"
    assert labels_on_disk(folder) == {"admin@example.com": {"item000000": "invalid", "item000001": "valid-pro"}}
    client.annotations.delete(id=gone.id)
    pulled = invoke(runner, "labelstudio", "pull", "--project", "deletions")
    assert pulled.exit_code == 0, pulled.output
    assert "1 undone" in pulled.output
    assert labels_on_disk(folder) == {"admin@example.com": {"item000000": "invalid"}}
    states, _ = load_all(folder)
    assert states["admin@example.com"]["item000001"].note is None
    events, _ = read_events(folder / "admin@example.com.jsonl")
    assert [e["type"] for e in events if e["item"] == "item000001"] == ["label", "note", "undo", "note"]
    assert "0 undone" in invoke(runner, "labelstudio", "pull", "--project", "deletions").output
    status = invoke(runner, "labelstudio", "status", "--project", "deletions")
    assert "1/50 queue items labelled" in status.output and "admin@example.com: 1" in status.output
    assert kept.id


def test_annotations_not_taken_are_reported_and_edited_configs_refused(project, server, runner):
    from workbench.kinds.nli import WORDS
    from workbench.kinds.nli.scheme import NLI_SCHEME
    from workbench.labelstudio.scheme import label_config

    assert invoke(runner, "labelstudio", "push", "--project", "no-drops", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    pid = project_id(client, "no-drops")
    tasks = tasks_by_item(client, pid)
    admin = client.users.whoami()
    choice = {"from_name": "label", "to_name": "hypothesis", "type": "choices"}
    odd = client.annotations.create(
        id=tasks["item000000"].id, completed_by=admin.id, result=[{**choice, "value": {"choices": ["maybe"]}}]
    )
    two = client.annotations.create(
        id=tasks["item000001"].id,
        completed_by=admin.id,
        result=[{**choice, "value": {"choices": ["invalid", "incoherent"]}}],
    )
    annotate(client, tasks["item000002"].id, "incoherent", admin.id)
    pulled = invoke(runner, "labelstudio", "pull", "--project", "no-drops")
    assert pulled.exit_code == 0, pulled.output
    assert "2 annotation(s) not taken" in pulled.output
    assert (
        f"annotation {odd.id} (task {tasks['item000000'].id}, admin@example.com): label 'maybe' is not one of"
        in pulled.output
    )
    assert f"annotation {two.id} (task {tasks['item000001'].id}, admin@example.com): 2 labels" in pulled.output
    assert labels_on_disk(project / "annotations") == {"admin@example.com": {"item000002": "incoherent"}}

    printed = invoke(runner, "labelstudio", "config")
    assert printed.exit_code == 0 and printed.output == label_config(NLI_SCHEME, WORDS)
    multiple = printed.output.replace('choice="single"', 'choice="multiple"')
    client.projects.update(id=pid, label_config=multiple)
    refused = invoke(runner, "labelstudio", "pull", "--project", "no-drops")
    assert refused.exit_code == 2 and "choice=multiple" in str(refused.exception)
    assert "workbench labelstudio config" in str(refused.exception)
    renamed = printed.output.replace('name="premise" value="$premise"', 'name="info" value="$info"')
    client.projects.create(title="renamed-fields", label_config=renamed)
    refused = invoke(runner, "labelstudio", "status", "--project", "renamed-fields")
    assert refused.exit_code == 2 and 'no field named "premise"' in str(refused.exception)


def test_bad_url_key_and_hung_server_give_clear_messages(project, server, runner, monkeypatch):
    import socket

    monkeypatch.setenv("LABEL_STUDIO_URL", f"127.0.0.1:{server.port}")
    no_scheme = invoke(runner, "labelstudio", "status", "--project", "x")
    assert no_scheme.exit_code == 2 and "write it with its scheme" in str(no_scheme.exception)
    assert f"http://127.0.0.1:{server.port}" in str(no_scheme.exception)
    monkeypatch.setenv("LABEL_STUDIO_URL", server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token + " ")
    spaced = invoke(runner, "labelstudio", "pull", "--project", "x")
    assert spaced.exit_code == 2 and "contains a space" in str(spaced.exception)
    assert server.token not in str(spaced.exception) and server.token not in spaced.output
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token)

    hung = socket.socket()  # accepts connections, never answers
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)
    try:
        monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{hung.getsockname()[1]}")
        configure(project, server.url, "timeout = 1\n")
        import time

        started = time.monotonic()
        slow = invoke(runner, "labelstudio", "status", "--project", "x")
        assert slow.exit_code == 2 and "did not answer within 1 s" in str(slow.exception)
        assert time.monotonic() - started < 10
    finally:
        hung.close()


def test_preannotations_reach_existing_tasks_once_with_notes_and_flags(project, server, runner):
    from workbench.annotation.store import LabelStore
    from workbench.labelstudio.scheme import parse_result

    assert invoke(runner, "labelstudio", "push", "--project", "late-labels", "--create").exit_code == 0
    store = LabelStore(project / "annotations", "carol")
    store.label("item000000", "valid", "anti")
    store.append("item000000", "note", note="odd premise")
    store.append("item000000", "flag", flag=True)
    store.close()
    first = invoke(runner, "labelstudio", "push", "--project", "late-labels", "--preannotate", "labels")
    assert first.exit_code == 0, first.output
    assert "predictions (labels): 1 created, 0 unchanged, 0 removed" in first.output
    client = sdk(server.url, server.token)
    task = tasks_by_item(client, project_id(client, "late-labels"))["item000000"]
    predictions = list(client.predictions.list(task=task.id))
    assert [parse_result(p.result) for p in predictions] == [(["valid-anti"], "carol: odd premise", True)]
    again = invoke(runner, "labelstudio", "push", "--project", "late-labels", "--preannotate", "labels")
    assert "0 created, 1 unchanged, 0 removed" in again.output
    store = LabelStore(project / "annotations", "carol")
    store.label("item000000", "invalid")
    store.close()
    changed = invoke(runner, "labelstudio", "push", "--project", "late-labels", "--preannotate", "labels")
    assert "1 created, 0 unchanged, 1 removed" in changed.output
    assert [parse_result(p.result)[0] for p in client.predictions.list(task=task.id)] == [["invalid"]]


def test_what_the_annotator_sees_and_flags(project, server, runner):
    assert invoke(runner, "labelstudio", "push", "--project", "the-page", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    pid = project_id(client, "the-page")
    settings = client.projects.get(id=pid)
    assert settings.show_instruction and "Content note" in settings.expert_instruction
    assert "flag for review" in settings.label_config
    task = tasks_by_item(client, pid)["item000003"]
    data = task.data
    # Plain text, one key per line the kind declares (the task list shows each as a column).
    assert data == {
        "hypothesis_id": "item000003",
        "hypothesis": "group3 are w3 people.",
        "filled_in": "w3",
        "group": "group3 → counterfactual others",
        "premise": "1. Premise A about group3.\n2. Premise B about group3.",
        "where": "gender / gender_s1 · 2 premise-hypothesis pairs",
        "template": "{{GROUP1}} are <mask> people.",
    }
    assert not any(word in str(data) for word in ("stance", "fooled", "nli-a", "<mark", "<li"))

    from workbench.labelstudio.scheme import result_for

    admin = client.users.whoami()
    flagged = client.annotations.create(
        id=task.id, completed_by=admin.id, result=result_for("invalid", "typo", flag=True)
    )
    assert invoke(runner, "labelstudio", "pull", "--project", "the-page").exit_code == 0
    states, _ = load_all(project / "annotations")
    assert states["admin@example.com"]["item000003"].flag and states["admin@example.com"]["item000003"].note == "typo"
    client.annotations.update(id=flagged.id, result=result_for("invalid", "typo"))
    assert invoke(runner, "labelstudio", "pull", "--project", "the-page").exit_code == 0
    states, _ = load_all(project / "annotations")
    assert not states["admin@example.com"]["item000003"].flag


def test_annotator_mapping_merges_a_person_and_pull_is_bulk(project, server, runner):
    assert invoke(runner, "labelstudio", "push", "--project", "one-person", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    tasks = tasks_by_item(client, project_id(client, "one-person"))
    admin = client.users.whoami()
    for item in ("item000000", "item000001"):
        annotate(client, tasks[item].id, "invalid", admin.id)
    folder = project / "annotations"
    assert invoke(runner, "labelstudio", "pull", "--project", "one-person").exit_code == 0
    assert labels_on_disk(folder) == {"admin@example.com": {"item000000": "invalid", "item000001": "invalid"}}

    proxy = KillingProxy(server, kill_at=0)  # counts requests, kills nothing
    try:
        configure(project, proxy.url, '\n[labelstudio.annotators]\n"Admin@Example.com" = "cal"\n')
        mapped = invoke(runner, "labelstudio", "pull", "--project", "one-person")
        assert mapped.exit_code == 0, mapped.output
        assert proxy.count < 20  # not one request per task: 8 pages of 7 tasks, and a few for the project and users
    finally:
        proxy.close()
    on_disk = labels_on_disk(folder)
    assert on_disk["cal"] == {"item000000": "invalid", "item000001": "invalid"} and not on_disk["admin@example.com"]
    configure(project, server.url, '\n[labelstudio.annotators]\n"admin@example.com" = "not a name"\n')
    bad = invoke(runner, "labelstudio", "pull", "--project", "one-person")
    assert bad.exit_code == 2 and "labelstudio.annotators" in str(bad.exception)


SLOW_PULL = r"""
import os, sys, time
write = os.write
def slow_disk(fd, data):  # a slow disk: 1 KiB per call, 2 ms apart, so that a kill lands mid-write
    time.sleep(0.002)
    return write(fd, bytes(data[:1024]))
if sys.argv[2] == "slow":
    os.write = slow_disk
from workbench.cli.main import main
sys.argv = ["workbench", "labelstudio", "pull", "--project", sys.argv[1]]
main()
"""


def test_sigkill_during_a_pull_leaves_each_annotators_page_whole_or_absent_and_a_rerun_completes_it(
    project, server, runner
):
    import os
    import random
    import signal
    import subprocess
    import sys
    import time

    from conftest import ROOT

    title = "killed-pull"
    assert invoke(runner, "labelstudio", "push", "--project", title, "--create").exit_code == 0
    client = sdk(server.url, server.token)
    tasks = tasks_by_item(client, project_id(client, title))
    admin, kim = client.users.whoami(), user(client, "kim")
    cats = ["valid-pro", "valid-anti", "invalid", "incoherent"]
    expected = {"admin@example.com": {}, "kim@example.com": {}}
    for k, (item, task) in enumerate(sorted(tasks.items())):
        for who, name in ((admin, "admin@example.com"), (kim, "kim@example.com")):
            annotate(client, task.id, cats[(k + len(name)) % 4], who.id)
            expected[name][item] = cats[(k + len(name)) % 4]
    folder = project / "annotations"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def sizes():
        return {p.name: p.stat().st_size for p in folder.glob("*.jsonl")} if folder.is_dir() else {}

    def check(round_: str) -> int:
        """Every annotator's labels are whole pages of tasks (page_size 7: a page's batch is all there or
        none) or all of them; returns how many files hold a cut batch."""
        cut = 0
        for path in folder.glob("*.jsonl"):
            events, report = read_events(path)
            labels = {e["item"] for e in events if e["type"] == "label"}
            assert len(labels) % 7 == 0 or len(labels) == N_ITEMS, f"{round_}: {path.name} has {len(labels)} labels"
            if any("interrupted" in w for w in report.messages()):
                cut += 1
        return cut

    rng = random.Random(29)
    cut = 0
    for round_, mode in enumerate(["slow", "fast", "slow", "fast"]):
        before = sizes()
        proc = subprocess.Popen(
            [sys.executable, "-c", SLOW_PULL, title, mode],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if mode == "slow":  # the moment a batch starts to reach a file
            while proc.poll() is None and not any(size > before.get(name, 0) for name, size in sizes().items()):
                time.sleep(0.0002)
        else:
            time.sleep(rng.uniform(0.5, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        cut += check(f"round {round_} ({mode})")
    assert cut >= 1, "no kill landed while a batch was being written"
    resumed = invoke(runner, "labelstudio", "pull", "--project", title)
    assert resumed.exit_code == 0, resumed.output
    assert labels_on_disk(folder) == expected  # no warning left either: the remains were moved aside
    for path in folder.glob("*.jsonl"):
        ids = [e["id"] for e in read_events(path)[0]]
        assert len(ids) == len(set(ids))


# -- each kind's words on its page; tokens, shared titles, orphans, double annotations, votes (issue 30) ------
import base64  # noqa: E402
import json as _json  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

from support.kind_projects import KINDS, queue_items  # noqa: E402

TAG = re.compile(r"<(mark|li|ol|ul|i|b|br|p|span|div)\b", re.I)


@pytest.fixture(scope="module")
def kind_projects(tmp_path_factory, queued_project):
    root = tmp_path_factory.mktemp("kind-projects")
    return {k: queued_project(k, root / k) for k in KINDS}


@pytest.mark.parametrize("name", KINDS)
def test_the_labelling_page_of_each_kind_says_its_question_and_choice_captions(
    name, kind_projects, server, runner, monkeypatch
):
    from workbench.annotation import display
    from workbench.annotation.store import load_all

    folder = kind_projects[name]
    monkeypatch.chdir(folder)
    monkeypatch.setenv("LABEL_STUDIO_URL", server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", server.token)
    kind, items = queue_items(folder)
    words = kind.words
    title = f"page-{name}"
    pushed = invoke(runner, "labelstudio", "push", "--project", title, "--create")
    assert pushed.exit_code == 0, pushed.output
    client = sdk(server.url, server.token)
    pid = project_id(client, title)
    settings = client.projects.get(id=pid)
    config = ET.fromstring(settings.label_config)
    assert invoke(runner, "labelstudio", "config").output.strip() == settings.label_config.strip()
    headers = [h.get("value") for h in config.iter("Header")]
    # The choices: the id is what is stored, the caption is on the page.
    choices = {
        c.get("value"): c.get("html")
        for c in next(c for c in config.iter("Choices") if c.get("name") == "label").iter("Choice")
    }
    assert list(choices) == list(kind.scheme.ids)
    for choice in kind.scheme.choices:
        caption = words.caption(choice)
        assert caption and caption in choices[choice.id] and choice.id in choices[choice.id]
    # Every line the kind declares, under its name and with its caption; nothing it hides.
    for field in words.fields:
        if field.line not in words.hidden:
            assert field.line in headers and field.caption in headers, field.line
    tasks = {t.data["hypothesis_id"]: t.data for t in client.tasks.list(project=pid, fields="all", page_size=100)}
    assert set(tasks) == {i.id for i in items}
    for item in items:
        data = tasks[item.id]
        question = display.question(item, words, kind.scheme)
        if words.per_item is not None:  # the question depends on the item: it is in the task, shown by a header
            assert "$question" in headers and data["question"] == question
        else:
            assert question in headers and "question" not in data
        assert not any(TAG.search(str(v)) for v in data.values()), data  # the task list shows plain text
        for hidden in words.hidden:
            assert hidden not in data and not any(str(v) == dict(item.details).get(hidden) for v in data.values())
        assert (
            data[
                display.data_key(
                    words.fields[0].line, {"hypothesis_id", "question"} if words.per_item else {"hypothesis_id"}
                )
            ]
            == item.hypothesis
        )
    if name == "crows-pairs":
        from workbench.kinds.crows_pairs.words import ANTI, STEREO

        asked = {dict(i.details)["direction"]: tasks[i.id]["question"] for i in items}
        assert asked == {"antistereo": ANTI, "stereo": STEREO}
    # The page's ids come back as labels of the kind's scheme.
    first = next(iter(client.tasks.list(project=pid, page_size=1)))
    annotate(client, first.id, kind.scheme.choices[-1].id, client.users.whoami().id)
    pulled = invoke(runner, "labelstudio", "pull", "--project", title)
    assert pulled.exit_code == 0 and "1 new label(s) (admin@example.com: 1)" in pulled.output, pulled.output
    states, _ = load_all(folder / "annotations", kind.scheme)
    assert states["admin@example.com"][first.data["hypothesis_id"]].label == kind.scheme.choices[-1].label


def _jwt(header: str, claims: dict, signature: str) -> str:
    body = base64.urlsafe_b64encode(_json.dumps(claims).encode()).decode().rstrip("=")
    return f"{header}.{body}.{signature}"


def test_expired_malformed_and_revoked_personal_access_tokens_exit_2_in_one_line(project, server, runner, monkeypatch):
    from conftest import ROOT

    client = sdk(server.url, server.token)
    token = client.tokens.create().token  # a real personal access token (a JWT)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    works = invoke(runner, "labelstudio", "push", "--project", "by-token", "--create")
    assert works.exit_code == 0, works.output
    header, payload, signature = token.split(".")
    claims = _json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    expired = _jwt(header, {**claims, "exp": int(time.time()) - 86400}, signature)
    no_expiry = _jwt(header, {k: v for k, v in claims.items() if k != "exp"}, signature)
    cases = [
        (expired, "is a personal access token that expired on"),
        (token[:60], "cannot be read"),
        (no_expiry, "without an expiry date"),
        (token[:-12] + "x" * 12, None),
    ]
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT), "LABEL_STUDIO_URL": server.url}
    for key, said in cases:
        run = subprocess.run(
            [sys.executable, "-m", "workbench", "labelstudio", "status", "--project", "by-token"],
            cwd=project,
            env={**env, "LABEL_STUDIO_API_KEY": key},
            capture_output=True,
            text=True,
            timeout=120,
        )
        out = run.stdout + run.stderr
        assert run.returncode == 2, out
        assert "Traceback" not in out and len(run.stderr.strip().splitlines()) == 1, out
        assert key not in out and signature not in out and payload not in out
        assert said in out if said else "refused the personal access token (401)" in out and "revoked" in out, out
    client.tokens.blacklist(refresh=token)  # revoked in Label Studio
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    revoked = invoke(runner, "labelstudio", "pull", "--project", "by-token")
    assert revoked.exit_code == 2 and "refused the personal access token (401)" in str(revoked.exception)
    assert token not in str(revoked.exception) + revoked.output
    assert not (project / "annotations").exists()


def test_a_title_several_projects_share_is_refused_with_their_ids(project, server, runner):
    from workbench.kinds.nli import KIND
    from workbench.labelstudio.scheme import label_config

    assert invoke(runner, "labelstudio", "push", "--project", "twins", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    first = project_id(client, "twins")
    second = client.projects.create(title="twins", label_config=label_config(KIND.scheme, KIND.words)).id
    for command in (["push"], ["push", "--create"], ["pull"], ["status"], ["prune", "--yes"]):
        r = invoke(runner, "labelstudio", *command, "--project", "twins")
        assert r.exit_code == 2, (command, r.output)
        assert f"2 projects in Label Studio at {server.url} are titled 'twins' (ids {first}, {second})" in str(
            r.exception
        )
        assert "--project-id" in str(r.exception)
    assert sorted(p.id for p in client.projects.list() if p.title == "twins") == [first, second]  # no third
    chosen = invoke(runner, "labelstudio", "push", "--project", "twins", "--project-id", str(second))
    assert chosen.exit_code == 0 and f"found project 'twins' (id {second}); imported 50 new task(s)" in chosen.output
    assert len(list(client.tasks.list(project=first, page_size=100))) == 50
    by_id = invoke(runner, "labelstudio", "status", "--project-id", str(second))
    assert by_id.exit_code == 0 and f"project 'twins' (id {second})" in by_id.output
    wrong = invoke(runner, "labelstudio", "pull", "--project", "other", "--project-id", str(first))
    assert wrong.exit_code == 2 and f"project {first} is titled 'twins', not 'other'" in str(wrong.exception)
    missing = invoke(runner, "labelstudio", "pull", "--project-id", "987654")
    assert missing.exit_code == 2 and "no project with id 987654" in str(missing.exception)
    unnamed = invoke(runner, "labelstudio", "status")
    assert unnamed.exit_code == 2 and "--project TITLE (or --project-id ID)" in str(unnamed.exception)


def test_orphan_tasks_are_reported_counted_apart_and_removed_only_when_confirmed(project, server, runner):
    import json

    assert invoke(runner, "labelstudio", "push", "--project", "orphans", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    pid = project_id(client, "orphans")
    tasks = tasks_by_item(client, pid)
    admin = client.users.whoami()
    for item in ("item000000", "item000001", "item000047"):
        annotate(client, tasks[item].id, "invalid", admin.id)
    synthetic_queue(project / ".workbench", 45)  # items 45-49 leave the queue
    pushed = invoke(runner, "labelstudio", "push", "--project", "orphans")
    assert pushed.exit_code == 0, pushed.output
    assert "imported 0 new task(s), 45 already there" in pushed.output
    assert "5 orphan task(s): their items are no longer in the queue (1 annotated)" in pushed.output
    assert "workbench labelstudio prune --project 'orphans'" in pushed.output
    pulled = invoke(runner, "labelstudio", "pull", "--project", "orphans")
    assert pulled.exit_code == 0 and "1 label(s) on them pulled, kept in the label files, not counted" in pulled.output
    assert labels_on_disk(project / "annotations")["admin@example.com"]["item000047"] == "invalid"  # nothing lost
    status = invoke(runner, "labelstudio", "status", "--project", "orphans")
    assert "2/45 queue items labelled" in status.output and "5 orphan task(s)" in status.output
    assert "final labels (single): 2 final, 0 disagreement, 0 not enough votes, 43 unlabelled" in status.output
    assert "admin@example.com: 2" in status.output
    stats = invoke(runner, "annotations", "stats", "--json", "stats.json")
    assert stats.exit_code == 0, stats.output
    summary = json.loads((project / "stats.json").read_text())
    total = summary["breakdown"][-1]
    assert (total["items"], total["invalid"], total["unlabelled"]) == (45, 2, 43)  # what status said
    assert summary["agreement"]["items"] == 2  # the orphan's label not counted

    kept = invoke(runner, "labelstudio", "prune", "--project", "orphans", input="n\n")
    assert kept.exit_code == 0 and "Delete 5 orphan task(s) of project 'orphans'" in kept.output
    assert "1 of them annotated (1 annotation(s))" in kept.output and "nothing deleted" in kept.output
    assert len(list(client.tasks.list(project=pid, page_size=100))) == 50
    gone = invoke(runner, "labelstudio", "prune", "--project", "orphans", input="y\n")
    assert gone.exit_code == 0 and "deleted 5 orphan task(s)" in gone.output, gone.output
    left = {t.data["hypothesis_id"] for t in client.tasks.list(project=pid, fields="all", page_size=100)}
    assert left == {f"item{i:06d}" for i in range(45)}
    assert "no orphan tasks" in invoke(runner, "labelstudio", "prune", "--project", "orphans", "--yes").output
    after = invoke(runner, "labelstudio", "pull", "--project", "orphans")
    assert after.exit_code == 0 and "orphan task" not in after.output and "0 undone" in after.output
    assert labels_on_disk(project / "annotations")["admin@example.com"]["item000047"] == "invalid"


def test_two_annotations_by_one_person_on_a_task_are_reported_and_the_latest_taken(project, server, runner):
    assert invoke(runner, "labelstudio", "push", "--project", "twice", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    task = tasks_by_item(client, project_id(client, "twice"))["item000000"]
    admin = client.users.whoami()
    earlier = annotate(client, task.id, "invalid", admin.id)
    time.sleep(0.05)
    latest = annotate(client, task.id, "incoherent", admin.id)
    pulled = invoke(runner, "labelstudio", "pull", "--project", "twice")
    assert pulled.exit_code == 0, pulled.output
    assert (
        "1 task(s) with more than one annotation by the same person (a person's latest annotation of a task "
        "(last updated) is their label" in pulled.output
    )
    assert (
        f"task {task.id} (admin@example.com): 2 annotations; {latest.id} (incoherent) is taken, not "
        f"{earlier.id} (invalid)"
    ) in pulled.output
    assert "1 annotation(s) read, 1 new label(s)" in pulled.output
    assert labels_on_disk(project / "annotations") == {"admin@example.com": {"item000000": "incoherent"}}
    status = invoke(runner, "labelstudio", "status", "--project", "twice")
    assert "1/50 queue items labelled" in status.output and "admin@example.com: 1" in status.output
    assert f"{latest.id} (incoherent) is taken" in status.output
    client.annotations.delete(id=latest.id)  # the latest gone: the earlier one is the label
    again = invoke(runner, "labelstudio", "pull", "--project", "twice")
    assert again.exit_code == 0 and "1 new label(s)" in again.output and "1 undone" in again.output
    assert "more than one annotation" not in again.output
    assert labels_on_disk(project / "annotations") == {"admin@example.com": {"item000000": "invalid"}}


def test_a_single_vote_is_not_enough_votes_and_status_agrees_with_stats(project, server, runner):
    import json

    from workbench.annotation.session import disagreements
    from workbench.kinds.nli.scheme import NLI_SCHEME

    configure(project, server.url, '\n[annotation]\npolicy = "majority"\nmin_votes = 2\n')
    assert invoke(runner, "labelstudio", "push", "--project", "votes", "--create").exit_code == 0
    client = sdk(server.url, server.token)
    tasks = tasks_by_item(client, project_id(client, "votes"))
    admin, dora = client.users.whoami(), user(client, "dora")
    annotate(client, tasks["item000000"].id, "invalid", admin.id)  # one vote
    for who in (admin, dora):
        annotate(client, tasks["item000001"].id, "incoherent", who.id)  # two that agree
    annotate(client, tasks["item000002"].id, "invalid", admin.id)  # two that do not
    annotate(client, tasks["item000002"].id, "valid-pro", dora.id)
    status = invoke(runner, "labelstudio", "status", "--project", "votes")
    said = "final labels (majority): 1 final, 1 disagreement, 1 not enough votes, 47 unlabelled"
    assert status.exit_code == 0 and said in status.output, status.output
    assert invoke(runner, "labelstudio", "pull", "--project", "votes").exit_code == 0
    assert invoke(runner, "annotations", "stats", "--json", "stats.json").exit_code == 0
    total = json.loads((project / "stats.json").read_text())["breakdown"][-1]
    assert (total["incoherent"], total["disagreement"], total["not-enough-votes"], total["unlabelled"]) == (1, 1, 1, 47)
    from workbench.annotation.session import load_items
    from workbench.core.workspace import Workspace

    items = load_items(Workspace(project / ".workbench"))
    assert sorted(disagreements(project / "annotations", items, "majority", 2, None, NLI_SCHEME)) == ["item000002"]


def test_several_validators_get_independent_settings_and_push_says_what_community_cannot_enforce(
    project, server, runner
):
    configure(project, server.url, "\n[annotation]\nvalidators = 3\n")
    created = invoke(runner, "labelstudio", "push", "--project", "independent", "--create")
    assert created.exit_code == 0, created.output
    note = "Label Studio Community cannot keep annotators from seeing each other's labels"
    assert created.output.count(note) == 1 and "'Label All Tasks'" in created.output
    client = sdk(server.url, server.token)
    settings = client.projects.get(id=project_id(client, "independent"))
    assert settings.maximum_annotations == 3 and settings.show_collab_predictions is False
    assert settings.show_annotation_history is False and "Label on your own" in settings.expert_instruction
    again = invoke(runner, "labelstudio", "push", "--project", "independent")
    assert again.exit_code == 0 and note not in again.output  # said once, when it was set up
    status = invoke(runner, "labelstudio", "status", "--project", "independent")
    assert "independence: not enforced by this server (Community)" in status.output
    configure(project, server.url, "\n[annotation]\nvalidators = 1\n")
    single = invoke(runner, "labelstudio", "push", "--project", "one-person-page", "--create")
    assert single.exit_code == 0 and note not in single.output
    one = client.projects.get(id=project_id(client, "one-person-page"))
    assert one.show_collab_predictions is True and "Label on your own" not in one.expert_instruction
