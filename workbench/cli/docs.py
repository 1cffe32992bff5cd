"""Write docs/commands.md from every command's --help (`python -m workbench.cli.docs > docs/commands.md`)
and docs/config.md from the config schema (`python -m workbench.cli.docs config > docs/config.md`)."""

from __future__ import annotations

import sys


def commands_markdown() -> str:
    import typer.main

    from .main import app

    root = typer.main.get_command(app)
    out = ["# Commands", "", "Generated from `--help` by `python -m workbench.cli.docs`; a test keeps it current.", ""]

    def walk(cmd, path: list[str], parent_ctx=None):
        ctx = cmd.make_context(
            path[-1], [], parent=parent_ctx, resilient_parsing=True, terminal_width=100, max_content_width=100
        )
        out.extend([f"## `{' '.join(path)}`", "", "```", cmd.get_help(ctx).rstrip(), "```", ""])
        for name in sorted(getattr(cmd, "commands", {})):
            walk(cmd.commands[name], path + [name], ctx)

    walk(root, ["workbench"])
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1:] == ["config"]:
        from .init import config_markdown

        sys.stdout.write(config_markdown())
    else:
        sys.stdout.write(commands_markdown())
