"""Push unique hypotheses to a Label Studio project and pull its annotations into the label store.

Push is idempotent: tasks carry their hypothesis_id, and only items not yet in the project
are imported; the project asks for as many annotators per task as the annotation policy needs
(`overlap`), so agreement can be computed. Pull turns every submitted annotation into a label
event (source `labelstudio`, annotator = the user's email or its `[labelstudio.annotators]`
name) with an id derived from the annotation and its last update, so pulling again adds
nothing and an edited annotation adds one newer event (latest wins). Each event records its
annotation (`ls_annotation` = "<project id>:<annotation id>"), so an annotation deleted in
Label Studio, or no longer readable, becomes an undo event. Annotations that cannot be taken
are reported one by one, never dropped or coerced silently. Pull reads the tasks a page at a
time (`[labelstudio] page_size`) and writes each page's labels before it reads the next, each
annotator's new events of a page in one batch: a project of a million tasks is never held whole,
and a pull cut short keeps the pages it wrote (pulling again completes it). Undoing what Label
Studio no longer has waits until every page is read.

What teams run into is said, never decided silently: a title shared by several projects is
refused (`--project-id` picks one); tasks of items that left the queue (orphans) are counted
apart and can be removed (`prune`); a person with two annotations on one task has their latest
taken and the others listed; and Label Studio Community, which lets everyone see everyone's
annotations, is named as such when several validators are meant to label independently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import base64
import json
import math
import os
import time
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..annotation import display
from ..core.config import Config
from ..core.errors import ConfigError, InputError, WorkbenchError
from ..core.ids import short_hash
from ..core.labels import LabelScheme
from .page import Page, page_for
from .scheme import ID_KEY, config_problems, parse_fix, parse_result, result_for

if TYPE_CHECKING:
    from ..contract.kind import Kind

SOURCE = "labelstudio"
IMPORT_BATCH = 500  # tasks sent to Label Studio in one request
LABELS_MODEL, FLUENCY_MODEL = "workbench-labels", "workbench-fluency"


class LabelStudioError(WorkbenchError):
    """Label Studio could not be reached, refused the key, or has no such project."""


def connection(config: Config) -> tuple[str, str]:
    """The server URL and API key, checked before any request: a URL without http:// and a
    key with a stray space otherwise fail deep inside httpx, with the key in the traceback."""
    from_env = os.environ.get("LABEL_STUDIO_URL")
    url = (from_env or config.labelstudio.url).strip()
    where = "LABEL_STUDIO_URL" if from_env else config.at("labelstudio.url")
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 1) > 0
    except ValueError:
        ok = False
    if not ok:
        raise InputError(
            f"Label Studio URL {url!r} ({where}) is not an http(s) URL: write it with its scheme, "
            f"e.g. http://{url.split('://')[-1] or 'localhost:8080'}"
        )
    key = os.environ.get("LABEL_STUDIO_API_KEY")
    if not key:
        raise InputError("no Label Studio API key: set LABEL_STUDIO_API_KEY (it is never read from workbench.toml)")
    if not key.isascii() or any(c.isspace() or not c.isprintable() for c in key):
        raise InputError(
            "LABEL_STUDIO_API_KEY contains a space, newline or other invisible character (copied with "
            "the key?); set it to the key alone (the key is not shown here)"
        )
    problem = token_problem(key)
    if problem:
        raise InputError(f"LABEL_STUDIO_API_KEY {problem} (the key is not shown here)")
    return url.rstrip("/"), key


def _b64json(part: str):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def is_token(key: str) -> bool:
    """A personal access token (a JWT: three dot-separated parts, the first a JSON header),
    as opposed to a legacy API key (hex)."""
    return key.startswith("eyJ") or key.count(".") == 2


def token_problem(key: str, now: float | None = None) -> str | None:
    """Why a personal access token cannot work, read from the token itself before any request
    (the SDK would raise from deep inside itself); None for legacy keys and usable tokens.
    Nothing of the token is in the answer."""
    if not is_token(key):
        return None
    where = "create a new one in Label Studio (Account & Settings > Personal Access Token)"
    try:
        header, payload, _signature = key.split(".")
        if not isinstance(_b64json(header), dict):
            raise ValueError
        claims = _b64json(payload)
        if not isinstance(claims, dict):
            raise ValueError
    except (ValueError, UnicodeDecodeError):
        return (
            "looks like a personal access token but cannot be read (cut short or changed when it was "
            f"copied?): copy it again, or {where}"
        )
    expires = claims.get("exp")
    if not isinstance(expires, (int, float)):
        return f"is a personal access token without an expiry date, which Label Studio does not accept: {where}"
    if expires < (time.time() if now is None else now):
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(expires))
        return f"is a personal access token that expired on {when}: {where}"
    if claims.get("token_type") not in (None, "refresh"):
        return f"is a {claims.get('token_type')} token, not a personal access token (those are refresh tokens): {where}"
    return None


def overlap(config: Config, kind: "Kind") -> tuple[int, str]:
    """How many annotators each task needs, and why: `[annotation] validators` when set; else the
    kind's default (the number its benchmark was validated with); else 2 for policies that compare labels (majority needs
    min_votes); else 1."""
    ac = config.annotation
    if "validators" in ac.model_fields_set:
        return ac.validators, f"[annotation] validators = {ac.validators}"
    default = kind.default_validators
    if default:  # a kind whose benchmark was validated by a set number of people
        return default, f"{kind.name}'s {default} validators per item"
    if ac.policy == "majority":
        return max(2, ac.min_votes), f"[annotation] policy = majority, min_votes = {ac.min_votes}"
    if ac.policy == "adjudicator":
        return 2, "[annotation] policy = adjudicator"
    return 1, "[annotation] policy = single"


def annotator_name(email: str | None, user_id: int) -> str:
    import re

    name = re.sub(r"[^A-Za-z0-9_.@-]", "_", email or "")[:64].strip("._-@")
    return name or f"labelstudio-user-{user_id}"


def _namer(config: Config, users: dict[int, str]):
    """user id -> annotator name, through `[labelstudio.annotators]` (e-mails compared case-blind)."""
    from ..annotation.store import check_annotator

    mapping = {}
    for email, name in config.labelstudio.annotators.items():
        try:
            mapping[email.strip().lower()] = check_annotator(name)
        except InputError as exc:
            raise ConfigError(f"{config.at('labelstudio.annotators')}: {email!r}: {exc}") from None

    def name(user_id: int | None) -> str:
        email = users.get(user_id)
        return mapping.get((email or "").lower()) or annotator_name(email, user_id or 0)

    return name


class Client:
    """The label-studio-sdk client, with every failure turned into a clear message (never the key)."""

    def __init__(self, url: str, key: str, page_size: int = 100, timeout: float = 30):
        from label_studio_sdk import LabelStudio

        self.url, self.page_size, self.timeout = url, page_size, timeout
        self.token = is_token(key)
        # The SDK reads a personal access token as soon as it is made: its errors are ours to word.
        self.sdk = self.call("use the API key", LabelStudio, base_url=url, api_key=key, timeout=timeout, max_retries=1)

    def call(self, what: str, fn, *args, **kwargs):
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        try:
            return fn(*args, **kwargs)
        except WorkbenchError:
            raise
        except ApiError as exc:
            if exc.status_code in (401, 403):
                token = getattr(self, "token", False)
                raise LabelStudioError(
                    f"Label Studio at {self.url} refused the "
                    f"{'personal access token' if token else 'API key'} ({exc.status_code}) while "
                    f"trying to {what}; check LABEL_STUDIO_API_KEY"
                    + (" (a token revoked in Label Studio, or made on another server, is refused)" if token else "")
                ) from None
            detail = exc.body.get("validation_errors") or exc.body.get("detail") if isinstance(exc.body, dict) else None
            raise LabelStudioError(
                f"Label Studio at {self.url} answered {exc.status_code} while trying to {what}"
                + (f": {str(detail)[:300]}" if detail else "")
            ) from None
        except httpx.TimeoutException:
            raise LabelStudioError(
                f"Label Studio at {self.url} did not answer within {self.timeout:g} s while trying to "
                f"{what} (a slow server: raise [labelstudio] timeout)"
            ) from None
        except (httpx.HTTPError, OSError) as exc:
            raise LabelStudioError(
                f"cannot reach Label Studio at {self.url} while trying to {what} ({type(exc).__name__})"
            ) from None
        except Exception as exc:  # an answer the SDK cannot parse: a message, not a traceback
            raise LabelStudioError(
                f"Label Studio at {self.url} gave an answer workbench cannot read while trying to "
                f"{what} ({type(exc).__name__}); is it Label Studio?"
            ) from None

    def check(self) -> None:
        self.call("check the API key", self.sdk.users.whoami)

    def titles(self) -> list:
        return self.call("list projects", lambda: list(self.sdk.projects.list(page_size=self.page_size)))

    def edition(self) -> str:
        """ "Community", "Enterprise", ... as the server says (empty when it does not)."""
        try:
            version = self.call("read the server's version", self.sdk.versions.get)
        except LabelStudioError:
            return ""
        return str(
            getattr(version, "edition", "") or (version.get("edition") if isinstance(version, dict) else "") or ""
        )

    def find_project(self, title: str | None, project_id: int | None = None):
        """The project with this title (or this id), None when there is none. A title that
        several projects share is refused with their ids: picking one would be a guess."""
        if project_id is not None:
            from label_studio_sdk.core.api_error import ApiError

            def get():
                try:
                    return self.sdk.projects.get(id=project_id)
                except ApiError as exc:
                    if exc.status_code == 404:
                        return None
                    raise

            project = self.call("read the project", get)
            if project is None:
                raise LabelStudioError(f"Label Studio at {self.url} has no project with id {project_id}")
            if title is not None and project.title != title:
                raise LabelStudioError(
                    f"project {project_id} is titled {project.title!r}, not {title!r}: pass the "
                    "title it has, or only --project-id"
                )
            return project
        same = sorted((p for p in self.titles() if p.title == title), key=lambda p: p.id)
        if len(same) > 1:
            ids = ", ".join(str(p.id) for p in same)
            raise LabelStudioError(
                f"{len(same)} projects in Label Studio at {self.url} are titled {title!r} (ids {ids}); "
                f"pass --project-id with the one you mean (e.g. --project-id {same[-1].id})"
            )
        if same:
            return self.call("read the project", self.sdk.projects.get, id=same[0].id)
        return None

    def project_or_fail(self, title: str | None, scheme: LabelScheme, words=None, project_id: int | None = None):
        project = self.find_project(title, project_id)
        if project is None:
            raise LabelStudioError(
                f"Label Studio at {self.url} has no project named {title!r} "
                "(`workbench labelstudio push --create` creates it)"
            )
        check_config(project, scheme, words)
        return project

    def users(self) -> dict[int, str]:
        return {u.id: u.email for u in self.call("list users", lambda: list(self.sdk.users.list()))}

    def task_pages(self, project, progress=None) -> Iterator[list[dict]]:
        """The project's tasks with their annotations, `page_size` at a time (GET /api/tasks,
        fields=all): memory holds one page, not the project (its export is a gigabyte of JSON
        at a million tasks). Pages are read until `total` tasks came or a page is empty."""
        from ..core.progress import progress_bar

        n = project.task_number or 0
        if progress and n:
            progress(f"reading {n} task(s) of {project.title!r} from Label Studio, {self.page_size} a request…")
        options = {"timeout_in_seconds": self.timeout + self.page_size / 100, "max_retries": 1}

        def page(number: int):
            return self.sdk.tasks.list(
                project=project.id, fields="all", page=number, page_size=self.page_size, request_options=options
            ).response

        seen, number = 0, 1
        with progress_bar("reading tasks", n) as advance:
            while True:
                found = self.call("read tasks", page, number)
                tasks = [{"id": t.id, "data": t.data, "annotations": t.annotations or []} for t in found.tasks or []]
                if not tasks:
                    return
                yield tasks
                advance(len(tasks))
                seen, number = seen + len(tasks), number + 1
                total = found.total if isinstance(found.total, int) else None
                if total is not None and seen >= total:
                    return

    def tasks(self, project, progress=None) -> list[dict]:
        """Every task of the project (`task_pages`, held together: for what needs them all)."""
        return [t for page in self.task_pages(project, progress) for t in page]


def check_config(project, scheme: LabelScheme, words=None) -> None:
    problems = config_problems(project.label_config, scheme, words)
    if problems:
        raise LabelStudioError(
            f"project {project.title!r} has a labeling config that does not match workbench's label "
            f"scheme: {'; '.join(problems)}. `workbench labelstudio config` prints the expected one: "
            "paste it in the project's Settings > Labeling Interface > Code"
        )


# -- what the annotator sees --------------------------------------------------------------
def instructions(page: Page, validators: int = 1) -> str:
    """The project's instructions (HTML), shown before the first task: the kind's words (page.py),
    its content note included (none for a kind whose items need none)."""
    return page.instructions(display.content_note(page.words, medium="labelstudio"), validators)


def task_data(item, page: Page) -> dict:
    return page.task_data(item)


# -- push ---------------------------------------------------------------------------------
def _wanted_predictions(config: Config, items: list, preannotate: str | None, scheme: LabelScheme) -> dict[str, dict]:
    """item id -> the one prediction it should carry (model_version, result, score)."""
    from ..annotation.summary import final_labels_for

    wanted = {}
    if preannotate == "labels":
        labels = final_labels_for(config, [i.id for i in items], scheme)
        for item in items:
            final = labels.finals[item.id]
            if final.status != "final":
                continue
            states = [(a, s[item.id]) for a, s in sorted(labels.states.items()) if item.id in s]
            note = "; ".join(f"{a}: {s.note}" for a, s in states if s.note) or None
            wanted[item.id] = {
                "model_version": LABELS_MODEL,
                "score": None,
                "result": result_for(final.category, note, any(s.flag for _, s in states)),
            }
    elif preannotate == "fluency":
        for item in items:
            if item.fluency is not None:  # exp(mean log-prob per token): 0-1, higher is more fluent
                wanted[item.id] = {
                    "model_version": FLUENCY_MODEL,
                    "score": round(math.exp(item.fluency), 4),
                    "result": [],
                }
    return wanted


def _sync_predictions(
    client: Client, project_id: int, task_ids: dict[str, int], wanted: dict[str, dict], version: str
) -> Counter:
    """One prediction of `version` per task: created where missing, replaced where it changed,
    removed where there is no longer one to make (e.g. the final label went to disagreement)."""
    done = Counter()
    have = defaultdict(list)
    for p in client.call("read predictions", client.sdk.predictions.list, project=project_id):
        if p.model_version == version:
            have[p.task].append(p)
    for item, task in task_ids.items():
        want, old = wanted.get(item), have.get(task, [])
        if want and len(old) == 1 and old[0].result == want["result"] and old[0].score == want["score"]:
            done["kept"] += 1
            continue
        for p in old:
            client.call("delete a prediction", client.sdk.predictions.delete, id=p.id)
            done["removed"] += 1
        if want:
            client.call(
                "create a prediction",
                client.sdk.predictions.create,
                task=task,
                **{k: v for k, v in want.items() if v is not None},
            )
            done["created"] += 1
    return done


# Project settings that keep validators from anchoring on each other where Label Studio lets
# the API set them: no predictions shown as pre-labels, no annotation history, every task in
# the overlap. What Community cannot hide (other people's annotations, opened from the task
# list) is said by push (COMMUNITY_NOTE) and in the instructions.
INDEPENDENT = {"show_collab_predictions": False, "show_annotation_history": False, "overlap_cohort_percentage": 100}
COMMUNITY_NOTE = (
    "Label Studio {edition} cannot keep annotators from seeing each other's labels: anyone who opens a task from the "
    "task list sees every annotation on it. For independent validation by {n} people, annotators should label only "
    "through 'Label All Tasks' (which shows each person only their own work); Label Studio Enterprise's annotator "
    "role enforces it. Set on the project: predictions not shown to annotators, no annotation history, every task "
    "in the overlap."
)


def push(
    config: Config,
    items: list,
    title: str | None,
    preannotate: str | None = None,
    *,
    kind: "Kind",
    create: bool = False,
    progress=None,
    project_id: int | None = None,
) -> dict:
    """Import one task per queue item not yet in the project. The project is created only when
    asked (a typo in the title would otherwise make a second project with every task)."""
    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size, config.labelstudio.timeout)
    client.check()
    scheme = kind.scheme
    page = page_for(scheme, kind.words)
    want_overlap, why = overlap(config, kind)
    project = client.find_project(title, project_id)
    created, overlap_was, independence = project is None, None, None
    if created:
        if not create or title is None:
            others = sorted(p.title for p in client.titles())
            raise LabelStudioError(
                f"Label Studio at {url} has no project named {title!r}; pass --create to create it"
                + (f" (existing: {', '.join(repr(t) for t in others[:20])})" if others else "")
            )
        settings = INDEPENDENT if want_overlap > 1 else {}
        project = client.call(
            "create the project",
            client.sdk.projects.create,
            title=title,
            label_config=page.config(),
            description=display_question(kind),
            expert_instruction=instructions(page, want_overlap),
            show_instruction=True,
            maximum_annotations=want_overlap,
            **settings,
        )
        if want_overlap > 1:
            independence = _independence(client, want_overlap)
    else:
        check_config(project, scheme, kind.words)
        if project.maximum_annotations != want_overlap:
            overlap_was = project.maximum_annotations
            more = INDEPENDENT if want_overlap > 1 and (overlap_was or 1) <= 1 else {}
            client.call(
                "set the overlap",
                client.sdk.projects.update,
                id=project.id,
                maximum_annotations=want_overlap,
                expert_instruction=instructions(page, want_overlap),
                **more,
            )
            if more:
                independence = _independence(client, want_overlap)
    existing = [] if created else client.tasks(project, progress)
    present = {(t.get("data") or {}).get(ID_KEY): t["id"] for t in existing}
    queue = {i.id for i in items}
    orphans = [t for t in existing if is_orphan(t, queue)]
    wanted = _wanted_predictions(config, items, preannotate, scheme)
    new = [item for item in items if item.id not in present]
    created_predictions = 0
    # each batch's tasks made as it is sent: a million tasks made at once took gigabytes
    for start in range(0, len(new), IMPORT_BATCH):
        if progress and len(new) > IMPORT_BATCH:
            progress(f"importing tasks {start + 1}-{min(start + IMPORT_BATCH, len(new))} of {len(new)}…")
        tasks = []
        for item in new[start : start + IMPORT_BATCH]:
            task = {"data": task_data(item, page)}
            if item.id in wanted:
                task["predictions"] = [{k: v for k, v in wanted[item.id].items() if v is not None}]
                created_predictions += 1
            tasks.append(task)
        client.call("import tasks", client.sdk.projects.import_tasks, id=project.id, request=tasks)
    predictions = Counter({"created": created_predictions})
    if preannotate and present:
        in_queue = {i.id: present[i.id] for i in items if i.id in present}
        predictions += _sync_predictions(
            client, project.id, in_queue, wanted, LABELS_MODEL if preannotate == "labels" else FLUENCY_MODEL
        )
    return {
        "project": project.title,
        "project_id": project.id,
        "created": created,
        "imported": len(new),
        "already_there": len(items) - len(new),
        "items": len(items),
        "overlap": want_overlap,
        "overlap_why": why,
        "overlap_was": overlap_was,
        "predictions": dict(predictions),
        "orphans": orphan_summary(orphans),
        "independence": independence,
    }


def display_question(kind: "Kind") -> str:
    from ..annotation import display

    return display.question(None, kind.words, kind.scheme)


def _independence(client: Client, validators: int) -> str | None:
    """What push says once, when a project becomes one for several independent validators."""
    edition = client.edition() or "Community"
    if edition.lower().startswith("enterprise"):
        return None
    return COMMUNITY_NOTE.format(edition=edition, n=validators)


def is_orphan(task: dict, queue: set[str]) -> bool:
    """A task workbench made for an item that is no longer in the queue (tasks it did not make
    are not its to count or delete)."""
    item = (task.get("data") or {}).get(ID_KEY)
    return bool(item) and item not in queue


def orphan_summary(tasks: list[dict]) -> dict:
    """Orphan tasks: how many, how many of them annotated, their annotations, their ids."""
    annotated = [t for t in tasks if any(not a.get("was_cancelled") for a in t.get("annotations") or [])]
    return {
        "tasks": len(tasks),
        "annotated": len(annotated),
        "annotations": sum(len(t.get("annotations") or []) for t in tasks),
        "ids": sorted(t["id"] for t in tasks),
    }


def prune(
    config: Config,
    items: list,
    title: str | None,
    *,
    kind: "Kind",
    confirm,
    project_id: int | None = None,
    progress=None,
) -> dict:
    """Delete the project's orphan tasks (and their annotations) once `confirm(summary)` says yes.
    Labels already pulled from them stay in the label files."""
    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size, config.labelstudio.timeout)
    client.check()
    project = client.project_or_fail(title, kind.scheme, kind.words, project_id)
    queue = {i.id for i in items}
    orphans = [t for tasks in client.task_pages(project, progress) for t in tasks if is_orphan(t, queue)]
    summary = {**orphan_summary(orphans), "project": project.title, "project_id": project.id, "deleted": 0}
    if not orphans or not confirm(summary):
        return summary
    ids = summary["ids"]
    for start in range(0, len(ids), 500):
        client.call(
            "delete orphan tasks",
            client.sdk.actions.create,
            id="delete_tasks",
            project=project.id,
            selected_items={"all": False, "included": ids[start : start + 500]},
        )
    summary["deleted"] = len(ids)
    return summary


# -- pull and status ------------------------------------------------------------------------
@dataclass
class Read:
    tasks: int = 0
    taken: list[dict] = field(default_factory=list)  # one per (task, person): their label
    refused: list[str] = field(default_factory=list)  # why each other annotation was not taken
    skipped: list[str] = field(default_factory=list)  # annotations cancelled (skipped) in Label Studio
    duplicates: list[str] = field(default_factory=list)  # a person's earlier annotations of a task, set aside
    per_task: dict[str, set] = field(default_factory=lambda: defaultdict(set))  # item -> annotators
    orphans: list[dict] = field(default_factory=list)  # tasks of items no longer in the queue
    queue: set[str] | None = None  # the queue's item ids, when the caller gave them


DUPLICATE_RULE = (
    "a person's latest annotation of a task (last updated) is their label; their earlier ones are not taken"
)


def read_annotations(
    config: Config, client: Client, project, scheme: LabelScheme, progress=None, queue: set[str] | None = None
) -> Read:
    """Every annotation that is a label, one per person and task (DUPLICATE_RULE), with what was
    not taken and why; with `queue`, tasks of items that left it are set apart as orphans."""
    name = _namer(config, client.users())
    read = Read(queue=queue)
    for tasks in client.task_pages(project, progress):
        for latest in page_labels(tasks, read, name, client, project, scheme):
            read.taken.append(latest)
            read.per_task[latest["item"]].add(latest["annotator"])
    read.taken.sort(key=lambda e: (e["updated"], e["event_id"]))
    return read


def page_labels(tasks: list[dict], read: Read, name, client: Client, project, scheme: LabelScheme) -> list[dict]:
    """The labels of one page of tasks, one per person and task (DUPLICATE_RULE: a task's
    annotations all come with it), oldest first; counts, orphans and what was not taken go to
    `read` (its `taken` and `per_task` are the caller's: pull keeps neither)."""
    mine: dict[tuple, list[dict]] = defaultdict(list)
    for task in tasks:
        read.tasks += 1
        if read.queue is not None and is_orphan(task, read.queue):
            read.orphans.append(task)
        item = (task.get("data") or {}).get(ID_KEY)
        for a in task.get("annotations") or []:
            who = name(a.get("completed_by"))
            where = f"annotation {a.get('id')} (task {task.get('id')}, {who})"
            if a.get("was_cancelled"):
                read.skipped.append(where)
                continue
            choices, note, flag = parse_result(a.get("result"))
            if not item:
                read.refused.append(f"{where}: the task has no {ID_KEY} (not imported by workbench)")
            elif not choices:
                read.refused.append(f"{where}: no label chosen")
            elif len(choices) > 1:
                read.refused.append(f"{where}: {len(choices)} labels {choices} where one is expected")
            elif choices[0] not in scheme.ids:
                read.refused.append(f"{where}: label {choices[0]!r} is not one of {', '.join(scheme.ids)}")
            else:
                updated = a.get("updated_at") or a.get("created_at") or ""
                mine[(task.get("id"), annotator_key_of(who))].append(
                    {
                        "item": item,
                        "annotator": who,
                        "category": choices[0],
                        "note": note,
                        "flag": flag,
                        "fix": parse_fix(a.get("result")),
                        "updated": updated,
                        "ref": f"{project.id}:{a.get('id')}",
                        "annotation": a.get("id"),
                        "task": task.get("id"),
                        "event_id": "ls-" + short_hash(client.url, str(project.id), str(a.get("id")), updated),
                    }
                )
    taken = []
    for (_task, _who), found in mine.items():
        found.sort(key=lambda e: (e["updated"], e["annotation"] or 0))
        latest = found[-1]
        if len(found) > 1:
            earlier = ", ".join(f"{e['annotation']} ({e['category']})" for e in found[:-1])
            read.duplicates.append(
                f"task {latest['task']} ({latest['annotator']}): {len(found)} annotations; "
                f"{latest['annotation']} ({latest['category']}) is taken, not {earlier}"
            )
        taken.append(latest)
    taken.sort(key=lambda e: (e["updated"], e["event_id"]))
    return taken


def annotator_key_of(name: str) -> str:
    from ..annotation.store import annotator_key

    return annotator_key(name)


class _Stores:
    """The label stores pull writes to, opened on first use (one per annotator, whatever the
    case of the name) and closed by `stack`; what is appended inside `batch()` is committed at
    its end, one batch per store; with each item's latest note and flag event at hand (to know
    whether Label Studio changed them)."""

    def __init__(self, config: Config, scheme: LabelScheme, stack: ExitStack):
        self.folder, self.scheme, self.stack = config.path("annotations"), scheme, stack
        self.open: dict = {}
        self.latest: dict[str, dict] = {}
        self.page: ExitStack | None = None

    @contextmanager
    def batch(self):
        """Every store's events appended inside, each store's in one write (whole or absent)."""
        with ExitStack() as page:
            self.page = page
            for store in self.open.values():
                page.enter_context(store.batch())
            try:
                yield
            finally:
                self.page = None

    def __call__(self, annotator: str):
        from ..annotation.store import LabelStore, annotator_key

        key = annotator_key(annotator)
        if key not in self.open:
            store = self.open[key] = LabelStore(self.folder, annotator, scheme=self.scheme)
            self.stack.callback(store.close)
            if self.page is not None:
                self.page.enter_context(store.batch())
            self.latest[key] = {(e["item"], e["type"]): e for e in store.events if e["type"] in ("note", "flag")}
        return self.open[key]

    def last(self, annotator: str) -> dict:
        """(item, note|flag) -> the latest such event of the annotator."""
        from ..annotation.store import annotator_key

        self(annotator)
        return self.latest[annotator_key(annotator)]

    def set(
        self, annotator: str, item: str, kind: str, value, event_id: str, ref: str, timestamp: str | None = None
    ) -> bool:
        """Write a note/flag event when the value differs from the item's current one."""
        store = self(annotator)
        last = self.last(annotator).get((item, kind))
        current = last.get(kind) if last else None
        if (current or None) == (value or None) or store.has_event(event_id):
            return False
        event = store.append(
            item, kind, SOURCE, event_id=event_id, timestamp=timestamp, ls_annotation=ref, **{kind: value}
        )
        self.last(annotator)[(item, kind)] = event
        return True


def pull(
    config: Config,
    title: str | None,
    scheme: LabelScheme,
    progress=None,
    *,
    words=None,
    project_id: int | None = None,
    queue: set[str] | None = None,
) -> dict:
    """Each page of tasks is read, then its labels written, each annotator's new events of the
    page as one batch (one fsync), which readers see whole or not at all: a pull cut short keeps
    the pages written before. Labels on orphan tasks are written too (nothing is lost) and
    counted apart. What Label Studio no longer has is undone once every page is read."""
    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size, config.labelstudio.timeout)
    client.check()
    project = client.project_or_fail(title, scheme, words, project_id)
    name = _namer(config, client.users())
    read = Read(queue=queue)
    live: dict[str, str] = {}  # every label's annotation -> its annotator, for _retract
    added, undone, orphan_labels = Counter(), 0, 0
    with ExitStack() as stack:  # on the way out: every store closed
        stores = _Stores(config, scheme, stack)
        for tasks in client.task_pages(project, progress):
            orphans = {(t.get("data") or {}).get(ID_KEY) for t in tasks if queue is not None and is_orphan(t, queue)}
            taken = page_labels(tasks, read, name, client, project, scheme)
            del tasks
            with stores.batch():  # committed when the page is written (or, after an error, dropped)
                for a in taken:
                    _write_label(stores, scheme, a, added)
            live.update((a["ref"], a["annotator"]) for a in taken)
            orphan_labels += sum(1 for a in taken if a["item"] in orphans)
        with stores.batch():
            undone = _retract(stores, f"{project.id}:", live, queue)
    return {
        "project": project.title,
        "project_id": project.id,
        "annotations": len(live),
        "new_labels": sum(added.values()),
        "by_annotator": dict(sorted(added.items())),
        "undone": undone,
        "refused": read.refused,
        "skipped": len(read.skipped),
        "duplicates": read.duplicates,
        "orphans": {**orphan_summary(read.orphans), "labels": orphan_labels},
    }


def _write_label(stores: _Stores, scheme: LabelScheme, a: dict, added: Counter) -> None:
    """One taken annotation as a label event (unless pulled before), with its note and flag."""
    store = stores(a["annotator"])
    if not store.has_event(a["event_id"]):
        label, stance = scheme.decode(a["category"])
        store.append(
            a["item"],
            "label",
            SOURCE,
            event_id=a["event_id"],
            timestamp=a["updated"],
            label=label,
            stance=stance,
            ls_annotation=a["ref"],
            fix=a["fix"],
        )
        added[a["annotator"]] += 1
    for kind, value in (("note", a["note"] or ""), ("flag", a["flag"])):
        last = stores.last(a["annotator"]).get((a["item"], kind))
        if value or (last and last.get("ls_annotation") == a["ref"]):  # clear only what this annotation set
            stores.set(a["annotator"], a["item"], kind, value, f"{a['event_id']}-{kind}", a["ref"], a["updated"])


def _retract(stores: _Stores, prefix: str, live: dict[str, str], queue: set[str] | None = None) -> int:
    """Undo every label of this project whose annotation is gone (deleted, skipped, no longer a
    label) or now belongs to another annotator name; clear the note and flag it had set. Items
    that left the queue keep theirs: their tasks may have been pruned, which takes nothing back."""
    from ..annotation.store import NAME, annotator_key

    undone = 0
    for path in sorted(stores.folder.glob("*.jsonl")) if stores.folder.is_dir() else []:
        if not NAME.match(path.stem):
            continue  # not a file workbench writes
        store = stores(path.stem)
        mine = annotator_key(store.annotator)
        gone = {
            ref
            for e in store.events
            if (ref := e.get("ls_annotation") or "").startswith(prefix) and annotator_key(live.get(ref, "")) != mine
        }
        if not gone:
            continue
        for item, state in list(store.states.items()):
            if queue is not None and item not in queue:
                continue
            for e in [e for e in state.history.values() if e.get("ls_annotation") in gone]:
                store.append(
                    item,
                    "undo",
                    SOURCE,
                    event_id="ls-undo-" + short_hash(e["id"]),
                    undoes=e["id"],
                    ls_annotation=e["ls_annotation"],
                )
                undone += 1
        for (item, kind), last in list(stores.last(path.stem).items()):
            if queue is not None and item not in queue:
                continue
            if last.get("ls_annotation") in gone and last.get(kind):
                stores.set(
                    path.stem,
                    item,
                    kind,
                    "" if kind == "note" else False,
                    f"ls-clear-{short_hash(last['id'])}",
                    last["ls_annotation"],
                )
    return undone


def status(
    config: Config,
    title: str | None,
    scheme: LabelScheme,
    progress=None,
    *,
    words=None,
    project_id: int | None = None,
    queue: list[str] | None = None,
) -> dict:
    """The project's progress over the queue's items (orphan tasks counted apart), and the final
    labels its annotations give under the configured policy: after a pull, the figures
    `workbench annotations stats` shows when every label comes from Label Studio."""
    from ..annotation.policy import STATUSES, final_labels
    from ..annotation.store import ItemState

    url, key = connection(config)
    client = Client(url, key, config.labelstudio.page_size, config.labelstudio.timeout)
    client.check()
    project = client.project_or_fail(title, scheme, words, project_id)
    ids = set(queue) if queue is not None else None
    read = read_annotations(config, client, project, scheme, progress, ids)
    counted = [a for a in read.taken if ids is None or a["item"] in ids]
    per_annotator: dict[str, set] = defaultdict(set)
    states: dict[str, dict] = defaultdict(dict)
    for a in counted:
        per_annotator[a["annotator"]].add(a["item"])
        label, stance = scheme.decode(a["category"])
        states[a["annotator"]][a["item"]] = ItemState(label=label, stance=stance)
    need = project.maximum_annotations or 1
    tasks = read.tasks - len(read.orphans)
    labelled = {a["item"] for a in counted}
    short = tasks - sum(1 for item, who in read.per_task.items() if (ids is None or item in ids) and len(who) >= need)
    finals = {}
    if queue is not None:
        ac = config.annotation
        found = final_labels(dict(states), list(queue), ac.policy, ac.min_votes, ac.adjudicator, scheme=scheme)
        finals = {s: 0 for s in STATUSES}
        for f in found.values():
            finals[f.status] += 1
    independent = None
    if need > 1:
        edition = client.edition() or "Community"
        independent = not edition.lower().startswith("community")
    return {
        "project": project.title,
        "project_id": project.id,
        "tasks": tasks,
        "labelled_tasks": len(labelled),
        "overlap": need,
        "short_of_overlap": short,
        "skipped": len(read.skipped),
        "refused": read.refused,
        "duplicates": read.duplicates,
        "orphans": orphan_summary(read.orphans),
        "finals": finals,
        "policy": config.annotation.policy,
        "independent": independent,
        "by_annotator": {k: len(v) for k, v in sorted(per_annotator.items())},
    }
