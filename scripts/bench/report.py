#!/usr/bin/env python3
"""Print scripts/bench-codegen.sh's markdown report.

    report.py META RESULTS SIZES COMMANDS LOADS [COMPILE]

META: key=value lines (`cases=` lists the cases, `case_<case>=` labels each). RESULTS: case,
tool, rep, wall_us, max_rss_kb, user_ms, sys_ms; tool is `kc:all`,
`kc:<generator>` or a Go binary; rep 0 is the warm-up and is left out. SIZES: case, set
(rust-all, rust-core, rust-watch, go-core, go-watch; core = deepcopy + register + client, watch =
core + lister + informer), files, lines, bytes. COMMANDS: case, tool, command line (as run for
rep 1). LOADS: case, rep, 1-minute load average at the start of the rep, seconds waited for it.
COMPILE (optional, scripts/bench/compile_cost.py): variant, kinds, build wall s, build CPU s,
rebuild-after-an-edit wall s.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

GO_CORE = ["deepcopy-gen", "register-gen", "client-gen"]
GO_WATCH = GO_CORE + ["lister-gen", "informer-gen"]
KC_CORE = ["kc:deepcopy", "kc:register", "kc:client"]
KC_WATCH = KC_CORE + ["kc:lister", "kc:informer"]


def read_tsv(path: str) -> list[list[str]]:
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def fmt_time(us: float) -> str:
    if us < 1_000_000:
        return f"{us / 1000:.1f} ms"
    return f"{us / 1_000_000:.2f} s"


def fmt_cpu(ms: float) -> str:
    return "< 10 ms" if ms == 0 else fmt_time(ms * 1000)


def fmt_rss(kb: float) -> str:
    return f"{kb / 1024:.1f} MiB"


def fmt_ratio(x: float) -> str:
    return f"{x:,.0f}×" if x >= 10 else f"{x:.1f}×"


def main() -> None:
    meta_path, results_path, sizes_path, commands_path, loads_path = sys.argv[1:6]
    compile_path = sys.argv[6] if len(sys.argv) > 6 else None
    meta = dict(line.split("=", 1) for line in open(meta_path).read().splitlines() if "=" in line)
    cases = meta["cases"].split()

    # runs[case][tool][rep] = (wall_us, rss_kb, cpu_ms, user_ms, sys_ms)
    runs: dict[str, dict[str, dict[int, tuple[int, int, int, int, int]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for case, tool, rep, wall, rss, user, sys_ms in read_tsv(results_path):
        if int(rep) > 0:
            runs[case][tool][int(rep)] = (
                int(wall), int(rss), int(user) + int(sys_ms), int(user), int(sys_ms)
            )
    sizes = {(c, s): (int(f), int(l), int(b)) for c, s, f, l, b in read_tsv(sizes_path)}
    commands = read_tsv(commands_path)
    loads = [(float(l), int(w)) for c, r, l, w in read_tsv(loads_path) if int(r) > 0]

    def have(case: str, tools: list[str]) -> bool:
        return all(t in runs[case] for t in tools)

    def combined(case: str, tools: list[str]) -> tuple[list[int], float, float]:
        """Per rep: wall and CPU summed over the processes, RSS the max; then median over reps."""
        reps = sorted(runs[case][tools[0]])
        walls = [sum(runs[case][t][r][0] for t in tools) for r in reps]
        rss = [max(runs[case][t][r][1] for t in tools) for r in reps]
        cpu = [sum(runs[case][t][r][2] for t in tools) for r in reps]
        return walls, statistics.median(rss), statistics.median(cpu)

    def wall_cell(walls: list[int]) -> str:
        med = fmt_time(statistics.median(walls))
        if len(walls) == 1:
            return med
        return f"**{med}** ({fmt_time(min(walls))}–{fmt_time(max(walls))})"

    def size_cells(case: str, set_: str) -> str:
        if (case, set_) not in sizes:
            return " | "
        files, lines, size = sizes[(case, set_)]
        return f"{files:,} | {lines:,} ({size / 1024:,.0f} KiB)"

    def user_sys(case: str, tools: list[str]) -> tuple[float, float]:
        """Median over reps of user and of system CPU, summed over the processes (ms)."""
        reps = sorted(runs[case][tools[0]])
        user = [sum(runs[case][t][r][3] for t in tools) for r in reps]
        sys_ = [sum(runs[case][t][r][4] for t in tools) for r in reps]
        return statistics.median(user), statistics.median(sys_)

    skip_go = meta.get("skip_go") == "1"
    labels = {c: meta.get(f"case_{c}", c) for c in cases}
    out: list[str] = []
    p = out.append
    p("## kube-codegen vs Go code-generator\n")
    load_line = (
        f"- Machine: `nproc` = {meta['nproc']} ({meta['cpu']}); load average (1/5/15 min) "
        f"before {meta['load_before']}, after {meta['load_after']}"
    )
    if loads:
        load_line += (
            f"; 1-min load at the start of each timed run "
            f"{min(l for l, _ in loads):.2f}–{max(l for l, _ in loads):.2f}"
        )
    if meta.get("wait_load"):
        load_line += (
            f" (runs waited for it to drop below {meta['wait_load']}: "
            f"{sum(w for _, w in loads)} s in all)"
        )
    p(load_line + ".")
    p(f"- kube-codegen {meta['kube_codegen']} ({meta['kc_origin']}, rustc {meta['rustc']}): "
      "`kube-codegen all` (one process), and one process per generator subcommand.")
    if not skip_go:
        p(f"- Go: k8s.io/code-generator {meta['go_codegen']} built with {meta['go_toolchain']}; "
          f"input modules require k8s.io/apimachinery and k8s.io/client-go {meta['go_codegen']}; "
          "one process per generator, as `kube_codegen.sh` runs them.")
    p("- Inputs: the crddemo example (1 kind, `Mydemo`) and synthetic trees ("
      + "; ".join(labels[c] for c in cases if c != "crddemo")
      + "; version v1; each kind with Spec, Status and List types, `+genclient`, runtime.Object; "
      "every 10th cluster-scoped), written alike in Rust and Go by `scripts/bench/synth.py`.")
    p(f"- Median of {meta['reps']} timed run(s) (min–max in brackets) after one untimed warm-up "
      "run of each tool; every run works in a directory of its own, a copy of the input that no "
      "run used before. Wall: bash `EPOCHREALTIME` around `/usr/bin/time -v`; user and system "
      "CPU (10 ms resolution) and max RSS: `/usr/bin/time -v`. For several processes, wall and "
      "CPU are the sums per run and RSS the largest. Output: the files a run added.")
    p("")
    p("### Summary: `kube-codegen all` beside Go's five generators\n")
    p("| input | tool | files | bytes | wall | user | sys | max RSS | Go ÷ kube-codegen (wall) |")
    p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        if "kc:all" not in runs[case]:
            continue
        kw, krss, _ = combined(case, ["kc:all"])
        ku, ks = user_sys(case, ["kc:all"])
        files, _, size = sizes.get((case, "rust-all"), (0, 0, 0))
        p(f"| {labels[case]} | kube-codegen `all` | {files:,} | {size / 1e6:.1f} MB | "
          f"{fmt_time(statistics.median(kw))} | {fmt_cpu(ku)} | {fmt_cpu(ks)} | {fmt_rss(krss)} | |")
        if not skip_go and have(case, GO_WATCH):
            gw, grss, _ = combined(case, GO_WATCH)
            gu, gs = user_sys(case, GO_WATCH)
            files, _, size = sizes.get((case, "go-watch"), (0, 0, 0))
            p(f"| {labels[case]} | Go, 5 generators | {files:,} | {size / 1e6:.1f} MB | "
              f"{fmt_time(statistics.median(gw))} | {fmt_cpu(gu)} | {fmt_cpu(gs)} | "
              f"{fmt_rss(grss)} | {fmt_ratio(statistics.median(gw) / statistics.median(kw))} |")
    p("")
    p("### Details\n")
    p("| input | tool | generators | processes | wall | CPU | max RSS | files | lines | "
      "wall ÷ kube-codegen `all` | Go ÷ kube-codegen, same generators (wall / CPU) |")
    p("| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")

    def names(tools: list[str]) -> str:
        return ", ".join(
            "client (+ fake)" if t == "client-gen" else t.removeprefix("kc:").removesuffix("-gen")
            for t in tools
        )

    for case in cases:
        if case not in runs:
            continue
        label = labels[case]
        all_walls, all_rss, all_cpu = combined(case, ["kc:all"])
        all_med = statistics.median(all_walls)
        gens = meta.get(f"gens_{case}", "").replace(",", ", ")
        p(f"| {label} | kube-codegen `all` | {gens} | 1 | {wall_cell(all_walls)} | "
          f"{fmt_cpu(all_cpu)} | {fmt_rss(all_rss)} | {size_cells(case, 'rust-all')} | 1× | |")
        rows = [
            ("kube-codegen deepcopy + register + client", KC_CORE, "rust-core", None),
            ("kube-codegen, the above + lister + informer", KC_WATCH, "rust-watch", None),
        ]
        if not skip_go:
            rows += [
                ("Go deepcopy-gen + register-gen + client-gen", GO_CORE, "go-core", KC_CORE),
                ("Go, the above + lister-gen + informer-gen", GO_WATCH, "go-watch", KC_WATCH),
            ]
        for name, tools, set_, peer in rows:
            if not have(case, tools):
                continue
            walls, rss, cpu = combined(case, tools)
            med = statistics.median(walls)
            same = ""
            if peer and have(case, peer):
                pw, _, pc = combined(case, peer)
                same = fmt_ratio(med / statistics.median(pw))
                if pc > 0:
                    same += f" / {fmt_ratio(cpu / pc)}"
            p(f"| {label} | {name} | {names(tools)} | {len(tools)} | {wall_cell(walls)} | "
              f"{fmt_cpu(cpu)} | {fmt_rss(rss)} | {size_cells(case, set_)} | "
              f"{fmt_ratio(med / all_med)} | {same} |")

    p("")
    p("Per generator (median; one process each):\n")
    if skip_go:
        p("| input | generator | kube-codegen wall | CPU | max RSS |")
        p("| --- | --- | ---: | ---: | ---: |")
    else:
        p("| input | generator | kube-codegen wall | CPU | max RSS | Go wall | CPU | max RSS | "
          "Go ÷ kube-codegen (wall) |")
        p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case in cases:
        for kt, gt in zip(KC_WATCH, GO_WATCH):
            cells = []
            kw = None
            if kt in runs[case]:
                w, rss, cpu = combined(case, [kt])
                kw = statistics.median(w)
                cells += [fmt_time(kw), fmt_cpu(cpu), fmt_rss(rss)]
            else:
                cells += ["—", "—", "—"]
            if not skip_go:
                if gt in runs[case]:
                    w, rss, cpu = combined(case, [gt])
                    gw = statistics.median(w)
                    cells += [fmt_time(gw), fmt_cpu(cpu), fmt_rss(rss),
                              fmt_ratio(gw / kw) if kw else "—"]
                else:
                    cells += ["—"] * 4
            if any(c != "—" for c in cells):
                p(f"| {labels[case]} | {kt.removeprefix('kc:')} | " + " | ".join(cells) + " |")

    if not skip_go:
        built = meta.get("go_built", "").split()
        p("")
        p("The Go input packages type-check (`go build ./pkg/apis/...`) before the generators "
          "and again with deepcopy-gen's and register-gen's output" + (
              f"; `go build ./...` of the whole Go output passed for: {', '.join(built)}."
              if built else "; the rest of the Go output was not compiled (`--check-build`)."))
    if meta.get("kc_watch") != "1":
        p("")
        p("This kube-codegen has no lister/informer subcommands: those rows are Go only.")

    compile_rows = read_tsv(compile_path) if compile_path else []
    if compile_rows:
        p("")
        p("### Compile cost: `cargo build` (debug) of the crate alone, dependencies built\n")
        p("`ours`: the types plus what kube-codegen's deepcopy, register, client, lister, "
          "informer and crd generators write (no apply configurations, no fake clientset); "
          "`ours+use`: that plus, per kind, a function that gets an object with the typed client "
          "and lists from the shared informer; `kube`: the same types with kube-derive's "
          "`#[derive(CustomResource, JsonSchema)]`, plus, per kind, a function that gets an "
          "object through `kube::Api` and runs a reflector over a watcher. Rebuild: after adding "
          "one field to one kind's spec (ours: generator rerun first). `scripts/bench/compile_cost.py`.\n")
        p("| kinds | variant | build (wall) | build CPU | per kind (wall) | rebuild after an edit (wall) |")
        p("| ---: | --- | ---: | ---: | ---: | ---: |")
        for variant, n, wall, cpu, rewall in compile_rows:
            p(f"| {int(n):,} | {variant} | {float(wall):.1f} s | {float(cpu):.1f} s | "
              f"{float(wall) / int(n) * 1000:.0f} ms | {float(rewall):.1f} s |")
    p("")
    p("<details><summary>Commands (first timed run; <code>$TMP</code> is the temporary "
      "directory)</summary>\n")
    p("```sh")
    for case, tool, line in commands:
        p(f"# {case}: {tool.replace('kc:', 'kube-codegen ')}")
        p(line)
    p("```\n</details>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
