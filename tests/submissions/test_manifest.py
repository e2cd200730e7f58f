"""arena.botcommand's manifest: arena-bot.toml of an uploaded bot, each mistake refused with what
to do, and the command the sandbox runs (the launcher's, through arena.botcommand)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from arena import botcommand
from arena.botcommand import BadManifest, Manifest


def read_manifest(directory: Path) -> Manifest:
    """An upload's manifest, as the owners' API reads it."""
    return botcommand.read_manifest(directory, upload=True)


def bot(tmp_path: Path, manifest: str | None, files=("bot.py",)) -> Path:
    directory = tmp_path / "bot"
    directory.mkdir()
    for name in files:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text("print('hi')\n")
    if manifest is not None:
        (directory / "arena-bot.toml").write_text(manifest)
    return directory


def test_a_full_manifest_is_read_and_runs_as_the_launcher_runs_python_bots(tmp_path):
    directory = bot(
        tmp_path,
        'name = "mybot"\ngame = "balloon"\nruntime = "python"\n'
        'command = ["src/bot.py", "--depth", "3"]\n',
        files=("src/bot.py",),
    )
    manifest = read_manifest(directory)
    assert manifest == Manifest("python", ("src/bot.py", "--depth", "3"), "mybot", ("balloon",))
    assert manifest.command_line() == "python src/bot.py --depth 3"
    argv = manifest.launch_command(directory)
    assert argv == [sys.executable, str(directory / "src" / "bot.py"), "--depth", "3"]
    # A directory registered by the organiser (arena bot add --dir) with this manifest runs the
    # same command, in its own directory.
    assert botcommand.resolve(str(directory)) == botcommand.BotCommand(tuple(argv), directory)
    assert botcommand.read_manifest(directory) == manifest  # either form may be registered


def test_games_may_be_a_list_and_every_optional_key_may_be_left_out(tmp_path):
    directory = bot(
        tmp_path, 'runtime = "python"\ncommand = ["bot.py"]\ngame = ["balloon", "boom"]'
    )
    assert read_manifest(directory).games == ("balloon", "boom")
    (directory / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["bot.py"]\n')
    assert read_manifest(directory) == Manifest("python", ("bot.py",))


def test_a_node_bot_runs_node_from_path_and_is_refused_where_there_is_none(tmp_path, monkeypatch):
    directory = bot(tmp_path, 'runtime = "node"\ncommand = ["bot.js"]\n', files=("bot.js",))
    if shutil.which("node") is not None:
        argv = read_manifest(directory).launch_command(directory)
        assert argv == ["node", str(directory / "bot.js")]
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(BadManifest, match="this server has no Node.js runtime"):
        read_manifest(directory)


@pytest.mark.parametrize(
    "text, said",
    [
        (None, "the bot has no arena-bot.toml at the top of its folder; create one"),
        ('runtime = "python"\ncommand = bot.py\n', r"not valid TOML: .*\(at line 2, column 11\)"),
        (
            'runtime = "python"\ncommand = ["bot.py"]\nentry = "x"\nversion = 2\n',
            "unknown keys: entry, version; the keys are name, game, runtime, command",
        ),
        ('command = ["bot.py"]\n', 'says no runtime; add one: runtime = "python"'),
        (
            'runtime = "java"\ncommand = ["bot.py"]\n',
            "runtime = 'java', which Arena does not know; the runtimes are python, node, cpp",
        ),
        ('runtime = 3\ncommand = ["bot.py"]\n', "runtime = 3, which Arena does not know"),
        ('runtime = "python"\n', "command is a list of non-empty strings"),
        ('runtime = "python"\ncommand = []\n', "command is a list of non-empty strings"),
        ('runtime = "python"\ncommand = ["bot.py", 3]\n', "command is a list of non-empty"),
        ('runtime = "python"\ncommand = "python3 bot.py"\n', "command is a list, the program"),
        ('runtime = "python"\ncommand = ["main.py"]\n', "the program 'main.py' is not in the bot"),
        ('runtime = "python"\ncommand = ["../bot.py"]\n', "'../bot.py' leaves the bot's folder"),
        ('runtime = "python"\ncommand = ["/bin/sh"]\n', "'/bin/sh' leaves the bot's folder"),
        ('runtime = "python"\ncommand = ["lib"]\n', "the program 'lib' is not in the bot"),
        (
            'runtime = "python"\ncommand = ["bot.py"]\ngame = "chess"\n',
            "there is no game 'chess' here; the games are balloon, boom",
        ),
        ('runtime = "python"\ncommand = ["bot.py"]\ngame = 1\n', "game is a game's name or a"),
        ('runtime = "python"\ncommand = ["bot.py"]\nname = 1\n', "name is text"),
    ],
)
def test_each_mistake_is_refused_saying_what_to_do(tmp_path, text, said):
    directory = bot(tmp_path, text, files=("bot.py", "lib/x.py"))
    with pytest.raises(BadManifest, match=said):
        read_manifest(directory)


def test_a_program_that_links_out_of_the_folder_is_refused(tmp_path):
    directory = bot(tmp_path, 'runtime = "python"\ncommand = ["bot.py"]\n', files=())
    (directory / "bot.py").symlink_to(tmp_path / "elsewhere.py")
    (tmp_path / "elsewhere.py").write_text("")
    with pytest.raises(BadManifest, match="'bot.py' leaves the bot's folder"):
        read_manifest(directory)


def test_the_registry_reads_an_uploaded_bots_mistakes_as_a_bad_manifest(tmp_path):
    directory = bot(tmp_path, 'runtime = "java"\ncommand = ["bot.py"]\n')
    with pytest.raises(botcommand.BadManifest, match="runtime = 'java', which Arena does not"):
        botcommand.read_manifest(directory)


def test_arguments_reach_the_bot_as_written_whatever_exists_on_the_server(tmp_path):
    directory = bot(tmp_path, None, files=("bot.py", "data/w.bin"))
    (tmp_path / "server.db").write_text("")  # beside the bot's folder, as the database is
    for probe in ("../server.db", "../no-such.db", "/etc/passwd", "/etc/no-such", "data/w.bin"):
        manifest = f'runtime = "python"\ncommand = ["bot.py", "{probe}", "--x={probe}"]\n'
        (directory / "arena-bot.toml").write_text(manifest)
        argv = read_manifest(directory).launch_command(directory)
        assert argv == [sys.executable, str(directory / "bot.py"), probe, f"--x={probe}"]
        # The launcher runs it so, in the bot's folder.
        resolved = botcommand.resolve(str(directory))
        assert resolved == botcommand.BotCommand(tuple(argv), directory)
    (directory / "bot").write_text("print('hi')\n")  # a script without a suffix
    (directory / "arena-bot.toml").write_text('runtime = "python"\ncommand = ["./bot"]\n')
    assert read_manifest(directory).launch_command(directory) == [
        sys.executable,
        str(directory / "bot"),
    ]


def test_a_program_name_too_long_or_an_argument_with_nul_is_refused(tmp_path):
    directory = bot(tmp_path, None)
    (directory / "arena-bot.toml").write_text(
        f'runtime = "python"\ncommand = ["{"é" * 200}.py"]\n'  # 403 bytes: no file can have it
    )
    with pytest.raises(BadManifest, match="is not in the bot's folder"):
        read_manifest(directory)
    (directory / "arena-bot.toml").write_text(
        'runtime = "python"\ncommand = ["bot.py", "a\\u0000b"]\n'
    )
    with pytest.raises(BadManifest, match="holds a NUL character"):
        read_manifest(directory)


def test_the_organisers_command_line_form_registers_but_is_no_upload(tmp_path):
    directory = bot(tmp_path, 'command = "python3 bot.py --fast"\n')
    manifest = botcommand.read_manifest(directory)
    assert manifest == Manifest(None, line="python3 bot.py --fast")
    assert manifest.command_line() == "python3 bot.py --fast"
    assert manifest.launch_command(directory) == [
        sys.executable,
        str(directory / "bot.py"),
        "--fast",
    ]
    with pytest.raises(BadManifest, match='says no runtime; add one: runtime = "python"'):
        read_manifest(directory)
