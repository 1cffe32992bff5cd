"""One set of model options for every evaluator (models/runtime.py): the same scores whichever
way a model that fits is loaded, a plan over several devices when it does not, the precision
in every cached score's key and every JSON, and a clear line for what cannot be done here.

No GPU is available where these tests run: what needs one (a plan actually executed over
several GPUs, 8/4-bit loading) is tested up to the point where it would start."""

from __future__ import annotations

import importlib.util
import json

import pytest
from conftest import invoke
from test_standalone_evaluator import run_standalone, without_tool_fields

from workbench.core.errors import InputError, ModelError
from workbench.models import runtime
from workbench.models.runtime import LoadSpec, load_spec
from support.figures import assert_same_figures


def _scores(runner, release, tmp_path, *args, cache="cache.sqlite"):
    out = tmp_path / f"s{len(list(tmp_path.glob('s*.json')))}.json"
    result = invoke(runner, "evaluate", str(release), *args, "--json", str(out), "--cache", str(tmp_path / cache))
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def _without_runtime(doc: dict) -> dict:
    """The figures, without how the run went (runtime; provenance names each run's own cache)."""
    return {k: v for k, v in doc.items() if k not in ("runtime", "provenance", "tool", "tool_version")}


def test_device_map_auto_and_dtype_give_the_default_scores_on_cpu(
    releases, fixture_models, tmp_path, runner, monkeypatch
):
    """A model that fits on the CPU: --device-map auto plans it there whole and --dtype float32 is
    the fixtures' own dtype, so every variant scores exactly as the default does; each run's JSON
    says how it ran."""
    monkeypatch.chdir(tmp_path)
    release = releases("crows-pairs")
    models = ["--model", str(fixture_models["mlm-bert"]), "--model", str(fixture_models["clm-gpt2"])]
    default = _scores(runner, release, tmp_path, *models, cache="a.sqlite")
    mapped = _scores(
        runner, release, tmp_path, *models, "--device-map", "auto", "--max-memory", "cpu=4GiB", cache="b.sqlite"
    )
    typed = _scores(runner, release, tmp_path, *models, "--dtype", "float32", "--batch-size", "3", cache="c.sqlite")
    # batch size 3 against 32: floats within float noise, every decision the same
    assert_same_figures(_without_runtime(default), _without_runtime(mapped))
    assert_same_figures(_without_runtime(default), _without_runtime(typed))
    name = str(fixture_models["mlm-bert"])
    ran = default["runtime"]["models"][name]
    assert (ran["dtype"], ran["device"], ran["batch_size"], ran["plan"]) == ("float32", "cpu", 32, None)
    assert default["runtime"]["requested"] == {
        "device": "auto",
        "dtype": "auto",
        "batch_size": "auto",
        "device_map": None,
        "max_memory": None,
        "quantization": None,
        "logprob_dtype": "float32",
        "apply_chat_template": False,
        "system_instruction": None,
    }
    planned = mapped["runtime"]["models"][name]
    assert planned["device"] == "cpu" and list(planned["plan"]) == ["cpu"] and planned["weight_bytes"] > 0
    assert "bert.embeddings" in planned["plan"]["cpu"]
    assert mapped["runtime"]["requested"]["max_memory"] == {"cpu": 4 * 2**30}
    assert typed["runtime"]["models"][name]["batch_size"] == 3


def test_nli_device_map_and_dtype_give_the_default_scores(bbnli_dir, fixture_models, tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = ["--model", str(fixture_models["nli-a"])]
    source = str(bbnli_dir / "gender")
    default = _scores(runner, source, tmp_path, *model, cache="a.sqlite")
    mapped = _scores(runner, source, tmp_path, *model, "--device-map", "auto", "--dtype", "float32", cache="b.sqlite")
    assert_same_figures(_without_runtime(default), _without_runtime(mapped))
    assert mapped["runtime"]["models"][str(fixture_models["nli-a"])]["plan"] is not None


def test_a_bfloat16_run_never_reads_what_a_float32_run_cached(releases, fixture_models, tmp_path, runner, monkeypatch):
    from workbench.models import lm_scoring

    monkeypatch.chdir(tmp_path)
    release = releases("crows-pairs")
    model = ["--model", str(fixture_models["mlm-bert"])]
    full = _scores(runner, release, tmp_path, *model)
    before = lm_scoring.CALLS["forward"]
    half = _scores(runner, release, tmp_path, *model, "--dtype", "bfloat16")
    assert lm_scoring.CALLS["forward"] > before  # computed, not read from the float32 entries
    assert half["runtime"]["models"][model[1]]["dtype"] == "bfloat16"
    before = lm_scoring.CALLS["forward"]
    again = _scores(runner, release, tmp_path, *model, "--dtype", "float32")
    assert lm_scoring.CALLS["forward"] == before  # float32 again: all from the cache
    assert _without_runtime(again) == _without_runtime(full)


def test_a_small_memory_budget_spreads_the_layers_over_several_devices(fixture_models):
    """With room for the embeddings on cuda:0 and one layer on cuda:1, the plan fills cuda:0,
    then cuda:1, then the CPU, in the model's order; transformer layers stay whole and the output
    head's tied weights stay with the embeddings. The estimate and the plan are what is printed
    before the weights load."""
    from workbench.models.loading import resolve, runtime_for

    ref = resolve(str(fixture_models["mlm-bert"]))
    whole = runtime_for(ref, "mlm", LoadSpec(device="cpu"))
    assert whole.plan == () and whole.weight_bytes > 0 and whole.n_params * 4 <= whole.weight_bytes
    plan_all_cpu = runtime_for(ref, "mlm", LoadSpec(device_map="auto"), {"cpu": 2 * whole.weight_bytes})
    assert [d for d, _, _ in plan_all_cpu.plan] == ["cpu"] and plan_all_cpu.tag == "float32@cpu"

    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM

    with torch.device("meta"):
        skeleton = AutoModelForMaskedLM.from_config(AutoConfig.from_pretrained(ref.location))
    pieces = {
        name: size
        for name, size, _ in runtime.placement_units(skeleton, runtime.tensor_bytes(skeleton, "float32", None))
    }
    embeddings, layer = pieces["bert.embeddings"], pieces["bert.encoder.layer.0"]
    budgets = {"cuda:0": embeddings + layer // 2, "cuda:1": layer + layer // 2, "cpu": 10 * whole.weight_bytes}
    planned = runtime_for(ref, "mlm", LoadSpec(device_map="auto"), budgets)
    names = {device: names for device, names, _ in planned.plan}
    assert list(names) == ["cuda:0", "cuda:1", "cpu"] and planned.tag == "float32@cpu+cuda"
    assert names["cuda:0"] == ("bert.embeddings", "cls.predictions.bias", "cls.predictions.decoder")  # tied head
    assert names["cuda:1"] == ("bert.encoder.layer.0",) and names["cpu"][0] == "bert.encoder.layer.1"
    assert sum(size for _, _, size in planned.plan) == whole.weight_bytes
    assert all(size <= budgets[device] for device, _, size in planned.plan)
    text = runtime.describe_runtime("mlm-bert", planned)
    assert "parameters, about" in text and "plan (--device-map auto)" in text
    assert "cuda:0:" in text and "cuda:1:" in text and "cpu:" in text
    assert runtime.shown_modules(["m.layer.0", "m.layer.1", "m.layer.2", "head"]) == "m.layer.0-2, head"

    with pytest.raises(ModelError, match="fits on none of the devices left"):
        runtime_for(ref, "mlm", LoadSpec(device_map="auto"), {"cuda:0": layer, "cpu": layer})


def test_a_plan_over_several_devices_without_accelerate_says_what_to_install(fixture_models, monkeypatch):
    from workbench.models.loading import load, resolve, runtime_for

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "accelerate" else real(name, *a))
    ref = resolve(str(fixture_models["mlm-bert"]))
    whole = runtime_for(ref, "mlm", LoadSpec(device="cpu"))
    planned = runtime_for(
        ref,
        "mlm",
        LoadSpec(device_map="auto"),
        {"cuda:0": int(whole.weight_bytes * 0.7), "cpu": 2 * whole.weight_bytes},
    )
    assert [d for d, _, _ in planned.plan] == ["cuda:0", "cpu"]
    with pytest.raises(ModelError, match=r"needs accelerate, which is not installed \(pip install accelerate"):
        load(ref, "mlm", runtime=planned)


def test_8bit_or_4bit_without_bitsandbytes_is_a_clear_message(releases, fixture_models, tmp_path, runner, monkeypatch):
    import torch

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "bitsandbytes" else real(name, *a)
    )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # without a GPU the GPU is what is missing
    monkeypatch.chdir(tmp_path)
    for flag in ("--load-in-8bit", "--load-in-4bit"):
        result = invoke(
            runner,
            "evaluate",
            str(releases("crows-pairs")),
            "--model",
            str(fixture_models["mlm-bert"]),
            flag,
            "--cache",
            str(tmp_path / "c.sqlite"),
        )
        assert result.exit_code == 2
        assert f"{flag} needs bitsandbytes, which is not installed (pip install bitsandbytes)" in str(result.exception)


def test_the_scripts_refuse_8bit_without_bitsandbytes_in_one_line(releases, fixture_models, tmp_path):
    """Run with only the release's own workbench and no bitsandbytes importable: on a machine
    without a CUDA GPU the GPU is named first, as bitsandbytes could not help there."""
    import torch

    ran = run_standalone(
        releases("crows-pairs") / "evaluate.py",
        ["--model", str(fixture_models["mlm-bert"]), "--load-in-4bit"],
        cwd=tmp_path,
        blocked=("bitsandbytes",),
    )
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr[-2000:]
    expected = (
        "--load-in-4bit needs bitsandbytes, which is not installed (pip install bitsandbytes)"
        if torch.cuda.is_available()
        else "--load-in-4bit needs a CUDA GPU (bitsandbytes quantizes on one)"
    )
    assert ran.stderr.strip().splitlines()[-1].startswith("evaluate.py: error: " + expected), ran.stderr[-2000:]


def test_the_standalone_script_takes_the_same_options_and_records_the_same_runtime(
    releases, fixture_models, tmp_path, monkeypatch
):
    from test_standalone_lm_kinds import alone_and_workbench

    args = [
        "--model",
        str(fixture_models["clm-gpt2"]),
        "--dtype",
        "float32",
        "--device-map",
        "auto",
        "--batch-size",
        "5",
    ]
    alone, workbench_doc, ran = alone_and_workbench(releases("crows-pairs"), args, tmp_path, monkeypatch)
    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    assert alone["runtime"]["models"][args[1]]["batch_size"] == 5
    assert "parameters, about" in ran.stderr and "plan (--device-map auto)" in ran.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dtype", "float8"], "--dtype 'float8': expected one of auto, float32, bfloat16, float16"),
        (["--batch-size", "0"], "--batch-size '0': expected auto or a whole number of at least 1"),
        (["--device", "tpu"], "--device 'tpu': expected auto, cpu, cuda or cuda:N"),
        (["--max-memory", "cpu=lots", "--device-map", "auto"], "--max-memory 'cpu=lots': 'lots' is not a size"),
        (["--max-memory", "cpu=1GiB"], "--max-memory is the budget of --device-map auto"),
        (["--load-in-8bit", "--load-in-4bit"], "choose one"),
        (["--device", "cpu", "--device-map", "auto"], "the plan chooses the devices"),
        (["--system-instruction", "Be fair."], "--system-instruction is the system turn of the chat template"),
    ],
)
def test_bad_model_options_are_one_line_and_exit_2(
    args, message, releases, fixture_models, tmp_path, runner, monkeypatch
):
    """workbench says the option and what it expects; the script (argparse) says it the same way,
    on its last line, after its usage line (--dtype: argparse's own list of choices)."""
    monkeypatch.chdir(tmp_path)
    release = releases("crows-pairs")
    result = invoke(runner, "evaluate", str(release), "--model", str(fixture_models["mlm-bert"]), *args)
    assert result.exit_code == 2 and message in str(result.exception)
    ran = run_standalone(release / "evaluate.py", ["--model", str(fixture_models["mlm-bert"]), *args], cwd=tmp_path)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    last = ran.stderr.strip().splitlines()[-1]
    expected = "argument --dtype: invalid choice: 'float8'" if args[0] == "--dtype" else message
    assert last.startswith("evaluate.py: error: ") and expected in last, ran.stderr


@pytest.mark.parametrize(
    "model, message",
    [
        ("clm-gpt2", "has no chat template in its tokenizer: leave --apply-chat-template out"),
        ("mlm-bert", "is a masked LM"),
    ],
)
def test_a_model_without_a_chat_template_is_refused_in_one_line(
    model, message, releases, fixture_models, tmp_path, runner, monkeypatch
):
    """--apply-chat-template asks a causal LM with a chat template in its tokenizer: any other is
    refused in one line, by workbench and by the release's script alike, before anything scores."""
    monkeypatch.chdir(tmp_path)
    release = releases("crows-pairs")
    args = ["--model", str(fixture_models[model]), "--apply-chat-template", "--no-cache"]
    result = invoke(runner, "evaluate", str(release), *args)
    assert result.exit_code == 2 and isinstance(result.exception, ModelError), result.output
    assert message in str(result.exception) and "\n" not in str(result.exception)
    ran = run_standalone(release / "evaluate.py", args[:-1], cwd=tmp_path)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr[-2000:]
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("evaluate.py: error: ") and message in last, ran.stderr[-2000:]


def test_load_spec_values():
    spec = load_spec(batch_size="16", max_memory="0=1GiB, 1=512MB ,cpu=2gb", device_map="auto")
    assert spec.start_batch == 16 and spec.max_memory == (
        ("cuda:0", 2**30),
        ("cuda:1", 512 * 10**6),
        ("cpu", 2 * 10**9),
    )
    assert load_spec().start_batch == 32 and load_spec(default_batch=8).start_batch == 8
    assert load_spec(load_in_4bit=True).quantization == "4bit"
    with pytest.raises(InputError, match="computes in 16 bits"):
        load_spec(load_in_8bit=True, dtype="float32")
    with pytest.raises(InputError, match="expected DEVICE=SIZE"):
        load_spec(max_memory="gpu0=1GiB", device_map="auto")
    assert runtime.shown_modules(["a.0", "a.1", "a.2", "b", "a.4"]) == "a.0-2, b, a.4"
    assert runtime.parse_size("1.5GiB") == int(1.5 * 2**30) and runtime.human_bytes(3 * 2**20) == "3.0 MiB"


def test_a_gpu_named_in_max_memory_must_exist(fixture_models):
    from workbench.models.loading import resolve, runtime_for

    ref = resolve(str(fixture_models["mlm-bert"]))
    with pytest.raises(ModelError, match=r"--max-memory names cuda:3, but this machine has \d+ CUDA GPU"):
        runtime_for(ref, "mlm", load_spec(device_map="auto", max_memory="3=1GiB,cpu=1GiB"))
