"""Push unique hypotheses to a Label Studio project and pull its annotations into the label store.

Push is idempotent: tasks carry their hypothesis_id, and only items not yet in the project
are imported. Pull turns every submitted annotation into a label event (source
`labelstudio`, annotator = the Label Studio user's email) with an id derived from the
annotation and its last update, so pulling again adds nothing and an edited annotation
adds one newer event (latest wins). Cancelled (skipped) annotations are not labels. Pull
reads everything first and writes only when the whole read succeeded.
"""
from __future__ import annotations

import os
import re
from collections import Counter, defaultdict

from ..core.config import Config
from ..core.errors import InputError, WorkbenchError
from ..core.ids import short_hash
from ..core.labels import NLI_SCHEME, LabelScheme
from .scheme import config_problems, label_config, parse_result, result_for


class LabelStudioError(WorkbenchError):
    """Label Studio could not be reached, refused the key, or has no such project."""


def connection(config: Config) -> tuple[str, str]:
    url = os.environ.get("LABEL_STUDIO_URL") or config.labelstudio.url
    key = os.environ.get("LABEL_STUDIO_API_KEY")
    if not key:
        raise InputError("no Label Studio API key: set LABEL_STUDIO_API_KEY (it is never read from workbench.toml)")
    return url.rstrip("/"), key


def annotator_name(email: str | None, user_id: int) -> str:
    name = re.sub(r"[^A-Za-z0-9_.@-]", "_", email or "")[:64].strip("._-@")
    return name or f"labelstudio-user-{user_id}"


class Client:
    """The label-studio-sdk client, with failures turned into clear messages."""

    def __init__(self, url: str, key: str, page_size: int = 100):
        from label_studio_sdk import LabelStudio

        self.url, self.page_size = url, page_size
        self.sdk = LabelStudio(base_url=url, api_key=key, timeout=60)

    def call(self, what: str, fn, *args, **kwargs):
        from label_studio_sdk.core.api_error import ApiError

        try:
            return fn(*args, **kwargs)
        except ApiError as exc:
            if exc.status_code in (401, 403):
                raise LabelStudioError(f"Label Studio at {self.url} refused the API key ({exc.status_code}) while trying to "
                                       f"{what}; check LABEL_STUDIO_API_KEY") from None
            raise LabelStudioError(f"Label Studio at {self.url} answered {exc.status_code} while trying to {what}") from None
        except Exception as exc:
            name = type(exc).__name__
            if any(k in name for k in ("Connect", "Timeout", "RemoteProtocol", "ReadError", "NetworkError")) or isinstance(exc, OSError):
                raise LabelStudioError(f"cannot reach Label Studio at {self.url} while trying to {what} ({name})") from None
            raise

    def check(self) -> None:
        self.call("check the API key", self.sdk.users.whoami)

    def find_project(self, title: str):
        for project in self.call("list projects", lambda: list(self.sdk.projects.list(page_size=self.page_size))):
            if project.title == title:
                return self.call("read the project", self.sdk.projects.get, id=project.id)
        return None

    def project_or_fail(self, title: str, scheme: LabelScheme = NLI_SCHEME):
        project = self.find_project(title)
        if project is None:
            raise LabelStudioError(f"Label Studio at {self.url} has no project named {title!r} (push creates it)")
        problems = config_problems(project.label_config, scheme)
        if problems:
            raise LabelStudioError(f"project {title!r} has a labeling config that does not match workbench's label "
                                   f"scheme: {'; '.join(problems)}")
        return project

    def tasks(self, project_id: int):
        return self.call("read tasks", lambda: list(self.sdk.tasks.list(project=project_id, fields="all",
                                                                         page_size=self.page_size)))

    def annotations(self, task_id: int):
        return self.call("read annotations", self.sdk.annotations.list, id=task_id)


def _context(item) -> str:
    if item.details:  # kinds other than nli say what matters themselves
        return " | ".join([f"{label}: {text}" for label, text in item.details] + [f"{item.domain} / {item.subtopic}"])
    fooled = "; ".join(f"{f['model']} {f['fooled']}/{f['of']}" for f in item.fooled)
    cf = f" -> {item.counterfactual_group}" if item.counterfactual_group else ""
    return (f"template: {item.masked_template} | group: {item.group or '-'}{cf} | {item.domain} / {item.subtopic} | "
            f"written stance: {item.stance} | models fooled: {fooled or '-'}")


def push(config: Config, items: list, title: str, preannotate: str | None = None,
         scheme: LabelScheme = NLI_SCHEME) -> dict:
    """Import one task per queue item not yet in the project (created with the scheme if missing)."""
    from ..annotation.summary import final_labels_for

    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size)
    client.check()
    project = client.find_project(title)
    created = project is None
    if created:
        project = client.call("create the project", client.sdk.projects.create, title=title,
                              label_config=label_config(scheme), description=scheme.question)
    else:
        problems = config_problems(project.label_config, scheme)
        if problems:
            raise LabelStudioError(f"project {title!r} has a labeling config that does not match workbench's label "
                                   f"scheme: {'; '.join(problems)}")
    present = {t.data.get("hypothesis_id") for t in client.tasks(project.id)}
    new = [i for i in items if i.id not in present]
    finals = {}
    if preannotate == "labels":
        finals = final_labels_for(config, [i.id for i in items], scheme).finals
    tasks = []
    for item in new:
        task = {"data": {"hypothesis_id": item.id, "hypothesis": item.hypothesis, "premise": item.premises[0] if item.premises else "",
                         "context": _context(item), "masked_template": item.masked_template, "group": item.group or "",
                         "domain": item.domain, "subtopic": item.subtopic}}
        if preannotate == "labels" and item.id in finals and finals[item.id].category:
            task["predictions"] = [{"model_version": "workbench-labels", "result": result_for(finals[item.id].category, None)}]
        elif preannotate == "fluency" and item.fluency is not None:
            task["predictions"] = [{"model_version": "workbench-fluency", "score": float(item.fluency), "result": []}]
        tasks.append(task)
    for start in range(0, len(tasks), 500):
        client.call("import tasks", client.sdk.projects.import_tasks, id=project.id, request=tasks[start:start + 500])
    return {"project": title, "project_id": project.id, "created": created, "imported": len(tasks),
            "already_there": len(items) - len(tasks), "items": len(items)}


def _read_annotations(client: Client, project_id: int, scheme: LabelScheme = NLI_SCHEME) -> list[dict]:
    users = {u.id: u.email for u in client.call("list users", lambda: list(client.sdk.users.list()))}
    host = client.url
    found = []
    for task in client.tasks(project_id):
        item = (task.data or {}).get("hypothesis_id")
        if not item:
            continue
        for a in client.annotations(task.id):
            if a.was_cancelled:
                continue
            category, note = parse_result(a.result)
            if category not in scheme.ids:
                continue
            updated = (a.updated_at or a.created_at).isoformat()
            found.append({"item": item, "annotator": annotator_name(users.get(a.completed_by), a.completed_by or 0),
                          "category": category, "note": note, "updated": updated,
                          "event_id": "ls-" + short_hash(host, str(project_id), str(a.id), updated)})
    found.sort(key=lambda e: (e["updated"], e["event_id"]))
    return found


def pull(config: Config, title: str, scheme: LabelScheme = NLI_SCHEME) -> dict:
    from ..annotation.store import LabelStore

    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size)
    client.check()
    project = client.project_or_fail(title, scheme)
    annotations = _read_annotations(client, project.id, scheme)   # everything is read before anything is written
    stores: dict[str, LabelStore] = {}
    added = Counter()
    try:
        for a in annotations:
            store = stores.get(a["annotator"]) or stores.setdefault(
                a["annotator"], LabelStore(config.path("annotations"), a["annotator"], scheme=scheme))
            if store.has_event(a["event_id"]):
                continue
            label, stance = scheme.decode(a["category"])
            store.append(a["item"], "label", "labelstudio", event_id=a["event_id"], timestamp=a["updated"],
                         label=label, stance=stance)
            if a["note"]:
                store.append(a["item"], "note", "labelstudio", event_id=a["event_id"] + "-note", timestamp=a["updated"],
                             note=a["note"])
            added[a["annotator"]] += 1
    finally:
        for store in stores.values():
            store.close()
    return {"project": title, "annotations": len(annotations), "new_labels": sum(added.values()),
            "by_annotator": dict(sorted(added.items()))}


def status(config: Config, title: str, scheme: LabelScheme = NLI_SCHEME) -> dict:
    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size)
    client.check()
    project = client.project_or_fail(title, scheme)
    annotations = _read_annotations(client, project.id, scheme)
    tasks = client.tasks(project.id)
    per_annotator: dict[str, set] = defaultdict(set)
    for a in annotations:
        per_annotator[a["annotator"]].add(a["item"])
    labelled = {a["item"] for a in annotations}
    return {"project": title, "tasks": len(tasks), "labelled_tasks": len(labelled),
            "by_annotator": {k: len(v) for k, v in sorted(per_annotator.items())}}
