"""`workbench annotate`: the Textual app around an annotation session."""

from __future__ import annotations

from typing import Callable

from textual.app import App
from textual.binding import Binding

from ..annotation import display
from ..annotation.keys import binding_ids, keys_for
from .annotate_screen import screen_for
from .content_note import ContentNoteScreen
from .message_screen import MessageScreen


class AnnotateApp(App):
    TITLE = "workbench annotate"
    ENABLE_COMMAND_PALETTE = False  # every action has its own key; no hidden second menu
    # Ctrl+C is what people press to stop a terminal program: quit (labels are already saved).
    BINDINGS = [Binding("ctrl+c", "quit", "Quit", show=False, priority=True)]

    def __init__(
        self,
        session,
        annotator: str,
        *,
        keys: dict[str, str] | None = None,
        content_note: bool = True,
        startup_messages: list[str] | None = None,
        on_ack: Callable[[dict], None] | None = None,
    ):
        super().__init__()
        self.session = session
        self.annotator = annotator
        self.content_note = content_note
        self.messages = list(startup_messages or []) + list(getattr(session, "warnings", []))
        self.on_ack = on_ack
        self.acked: list[str] = []
        self.keys = keys_for(session.scheme)
        known = binding_ids(session.scheme)
        unknown = sorted(set(keys or {}) - known)
        if unknown:
            self.messages.append(
                f"workbench.toml [annotation.keys]: unknown key binding id(s) {', '.join(unknown)}; "
                f"known ids: {', '.join(k[0] for k in self.keys)}. Default keys are used for them."
            )
        self.custom_keys = {k: v for k, v in (keys or {}).items() if k in known}

    def effective_keys(self) -> dict[str, str]:
        return {bid: self.custom_keys.get(bid, key) for bid, key, _a, _d in self.keys}

    def acknowledge(self, event: dict) -> None:
        """Called once an event is on disk (fsynced): the key press is acknowledged."""
        self.acked.append(event["id"])
        if self.on_ack:
            self.on_ack(event)

    def on_mount(self) -> None:
        if self.custom_keys:
            self.set_keymap(self.custom_keys)
        note = display.content_note(self.session.words) if self.content_note else ""
        if note:
            # The labelling screen is created only once the note is accepted.
            self.push_screen(ContentNoteScreen(note), self._after_note)
        else:
            self._start()

    def _after_note(self, accepted: bool | None) -> None:
        if accepted:
            self._start()
        else:
            self.exit()

    def _start(self) -> None:
        self.push_screen(screen_for(self.session.scheme)(self.session, self.annotator))
        for message in reversed(self.messages):
            self.push_screen(MessageScreen("Notice", message, error=True))
        if self.session.resume_note:
            self.notify(self.session.resume_note, title="Resuming", timeout=8)
