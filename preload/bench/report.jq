# The markdown report of the PostgreSQL scenario of `make bench`
# (scripts/bench.sh --postgres), from the guest driver's records
# (image/tests/postgres/bench.sh), slurped: jq -r -s -f report.jq
# --arg command --arg kernel --arg qemu --arg date --arg host --arg verdict
# --arg plots (lines "FILE:CAPTION") RECORDS.jsonl
def n0: if type == "number" then (round | tostring) else "-" end;
def n1: if type == "number" then ((. * 10 | round) / 10 | tostring) else "-" end;
def added: if .pte_kb_mean != null and .idle_pte_kb != null then .pte_kb_mean - .idle_pte_kb else null end;
# $a / $b, "-" where either is missing, "inf" over 0
def ratio($a; $b): if ($a | type) != "number" or ($b | type) != "number" then "-"
	elif $b <= 0 then (if $a <= 0 then "1" else "inf" end)
	else ($a / $b | if . >= 10 then n0 elif . >= 0.1 then (. * 100 | round / 100 | tostring) else (. * 1000 | round / 1000 | tostring) end) end;
def ways: ["plain", "mshare", "huge"];

(map(select(.type == "point" and .status == "ok"))) as $ok
| (map(select(.type == "point" and .status != "ok"))) as $bad
| ($ok | map(.clients) | unique) as $counts
| ($ok[0] // {}) as $p0
| "# PostgreSQL on mshare regions: page tables, faults, connections, tps",
  "",
  "PostgreSQL 15 from Debian, unmodified, shared_buffers \($p0.shared_buffers_mib // "-") MiB; each backend reads tables covering \($p0.touched_mib // "-") MiB of it (after a warm-up read that brings them into shared_buffers), then reports its own `VmPTE` and minor faults from `/proc/self`. **Page-table bytes and faults are exact; times and tps are TCG emulation figures** (2 vCPUs, no KVM): compare the ways with each other, not with hardware.",
  "",
  "- plain: the postmaster's `mmap(MAP_SHARED|MAP_ANONYMOUS)`, 4 KiB pages; every backend maps the pool in its own page tables.",
  "- mshare: the same server under `mshare-run --strict`: the mapping is a window onto a region the postmaster owns; backends inherit it and share its page tables.",
  "- huge: `huge_pages=on`, 2 MiB hugetlbfs pages reserved for it.",
  "",
  "## Each backend",
  "",
  "| clients | way | VmPTE a backend | added by the pool | page tables of all backends | minor faults a backend | connect all | tps, select-only |",
  "|---:|---|---:|---:|---:|---:|---:|---:|",
  ($counts[] as $c | ways[] as $w | $ok[] | select(.clients == $c and .way == $w)
   | "| \($c) | \($w) | \(.pte_kb_mean | n1) kB | \(added | n1) kB | \((.pte_kb_sum // 0) / 1024 | n1) MiB | \(.minflt_mean | n0) | \(.connect_all_ms | n0) ms | \(.tps_select_only | n0) |"),
  "",
  "## Ratios, plain / mshare and huge_pages / mshare",
  "",
  "Above 1: mshare needs less (tps: mshare / plain, above 1 is faster). \"inf\": mshare adds nothing.",
  "",
  "| clients | pool page tables plain/mshare | faults plain/mshare | connect-all plain/mshare | tps mshare/plain | pool page tables huge/mshare | faults huge/mshare |",
  "|---:|---:|---:|---:|---:|---:|---:|",
  ($counts[] as $c
   | ($ok | map(select(.clients == $c)) | map({key: .way, value: .}) | from_entries) as $by
   | select($by.mshare != null)
   | "| \($c) | \(ratio($by.plain | if . then added else null end; $by.mshare | added)) | \(ratio($by.plain.minflt_mean; $by.mshare.minflt_mean)) | \(ratio($by.plain.connect_all_ms; $by.mshare.connect_all_ms)) | \(ratio($by.mshare.tps_select_only; $by.plain.tps_select_only)) | \(ratio($by.huge | if . then added else null end; $by.mshare | added)) | \(ratio($by.huge.minflt_mean; $by.mshare.minflt_mean)) |"),
  "",
  (if ($bad | length) > 0 then "**Points that failed:** \($bad | map("\(.way) at \(.clients // "-") clients") | join(", "))\n" else empty end),
  (map(select(.type == "skip")) | .[] | "Not measured: \(.way): \(.why).\n"),
  (if $plots != "" then ($plots | split("\n") | map(select(. != "")) | .[] | split(":") | "![\(.[1:] | join(":"))](\(.[0]))\n") else empty end),
  "## How this was made",
  "",
  "- Command: `\($command)`",
  "- Kernel: \($kernel); \($qemu)",
  "- Date: \($date); host: \($host)",
  "- Guest check: \($verdict)",
  (if any(.[]; .type == "end" and .complete) then empty else "- **The driver did not finish: the results are partial.**" end)
